"""`weft bench profcost`: what the trace points cost when profiling is off.

The 8-byte put injection rate of weft_bench_breakdown --injection-only on
libweft (trace points compiled in, not selected) and on libweft_noprof (the
same sources without them), in interleaved rounds: the ratio of each pair
of neighbouring rounds, and their median, is the cost of the instrumentation
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
PROGRAMS = {"prof": "bench/weft_bench_breakdown", "noprof": "bench/weft_bench_breakdown_noprof"}
GOAL = 0.98  # rate with trace points off / rate without them
# "direct": weft's intra-node direct path (the default between ranks of a
# node), whose puts pass HLP_post and direct_copy; the others as measured
# by the breakdown, whose puts pass HLP_post and LLP_post.
PATHS: dict[str, dict[str, str]] = {"direct": {}, **PATH_ENV}


def injection_ns(program: Path, path: str, nranks: int, iters: int, inner: int, timeout: float) -> float:
    """One run of the injection loop (profiling off): ns per put, the
    lowest of the program's inner rounds."""
    with tempfile.TemporaryDirectory(prefix="weft-profcost-") as tmp:
        output = Path(tmp) / "injection.json"
        argv = [str(program), "--injection-only", "--iters", str(iters), "--rounds", str(inner),
                "--json", str(output)]
        runner.run_mpi(nranks, argv, env=PATHS[path], timeout=timeout)
        data = results.read_json(output)
    try:
        return float(data["injection"]["observed_ns"])
    except (KeyError, TypeError, ValueError):
        raise WeftError(f"weft_bench_breakdown wrote no injection figure: {data!r}") from None


def measure(path: str, nranks: int, rounds: int, iters: int, inner: int, timeout: float) -> dict[str, Any]:
    """Interleaved rounds of both programs; the order alternates so that
    neither always runs first."""
    programs = {name: runner.executable(rel) for name, rel in PROGRAMS.items()}
    ns: dict[str, list[float]] = {name: [] for name in PROGRAMS}
    order = [(r, name) for r in range(rounds) for name in (PROGRAMS if r % 2 == 0 else reversed(PROGRAMS))]
    for _, name in runner.steps(order, lambda step: f"round {step[0] + 1}/{rounds}: {step[1]}"):
        ns[name].append(injection_ns(programs[name], path, nranks, iters, inner, timeout))
    # rate ratio prof / noprof = time noprof / time prof
    ratios = [n / p for p, n in zip(ns["prof"], ns["noprof"])]
    return {
        "path": path,
        "iters": iters,
        "inner_rounds": inner,
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
        f"ratio = libweft's rate / libweft_noprof's, rounds run side by side; goal ≥ {document['goal']:.2f}. "
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
        fields = measure(args.path, args.np, args.rounds, args.iters, args.inner, args.timeout)
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
        "profiling off) with libweft_noprof (no trace points), in interleaved rounds of one run.",
    )
    parser.add_argument("--np", type=int, default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument("--path", choices=list(PATHS), default="direct",
                        help="direct (weft's intra-node path), shm (UCX shared memory), tcp or tcp-nodes "
                        "(default: direct)")
    parser.add_argument("--rounds", type=int, default=6, metavar="R", help="rounds per library (default: 6)")
    parser.add_argument("--iters", type=int, default=1_000_000, metavar="N", help="puts per measurement (default: 1000000)")
    parser.add_argument("--inner", type=int, default=5, metavar="K",
                        help="measurements per program run, lowest kept (default: 5)")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument("--json-only", action="store_true", help="save the results and print them as JSON")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
