"""`weft bench profcost`: what the trace points cost when profiling is off.

bench/weft_bench_profcost loads libweft (trace points compiled in, none
selected) and libweft_noprof (the same sources without them) into one
process and measures the 8-byte put injection rate of each, chunk by chunk
in alternation inside one loop: each round's ratio is the median over its
chunk pairs, and the median over rounds is the cost of the instrumentation
(goal: within 2 %).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from rich.table import Column
from rich.text import Text

from weft import WeftError, report, results, runner
from weft.breakdown_run import PATH_ENV

BENCHMARK = "profcost"
PROGRAM = "bench/weft_bench_profcost"
LIBRARIES = ("src/libweft.so", "src/libweft_noprof.so")
GOAL = 0.98  # rate with trace points off / rate without them
# "direct": weft's intra-node direct path (the default between ranks of a
# node), whose puts pass HLP_post and direct_copy; the others as measured
# by the breakdown, whose puts pass HLP_post and LLP_post.
PATHS: dict[str, dict[str, str]] = {"direct": {}, **PATH_ENV}


def measure(path: str, nranks: int, rounds: int, iters: int, timeout: float) -> dict[str, Any]:
    """One run of weft_bench_profcost: both libraries in one process,
    alternating chunk by chunk."""
    build = runner.build_dir()
    libraries = [build / lib for lib in LIBRARIES]
    for library in libraries:
        if not library.is_file():
            raise WeftError(f"{library} is missing: run `make` first")
    with tempfile.TemporaryDirectory(prefix="weft-profcost-") as tmp:
        output = Path(tmp) / "profcost.json"
        argv = [str(runner.executable(PROGRAM)), *map(str, libraries), "--iters", str(iters),
                "--rounds", str(rounds), "--json", str(output)]
        runner.run_mpi(nranks, argv, env=PATHS[path], timeout=timeout)
        data = results.read_json(output)
    return fields_of(data, path, iters)


def fields_of(data: Any, path: str, iters: int) -> dict[str, Any]:
    """The result fields from weft_bench_profcost's JSON: per round, each
    library's median ns per put and the median of its chunk pairs' rate
    ratios (libweft / libweft_noprof). Pure."""
    try:
        ns = {name: [float(v) for v in data["ns_per_put"][name]] for name in ("prof", "noprof")}
        ratios = [float(v) for v in data["pair_ratio"]]
    except (KeyError, TypeError, ValueError):
        raise WeftError(f"weft_bench_profcost wrote no rates: {data!r}") from None
    if not ratios or any(len(v) != len(ratios) for v in ns.values()) or min(ratios) <= 0:
        raise WeftError(f"weft_bench_profcost wrote inconsistent rounds: {data!r}")
    return {
        "path": path,
        "iters": iters,
        "ns_per_put": ns,
        "rate_mmsgs": {name: [1e3 / v for v in values] for name, values in ns.items()},
        "ratios": ratios,
        "ratio": statistics.median(ratios),
        "goal": GOAL,
    }


def show(document: dict[str, Any]) -> None:
    rates = document["rate_mmsgs"]
    table = report.table(
        f"8-byte put injection rate over {document['path']}, trace points off vs compiled out (M msg/s)",
        [Column("round", justify="right"), Column("libweft (off)", justify="right"),
         Column("libweft_noprof", justify="right"), Column("ratio", justify="right")],
        [],
    )
    for index, (on, off, ratio) in enumerate(zip(rates["prof"], rates["noprof"], document["ratios"])):
        table.add_row(str(index + 1), report.fmt_number(on), report.fmt_number(off), f"{ratio:.3f}")
    table.add_row("median", report.fmt_number(statistics.median(rates["prof"])),
                  report.fmt_number(statistics.median(rates["noprof"])),
                  report.fmt_ratio(document["ratio"], document["goal"]), end_section=True)
    report.console.print(table)
    report.console.print(Text(
        f"ratio = libweft's rate / libweft_noprof's, both in one process, the median over a "
        f"round's chunk pairs (the libraries alternate chunk by chunk); "
        f"goal ≥ {document['goal']:.2f}. "
        "The machine is shared: compare the ratio, not the rates.", style="dim"))


def chart(document: dict[str, Any], path: Path) -> Path:
    meta = document["metadata"]
    labels = [f"round {i + 1}" for i in range(len(document["ratios"]))] + ["median"]
    return report.bar_chart(
        path, labels, [*document["ratios"], document["ratio"]],
        title=f"trace points off vs compiled out, {document['path']} ({meta['hostname']}, {meta['date'][:10]})",
        xlabel="injection rate, libweft ÷ libweft_noprof", reference=1.0,
    )


def command(args: argparse.Namespace) -> None:
    if args.last:
        document = results.load_latest(BENCHMARK)
        path = None
    else:
        fields = measure(args.path, args.np, args.rounds, args.iters, args.timeout)
        path = results.save(BENCHMARK, fields, transport=args.path, ranks=args.np)
        document = results.load(path)
    if args.json_only:
        print(json.dumps(document, indent=2))
        return
    show(document)
    if path is not None:
        png = chart(document, path.with_suffix(".png"))
        report.console.print(f"[dim]saved {path} and {png.name}[/dim]")


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "profcost",
        help="cost of the compiled-in trace points when profiling is off",
        description="Compare the 8-byte put injection rate of libweft (trace points compiled in, "
        "profiling off) with libweft_noprof (no trace points), both loaded into one process, "
        "in interleaved rounds.",
    )
    parser.add_argument("--np", type=int, default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument("--path", choices=list(PATHS), default="direct",
                        help="direct (weft's intra-node path), shm (UCX shared memory), tcp or tcp-nodes "
                        "(default: direct)")
    parser.add_argument("--rounds", type=int, default=21, metavar="R", help="rounds per library (default: 21)")
    parser.add_argument("--iters", type=int, default=1_000_000, metavar="N", help="puts per measurement (default: 1000000)")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument("--json-only", action="store_true", help="save the results and print them as JSON")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
