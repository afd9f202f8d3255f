"""`weft bench profcost`: what the trace points cost when profiling is off.

bench/weft_bench_profcost loads libweft (trace points compiled in, none
selected) and libweft_noprof (the same sources without them) into one
process and measures the 8-byte put injection rate of each, chunk by chunk
in alternation inside one loop: each round's ratio is the median over its
chunk groups, and the median over rounds is the cost of the
instrumentation (goal: within 2 %).

--check adds a context of libweft with WEFT_CHECK=1 (the ratio of its
rate to libweft's is what the expensive checks cost when on); --base LIB
adds a libweft built from other sources, e.g. the commit before a change,
whose ratio to libweft is what the change costs (for WEFT_CHECK: what the
checks cost when off).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column, Table
from rich.text import Text

from weft import WeftError
from weft.bench.breakdown import PATH_ENV
from weft.core import report, results, runner

BENCHMARK = "profcost"
PROGRAM = "weft_bench_profcost"
LIBRARIES = ("src/libweft.so", "src/libweft_noprof.so")
GOAL = 0.98  # rate with trace points off / rate without them
# "direct": weft's intra-node direct path (the default between ranks of a
# node), whose puts pass HLP_post and direct_copy; the others as measured
# by the breakdown, whose puts pass HLP_post and LLP_post.
PATHS: dict[str, dict[str, str]] = {"direct": {}, **PATH_ENV}


def measure(path: str, nranks: int, rounds: int, iters: int, timeout: float,
            check: bool = False, base: str | None = None) -> dict[str, Any]:
    """One run of weft_bench_profcost: the libraries in one process,
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
        if check:
            argv.append("--check")
        if base is not None:
            if not Path(base).is_file():
                raise WeftError(f"{base} is missing")
            argv += ["--base", str(Path(base).resolve())]
        runner.run_mpi(nranks, argv, env=PATHS[path], timeout=timeout)
        data = results.read_json(output)
    return fields_of(data, path, iters, check=check, base=base)


def fields_of(data: Any, path: str, iters: int, *, check: bool = False,
              base: str | None = None) -> dict[str, Any]:
    """The result fields from weft_bench_profcost's JSON: per round, each
    library's median ns per put and, for each library but libweft, the
    median over chunk groups of its chunk's time over libweft's. Pure."""
    names = ("prof", "noprof", *(("check",) if check else ()), *(("base",) if base else ()))
    try:
        ns = {name: [float(v) for v in data["ns_per_put"][name]] for name in names}
        over = {name: [float(v) for v in data["time_over_prof"][name]] for name in names[1:]}
    except (KeyError, TypeError, ValueError):
        raise WeftError(f"weft_bench_profcost wrote no rates: {data!r}") from None
    rounds = len(ns["prof"])
    if rounds == 0 or any(len(v) != rounds for v in [*ns.values(), *over.values()]) or \
            min(v for values in over.values() for v in values) <= 0:
        raise WeftError(f"weft_bench_profcost wrote inconsistent rounds: {data!r}")
    # rate ratio prof / noprof = time noprof / time prof, chunk group by group
    ratios = over["noprof"]
    extra: dict[str, Any] = {}
    if check:
        # rate with WEFT_CHECK=1 / rate without
        extra["check_ratios"] = [1 / v for v in over["check"]]
        extra["check_ratio"] = statistics.median(extra["check_ratios"])
    if base:
        # rate of this build (WEFT_CHECK off) / rate of the base build
        extra["base_library"] = str(base)
        extra["base_ratios"] = over["base"]
        extra["base_ratio"] = statistics.median(extra["base_ratios"])
    return {
        **extra,
        "path": path,
        "iters": iters,
        "ns_per_put": ns,
        "rate_mmsgs": {name: [1e3 / v for v in values] for name, values in ns.items()},
        "ratios": ratios,
        "ratio": statistics.median(ratios),
        "goal": GOAL,
    }


def render(document: dict[str, Any]) -> Group:
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
    return Group(table, *extra_tables(document), Text(
        f"ratio = libweft's rate / libweft_noprof's, both in one process, the median over a "
        f"round's chunk groups (the libraries alternate chunk by chunk); "
        f"goal ≥ {document['goal']:.2f}. "
        "The machine is shared: compare the ratio, not the rates.", style="dim"))


def extra_tables(document: dict[str, Any]) -> list[Table]:
    """The --check and --base columns: rates and their ratio to libweft's
    (no table without them)."""
    rates = document["rate_mmsgs"]
    columns = [(name, key, title) for name, key, title in (
        ("check", "check_ratios", "WEFT_CHECK=1 ÷ off"),
        ("base", "base_ratios", "off ÷ base build")) if key in document]
    if not columns:
        return []
    table = report.table(
        "the same rounds: libweft with WEFT_CHECK=1, and the base build (M msg/s)",
        [Column("round", justify="right"), Column("libweft (off)", justify="right"),
         *[Column(f"{name} rate", justify="right") for name, _, _ in columns],
         *[Column(title, justify="right") for _, _, title in columns]],
        [],
    )
    for index, on in enumerate(rates["prof"]):
        table.add_row(str(index + 1), report.fmt_number(on),
                      *[report.fmt_number(rates[name][index]) for name, _, _ in columns],
                      *[f"{document[key][index]:.3f}" for _, key, _ in columns])
    table.add_row("median", report.fmt_number(statistics.median(rates["prof"])),
                  *[report.fmt_number(statistics.median(rates[name])) for name, _, _ in columns],
                  *[f"{statistics.median(document[key]):.3f}" for _, key, _ in columns],
                  end_section=True)
    return [table]


def chart(document: dict[str, Any], path: Path) -> Path:
    meta = document["metadata"]
    labels = [f"round {i + 1}" for i in range(len(document["ratios"]))] + ["median"]
    return report.bar_chart(
        path, labels, [*document["ratios"], document["ratio"]],
        title=f"trace points off vs compiled out, {document['path']} ({meta['hostname']}, {meta['date'][:10]})",
        xlabel="injection rate, libweft ÷ libweft_noprof", reference=1.0,
    )


# What `weft bench profcost` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        fields = measure(args.path, args.np, args.rounds, args.iters, args.timeout, args.check, args.base)
        return results.save(BENCHMARK, fields, transport=args.path, ranks=args.np)

    results.measure_or_load(BENCHMARK, None if args.last else measure_all, render, {".png": chart},
                            json_only=args.json_only)


def add_path_arguments(parser: argparse.ArgumentParser) -> None:
    """--np and --path, of the benchmarks that run on PATHS."""
    parser.add_argument("--np", type=runner.ranks_type(2, 2), default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument("--path", choices=list(PATHS), default="direct",
                        help="direct (weft's intra-node path), shm (UCX shared memory), tcp or tcp-nodes "
                        "(default: direct)")


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "profcost",
        help="cost of the compiled-in trace points when profiling is off",
        description="Compare the 8-byte put injection rate of libweft (trace points compiled in, "
        "profiling off) with libweft_noprof (no trace points), both loaded into one process, "
        "in interleaved rounds.",
    )
    add_path_arguments(parser)
    parser.add_argument("--rounds", type=int, default=21, metavar="R", help="rounds per library (default: 21)")
    parser.add_argument("--iters", type=int, default=1_000_000, metavar="N", help="puts per measurement (default: 1000000)")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument("--check", action="store_true",
                        help="also measure libweft with WEFT_CHECK=1 (the expensive checks on)")
    parser.add_argument("--base", metavar="LIB", default=None,
                        help="also measure this libweft.so, built from other sources (e.g. the commit "
                        "before a change)")
    parser.add_argument("--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
