"""`weft topo`: the hierarchy of hardware communicators a job would get.

Runs the C program src/team/weft_topo_dump of the build on NP ranks under
mpirun. Every rank walks the machine with WEFT_Comm_hsplit_with_roots until
MPI_COMM_NULL; rank 0 prints every communicator of every step as JSON. The
machine is this one, or the one described by the options (the WEFT_TOPO_*
settings of docs/topology.md), so one host can plan for a cluster:

    weft topo -n 32 --synthetic "pack:2 [numa] l3:1 l2:2 core:2 pu:1" \\
              --node "block:node%d:8" --bind by-core

prints the hierarchy of the hierarchical-communicators paper's §5.1.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.patches import Rectangle
from rich.tree import Tree

from weft import WeftError
from weft.core import report, results, runner

DUMP = "weft_topo_dump"

FIG1 = "pack:2 [numa] l3:1 l2:2 core:2 pu:1"
# The worked examples of the paper (§5): ranks, and the settings.
EXAMPLES: dict[str, tuple[int, dict[str, str]]] = {
    "5.1": (32, {"synthetic": FIG1, "node": "block:node%d:8", "bind": "by-core"}),
    "5.2": (8, {"synthetic": FIG1, "bind": "core:0,core:1,l2:1*2,numa:1*4"}),
}
SETTINGS = {
    "synthetic": "WEFT_TOPO_SYNTHETIC",
    "xml": "WEFT_TOPO_XML",
    "bind": "WEFT_TOPO_BIND",
    "node": "WEFT_TOPO_NODE",
    "slurm_conf": "WEFT_TOPO_SLURM_CONF",
}


@dataclass
class Level:
    """One communicator of the hierarchy, with what splitting it gave."""

    type: str
    index: int
    num: int
    members: list[int]
    step: int
    children: list[Level] = field(default_factory=list)
    roots: list[int] | None = None   # the roots communicator of its split


def ranges(ranks: list[int]) -> str:
    """Compact rank list: [0, 1, 2, 3, 8] -> "0-3,8"."""
    parts: list[str] = []
    start = prev = None
    for r in ranks:
        if prev is not None and r == prev + 1:
            prev = r
            continue
        if start is not None:
            parts.append(f"{start}-{prev}" if prev != start else f"{start}")
        start = prev = r
    if start is not None:
        parts.append(f"{start}-{prev}" if prev != start else f"{start}")
    return ",".join(parts)


def hierarchy(dump: dict[str, Any]) -> Level:
    """The tree of communicators of a weft_topo_dump document; the root is
    the whole job (MPI_COMM_WORLD)."""
    try:
        np_ = int(dump["np"])
        root = Level("MPI_COMM_WORLD", 0, 1, list(range(np_)), 0)
        # A communicator is known by its step and its first rank.
        by_first: dict[tuple[int, int], Level] = {(0, 0): root}
        for step in dump["steps"]:
            s = int(step["step"])
            for c in step["comms"]:
                level = Level(c["type"], int(c["index"]), int(c["num"]), list(c["members"]), s)
                parent = by_first[(s - 1, int(c["parent"]))]
                parent.children.append(level)
                by_first[(s, level.members[0])] = level
            for r in step["roots"]:
                by_first[(s - 1, int(r["parent"]))].roots = list(r["members"])
    except (KeyError, TypeError, ValueError) as exc:
        raise WeftError(f"weft_topo_dump printed an unexpected document ({exc!r})") from None
    return root


def label(level: Level) -> str:
    text = (f"[bold]{level.type}[/bold] {level.index}/{level.num}" if level.step
            else f"[bold]{level.type}[/bold]")
    text += f"  ranks {ranges(level.members)}"
    if level.roots:
        text += f"  [dim]roots {{{ranges(level.roots)}}}[/dim]"
    return text


def tree(root: Level) -> Tree:
    """A rich tree: one line per communicator, with the roots communicator
    of its split."""
    out = Tree(label(root))

    def add(node: Tree, level: Level) -> None:
        for child in level.children:
            add(node.add(label(child)), child)

    add(out, root)
    return out


def draw(root: Level, path: Path, title: str) -> Path:
    """Icicle chart: one row per step, one column per rank; each
    communicator is a box over its ranks, roots marked with a dot."""
    nranks = len(root.members)
    rows: list[list[Level]] = []

    def collect(level: Level) -> None:
        while len(rows) <= level.step:
            rows.append([])
        rows[level.step].append(level)
        for child in level.children:
            collect(child)

    collect(root)
    figure = report.new_figure(max(6, 0.3 * nranks + 2), 0.7 * len(rows) + 1.2)
    axes = figure.add_subplot()
    colors = ["#8fb8de", "#f2b880", "#9fd49f", "#e69a9a", "#c3a6de", "#e0d07a"]
    for depth, levels in enumerate(rows):
        for i, level in enumerate(levels):
            for r in level.members:
                axes.add_patch(Rectangle((r, -depth - 1), 1, 0.9, facecolor=colors[i % len(colors)],
                                         edgecolor="white"))
            first = min(level.members)
            axes.text(first + 0.1, -depth - 0.55, level.type, fontsize=7, va="center")
            for r in level.roots or []:
                axes.plot(r + 0.5, -depth - 0.85, "k.", markersize=4)
    axes.set_xlim(0, nranks)
    axes.set_ylim(-len(rows), 0)
    axes.set_yticks([-d - 0.55 for d in range(len(rows))],
                    ["job"] + [f"step {d}" for d in range(1, len(rows))])
    axes.set_xlabel("MPI_COMM_WORLD rank (dots: roots communicator of the split below)")
    axes.set_title(title)
    figure.savefig(path, dpi=120)
    return path


def settings_env(args: argparse.Namespace) -> dict[str, str]:
    """The WEFT_TOPO_* variables for the chosen machine."""
    chosen: dict[str, str] = {}
    if args.example:
        chosen.update(EXAMPLES[args.example][1])
    for option in SETTINGS:
        value = getattr(args, option)
        if value is not None:
            chosen[option] = value
    return {SETTINGS[k]: v for k, v in chosen.items()}


def command(args: argparse.Namespace) -> None:
    nranks = args.np if args.np is not None else (EXAMPLES[args.example][0] if args.example else 2)
    runner.check_ranks(nranks, option="-n")
    if args.png:
        results.check_output_file(Path(args.png), "--png")
    dump = runner.executable(DUMP)
    proc = runner.run_mpi(nranks, [str(dump)], env=settings_env(args), timeout=args.timeout)
    try:
        document = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise WeftError(f"weft_topo_dump printed invalid JSON ({exc})") from None
    if args.json:
        report.print_json(document)
        return
    root = hierarchy(document)
    report.console.print(tree(root))
    if args.png:
        draw(root, Path(args.png), f"weft topo: {nranks} ranks")
        report.console.print(f"wrote {args.png}")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "topo",
        help="print the hierarchy of hardware communicators of a job",
        description="Run the hierarchical split (WEFT_Comm_hsplit_with_roots, repeatedly) on NP "
        "ranks and print every communicator: level type, index among its siblings, ranks, and the "
        "roots communicator of each split. The machine is this one unless described "
        "(docs/topology.md).",
    )
    parser.add_argument("-n", "--np", type=runner.ranks_type(), help="number of ranks (default 2, or the example's)")
    parser.add_argument("--example", choices=sorted(EXAMPLES),
                        help="a worked example of the paper: 5.1 (32 ranks, 4 nodes) or 5.2 "
                        "(8 ranks, non-uniform bindings); other options override its settings")
    parser.add_argument("--synthetic", help='hwloc synthetic node, e.g. "pack:2 [numa] l3:1 l2:2 core:2 pu:1"')
    parser.add_argument("--xml", help="hwloc XML of a node ({node} is replaced by the node name)")
    parser.add_argument("--bind", help='binding of each rank: "core:0,l2:1*2,...", "by-core", "unbound"')
    parser.add_argument("--node", help='node of each rank: "block:node%%d:8", "cyclic:n%%d:4", "a*4,b*4"')
    parser.add_argument("--slurm-conf", dest="slurm_conf", help="Slurm topology.conf for the switch levels")
    parser.add_argument("--png", help="also draw the hierarchy into this PNG file (its directory must exist)")
    parser.add_argument("--json", action="store_true", help="print weft_topo_dump's JSON instead")
    parser.add_argument("--timeout", type=float, default=300, help="seconds before giving up (default 300)")
    parser.set_defaults(func=command)
