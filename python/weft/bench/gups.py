"""`weft bench gups`: RandomAccess (HPCC's GUPS) with weft beside OpenSHMEM and MPI RMA.

Runs weft_bench_gups (bench/gups.c) on the node's direct path and over
UCX's shared memory (WEFT_SHM=0), and, unless --no-peers, OpenSHMEM's
version (bench/peers/shmem_gups.c, built with oshcc, run with oshrun), in
cycles that alternate them.  Each program verifies its updates as HPCC
does (undo them, count the words that differ; at most 1 % may) and says
so per variant; the table and the ratios are of the medians of every
round of every cycle.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.core import report, results, runner

BENCHMARK = "gups"
BENCH = "weft_bench_gups"
PEER = "weft_shmem_gups"
PATH_ENV: dict[str, dict[str, str]] = {"direct": {}, "shm": {"WEFT_SHM": "0"}}
PATH_LABELS = {"direct": "on node (direct path)", "shm": "UCX shared memory (WEFT_SHM=0)"}
IMPL_LABELS = {
    "weft-xor": "weft atomic xor (weft_atomic_nbi, WEFT_AOP_XOR)",
    "weft-add": "weft atomic add (weft_atomic_add_nbi)",
    "weft-direct-xor": "weft direct xor (weft_ptr + atomic xor)",
    "weft-getput": "weft get + put (not atomic)",
    "openshmem-xor": "OpenSHMEM shmem_ulong_atomic_xor",
    "mpi-acc": "MPI_Accumulate(MPI_BXOR)",
    "mpi-fop": "MPI_Fetch_and_op(MPI_BXOR)",
}
# weft's figure beside its peers is an atomic of HPCC's operation, xor, as
# theirs are: the add stays in the table only.
WEFT_ATOMICS = ("weft-xor", "weft-direct-xor")
# weft's goals against its peers (issue 24): on the node 1.5x OpenSHMEM and
# 3x MPI RMA, over UCX's shared memory 1x OpenSHMEM.
GOALS = {("direct", "openshmem-xor"): 1.5, ("direct", "mpi-acc"): 3.0, ("shm", "openshmem-xor"): 1.0}
MAX_LOG2 = 28


def program_args(log2: int, updates: int | None, window: int, rounds: int) -> list[str]:
    """The arguments both programs take (each adds --json)."""
    argv = ["--log2-table", str(log2), "--window", str(window), "--rounds", str(rounds)]
    return argv + (["--updates", str(updates)] if updates is not None else [])


def entries_of(data: Any, what: str) -> list[dict[str, Any]]:
    """The results of one program's JSON, checked."""
    entries = data.get("results") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise WeftError(f"{what} wrote no results")
    for entry in entries:
        if not isinstance(entry, dict) or not {"impl", "rounds", "error_rate", "verified"} <= set(entry):
            raise WeftError(f"{what}: a result without impl, rounds, error_rate or verified: {entry!r}")
    return entries


def measure_weft(path: str, nranks: int, argv: list[str], timeout: float) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="weft-gups-") as tmp:
        output = Path(tmp) / "gups.json"
        runner.run_mpi(nranks, [str(runner.executable(BENCH)), *argv, "--json", str(output)],
                       env=PATH_ENV[path], timeout=timeout)
        data = results.read_json(output)
    return [{**entry, "path": path} for entry in entries_of(data, BENCH)]


def measure_shmem(nranks: int, argv: list[str], timeout: float) -> list[dict[str, Any]]:
    """OpenSHMEM's figures.  Its exit status is not trusted: Open MPI 4.1's
    shmem_finalize crashes on some machines after the results are written,
    so the results file decides."""
    if shutil.which("oshrun") is None:
        raise WeftError("`oshrun` is not on PATH: install openmpi-bin or run with --no-peers")
    try:
        program = runner.executable(PEER)
    except WeftError:
        raise WeftError(f"{PEER} was not built: install Open MPI's OpenSHMEM (oshcc, in openmpi-bin), "
                        "reconfigure, or run with --no-peers") from None
    env = {**os.environ}
    if os.geteuid() == 0:
        env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    with tempfile.TemporaryDirectory(prefix="weft-gups-") as tmp:
        output = Path(tmp) / "shmem.json"
        command = ["oshrun", "-np", str(nranks), "--oversubscribe", str(program), *argv, "--json", str(output)]
        try:
            proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise WeftError(f"{PEER} timed out after {timeout:g} s") from None
        if not output.is_file():
            tail = "\n".join((proc.stderr or "").strip().splitlines()[-10:])
            raise WeftError(f"{PEER} wrote no results (exit status {proc.returncode})\n{tail}")
        data = results.read_json(output)
    # OpenSHMEM reaches the other PE through UCX whatever weft's path
    return [{**entry, "path": path} for entry in entries_of(data, PEER) for path in PATH_ENV]


