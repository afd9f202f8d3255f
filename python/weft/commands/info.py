"""`weft info`: what weft runs on here — UCX transports, MPI, hwloc topology.

The facts come from the C program bench/weft_sysinfo of the build, which
prints them as one JSON document on standard output.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Column

from weft import WeftError, __version__
from weft.core import report, runner

SYSINFO = "weft_sysinfo"


def sysinfo() -> dict[str, Any]:
    """Run weft_sysinfo and parse what it prints."""
    proc = runner.run_program([str(runner.executable(SYSINFO))], timeout=60)
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise WeftError(
            f"weft_sysinfo printed invalid JSON ({exc}); its output began with:\n{proc.stdout[:500]}"
        ) from None
    if not isinstance(info, dict):
        raise WeftError("weft_sysinfo printed JSON that is not an object")
    return info


def version_text() -> str:
    """What `weft --version` prints: the toolkit's version, then the
    library's and its MPI as weft_sysinfo reports them, or why they are
    unknown."""
    lines = [f"weft toolkit {__version__}"]
    try:
        found = sysinfo()
    except WeftError as exc:
        first = str(exc).splitlines()[0]
        lines.append(f"weft library: not found ({first})")
    else:
        library = str(found.get("mpi", {}).get("library", "unknown MPI")).strip().splitlines()[0]
        lines.append(f"weft library {found.get('weft_version', 'unknown')}, MPI: {library}")
    return "\n".join(lines)


def render(info: dict[str, Any]) -> RenderableType:
    """Tables for the UCX, MPI and hwloc sections of a sysinfo document;
    a section the document lacks is reported as unavailable."""
    ucx = info.get("ucx", {})
    mpi = info.get("mpi", {})
    hwloc = info.get("hwloc", {})
    missing = report.MISSING

    transports = report.table(
        f"UCX {ucx.get('version', missing)} — transports",
        ["component", "transport", "device"],
        [
            [t.get("component", missing), t.get("transport", missing), t.get("device", missing)]
            for t in ucx.get("transports", [])
        ],
        caption=None if ucx else "UCX information unavailable",
    )
    mpi_table = report.table(
        "MPI",
        ["library", Column("standard", justify="right")],
        [[mpi.get("library", missing).strip(), mpi.get("standard", missing)]],
    )
    counts = ", ".join(
        f"{hwloc[key]} {label}"
        for key, label in (("cores", "cores"), ("pus", "PUs"), ("numa_nodes", "NUMA nodes"))
        if key in hwloc
    )
    topology = (
        f"[bold]hwloc {hwloc.get('version', missing)}[/bold]: {hwloc.get('summary', missing)}\n{counts}"
        if hwloc
        else "[bold]hwloc[/bold]: information unavailable"
    )
    levels = report.table(
        "topology levels",
        [Column("depth", justify="right"), "type", Column("count", justify="right"), "attributes"],
        [
            [str(level.get("depth", missing)), level.get("type", missing),
             str(level.get("count", missing)), level.get("attr") or ""]
            for level in hwloc.get("levels", [])
        ],
    )
    title = f"[bold]weft {info.get('weft_version', missing)}[/bold] on this machine"
    return Group(title, "", transports, "", mpi_table, "", topology, levels)


def command(args: argparse.Namespace) -> None:
    info = sysinfo()
    if args.json:
        report.print_json(info)
    else:
        report.console.print(render(info))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "info",
        help="show UCX transports, MPI library and hwloc topology seen by weft",
        description="Show what weft runs on here: UCX version and transports, "
        "MPI library and standard, and the hwloc topology (runs bench/weft_sysinfo of the build).",
    )
    parser.add_argument("--json", action="store_true", help="print weft_sysinfo's raw JSON")
    parser.set_defaults(func=command)
