"""`weft bench flood`: memory under a flood of implicit puts.

Runs tests/reliability/test_flood_bounded: every rank issues COUNT 8-byte
`weft_put_nbi` to its right neighbour without a flush, then one flush, and
checks every slot it received.  Each rank reports its peak RSS (getrusage;
it includes the segments: its own part and the neighbour's, mapped) and
how much its private memory grew while the puts were issued.  A run of
10^8 puts over TCP takes several minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench.profcost import PATHS, add_path_arguments
from weft.core import report, results, runner

BENCHMARK = "flood"
PROGRAM = "tests/reliability/test_flood_bounded"
LINE = re.compile(
    r"rank (\d+): (\d+) implicit puts, one flush, all verified; peak RSS ([\d.]+) MiB "
    r"\(segments ([\d.]+) MiB\); private memory grew ([\d.]+) MiB while issuing")


def parse(stdout: str) -> list[dict[str, Any]]:
    """The per-rank lines of test_flood_bounded, by rank."""
    ranks = [{"rank": int(m[1]), "puts": int(m[2]), "peak_rss_mib": float(m[3]),
              "segments_mib": float(m[4]), "private_growth_mib": float(m[5])}
             for m in LINE.finditer(stdout)]
    return sorted(ranks, key=lambda r: r["rank"])


def measure(path: str, nranks: int, count: int, timeout: float) -> dict[str, Any]:
    argv = [str(runner.executable(PROGRAM)), str(count)]
    with report.console.status(f"{count:,} implicit puts per rank over {path} on {nranks} ranks"):
        done = runner.run_mpi(nranks, argv, env=PATHS[path], timeout=timeout)
    ranks = parse(done.stdout)
    if len(ranks) != nranks:
        raise WeftError(f"test_flood_bounded reported {len(ranks)} of {nranks} ranks:\n{done.stdout}")
    return {"path": path, "count": count, "verified": True, "ranks": ranks,
            "max_peak_rss_mib": max(r["peak_rss_mib"] for r in ranks),
            "max_private_growth_mib": max(r["private_growth_mib"] for r in ranks)}


def render(document: dict[str, Any]) -> Group:
    table = report.table(
        f"{document['count']:,} implicit 8-byte puts per rank without a flush, over {document['path']}",
        [Column("rank", justify="right"), Column("peak RSS (MiB)", justify="right"),
         Column("of which segments (MiB)", justify="right"),
         Column("private growth (MiB)", justify="right")],
        [],
    )
    for r in document["ranks"]:
        table.add_row(str(r["rank"]), f"{r['peak_rss_mib']:.1f}", f"{r['segments_mib']:.1f}",
                      f"{r['private_growth_mib']:.1f}")
    return Group(table, Text(
        "every payload verified at its target; segments = this rank's part and the neighbour's, "
        "8 bytes per put each; only the direct path maps the neighbour's here", style="dim"))


# What `weft bench flood` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render)}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        fields = measure(args.path, args.np, args.count, args.timeout)
        return results.save(BENCHMARK, fields, transport=args.path, ranks=args.np)

    results.measure_or_load(BENCHMARK, None if args.last else measure_all, render, json_only=args.json_only)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "flood",
        help="peak memory under a flood of implicit puts without a flush",
        description="Every rank puts COUNT 8-byte words to its neighbour with weft_put_nbi and no "
        "flush, then flushes once and verifies them; reports peak RSS and private-memory growth.",
    )
    add_path_arguments(parser)
    parser.add_argument("--count", type=int, default=100_000_000, metavar="N",
                        help="puts per rank (default: 100000000)")
    parser.add_argument("--timeout", type=float, default=3600, metavar="S",
                        help="seconds allowed (default: 3600)")
    parser.add_argument("--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