def merge(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (path, impl): every round of every cycle, their median,
    the worst error rate, and whether every run verified."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        key = (str(entry["path"]), str(entry["impl"]))
        row = merged.setdefault(key, {"path": key[0], "impl": key[1], "op": entry.get("op", "xor"),
                                      "rounds": [], "error_rate": 0.0, "verified": True})
        row["rounds"] += [float(v) for v in entry["rounds"]]
        row["error_rate"] = max(row["error_rate"], float(entry["error_rate"]))
        row["verified"] = row["verified"] and bool(entry["verified"])
    for row in merged.values():
        row["gups"] = statistics.median(row["rounds"]) if row["rounds"] else None
    return sorted(merged.values(), key=lambda r: (list(PATH_ENV).index(r["path"]) if r["path"] in PATH_ENV else 9,
                                                 list(IMPL_LABELS).index(r["impl"]) if r["impl"] in IMPL_LABELS else 99))


def best_weft(rows: list[dict[str, Any]], path: str) -> dict[str, Any] | None:
    """weft's fastest verified atomic variant on a path."""
    candidates = [r for r in rows if r["path"] == path and r["impl"] in WEFT_ATOMICS and r["verified"] and r["gups"]]
    return max(candidates, key=lambda r: r["gups"], default=None)


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """weft's best atomic variant over each peer, per path, with the goal."""
    out = []
    for path in PATH_ENV:
        weft = best_weft(rows, path)
        for peer in ("openshmem-xor", "mpi-acc", "mpi-fop"):
            other = next((r for r in rows if r["path"] == path and r["impl"] == peer), None)
            if weft is None or other is None or not other["gups"]:
                continue
            out.append({"path": path, "weft": weft["impl"], "peer": peer, "ratio": weft["gups"] / other["gups"],
                        "goal": GOALS.get((path, peer))})
    return out


def render(document: dict[str, Any]) -> Group:
    rows = document["rows"]
    table = report.table(
        f"GUPS: 2^{document['log2_table']} words per rank, {document['updates_per_rank']:,} updates per rank, "
        f"{document['ranks']} ranks, completion every {document['window']}",
        [Column("variant"), Column("op"), *(Column(f"{PATH_LABELS[p]} GUP/s", justify="right") for p in PATH_ENV),
         Column("worst error rate", justify="right"), Column("verified")],
        [],
    )
    for impl in dict.fromkeys(r["impl"] for r in rows):
        mine = {r["path"]: r for r in rows if r["impl"] == impl}
        some = next(iter(mine.values()))
        table.add_row(IMPL_LABELS.get(impl, impl), some["op"],
                      *(report.fmt_number(mine[p]["gups"] * 1e3) + " M" if p in mine and mine[p]["gups"]
                        else report.MISSING for p in PATH_ENV),
                      f"{max(r['error_rate'] for r in mine.values()):.2%}",
                      "yes" if all(r["verified"] for r in mine.values()) else "NO")
    against = report.table(
        "weft's fastest atomic variant over its peers (> 1: weft is faster)",
        [Column("path"), Column("weft variant"), Column("peer"), Column("ratio", justify="right"),
         Column("goal", justify="right")],
        [[PATH_LABELS[r["path"]], r["weft"], IMPL_LABELS.get(r["peer"], r["peer"]),
          Text(f"{r['ratio']:.2f}x", style="green" if r["goal"] and r["ratio"] >= r["goal"] else
               "red" if r["goal"] else ""),
          f"≥ {r['goal']:g}" if r["goal"] else ""] for r in document["ratios"]],
    )
    return Group(table, against, Text(
        "weft-add adds where HPCC xors (shown, not compared); OpenSHMEM reaches the other PE "
        "through UCX on both paths; the variants run alternately, the programs in cycles, on a machine "
        "that may be shared: compare ratios.", style="dim"))


def chart(document: dict[str, Any], path: Path) -> Path:
    rows = document["rows"]
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    figure = report.new_figure(9, 4.5)
    axes = figure.subplots()
    width = 0.8 / max(len(PATH_ENV), 1)
    for k, p in enumerate(PATH_ENV):
        values = [next((r["gups"] or 0.0 for r in rows if r["path"] == p and r["impl"] == i), 0.0) * 1e3
                  for i in impls]
        axes.bar([x + k * width for x in range(len(impls))], values, width, label=PATH_LABELS[p])
    axes.set_xticks([x + width * (len(PATH_ENV) - 1) / 2 for x in range(len(impls))], impls, rotation=15)
    axes.set_yscale("log")
    axes.set_ylabel("million updates per second")
    axes.grid(alpha=0.3, axis="y", which="both")
    axes.legend(fontsize="small")
    axes.set_title(f"GUPS, {document['ranks']} ranks, 2^{document['log2_table']} words per rank")
    figure.savefig(path, dpi=120)
    return path


# What `weft bench gups` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": chart})}


def log2_type(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if not 4 <= value <= MAX_LOG2:
        raise argparse.ArgumentTypeError(f"{value} is outside 4..{MAX_LOG2}")
    return value


def positive_type(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def measure(args: argparse.Namespace) -> dict[str, Any]:
    argv = program_args(args.log2_table, args.updates, args.window, args.rounds)
    plan = [(cycle, step) for cycle in range(args.cycles)
            for step in (*args.paths, *(() if args.no_peers else ("openshmem",)))]
    entries: list[dict[str, Any]] = []
    for cycle, step in runner.steps(plan, lambda item: f"cycle {item[0] + 1}/{args.cycles}: {item[1]}"):
        if step == "openshmem":
            entries += [e for e in measure_shmem(args.np, argv, args.timeout) if e["path"] in args.paths]
        else:
            entries += measure_weft(step, args.np, argv, args.timeout)
    rows = merge(entries)
    updates = args.updates if args.updates is not None else 4 << args.log2_table
    return {"log2_table": args.log2_table, "updates_per_rank": updates, "window": args.window,
            "ranks": args.np, "cycles": args.cycles, "rounds": args.rounds, "paths": list(args.paths),
            "rows": rows, "ratios": ratios(rows)}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        return results.save(BENCHMARK, measure(args), transport="+".join(args.paths), ranks=args.np)

    results.measure_or_load(BENCHMARK, None if args.last else measure_all, render, {".png": chart},
                            json_only=args.json_only)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "gups",
        help="RandomAccess (GUPS): weft's atomics and puts beside OpenSHMEM and MPI RMA",
        description="HPCC's RandomAccess: random 64-bit updates of a table spread over the ranks, by weft "
        "(atomic xor, atomic add, direct xor, get + put), OpenSHMEM (atomic xor) and MPI RMA (MPI_Accumulate, "
        "MPI_Fetch_and_op), on the node's direct path and over UCX's shared memory, each verified as "
        "HPCC verifies it.",
    )
    parser.add_argument("--np", type=runner.ranks_type(1), default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument("--log2-table", type=log2_type, default=20, metavar="N",
                        help=f"2^N 64-bit words per rank, N from 4 to {MAX_LOG2} (default: 20)")
    parser.add_argument("--updates", type=positive_type, default=None, metavar="U",
                        help="updates per rank (default: 4 * 2^N, HPCC's)")
    parser.add_argument("--window", type=positive_type, default=1024, metavar="W",
                        help="updates between completions (default: 1024, HPCC's look-ahead)")
    parser.add_argument("--rounds", type=positive_type, default=3, metavar="R",
                        help="rounds of every variant per program run, at most 32 (default: 3)")
    parser.add_argument("--cycles", type=positive_type, default=2, metavar="C",
                        help="cycles of the programs, alternating (default: 2)")
    parser.add_argument("--paths", type=lambda t: [p for p in t.split(",")], default=list(PATH_ENV),
                        metavar="LIST", help="direct, shm or both, comma-separated (default: direct,shm)")
    parser.add_argument("--no-peers", action="store_true", help="leave out OpenSHMEM")
    parser.add_argument("--timeout", type=float, default=1800, metavar="S", help="seconds allowed per program run")
    parser.add_argument("--json", "--json-only", dest="json_only", action="store_true",
                        help="save the results and print them as JSON")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=checked_command)


def checked_command(args: argparse.Namespace) -> None:
    unknown = [p for p in args.paths if p not in PATH_ENV]
    if unknown or not args.paths:
        raise WeftError(f"--paths: {', '.join(unknown) or 'empty'}: expected direct, shm or both")
    if args.rounds > 32:
        raise WeftError(f"--rounds {args.rounds}: at most 32")
    command(args)
