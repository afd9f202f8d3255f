"""`weft bench dgemm`: the global-array DGEMM kernel of the scalable-endpoints
paper (§VII) on each endpoint sharing policy.

bench/weft_bench_ga_dgemm runs on T+1 ranks (rank 0 the server of A, B and
C, blocked while the clients work) and writes

    {"threads": T, "n": 512, "tile": 64, "rounds": 3,
     "results": [{"policy": "dedicated", "verified": true, "gflops_median": 3.6,
                  "gflops": [...], "resources": {...}}, ...]}

Every run's C is checked bit for bit against a serial cblas_dgemm.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench.endpoints import (BASELINE, add_run_options, fmt_int, fmt_mib, fmt_mlx5, fmt_objects,
                                  parse_threads, pool_command, run_pool_bench, with_ratios)
from weft.core import report, results, runner

BENCH = "weft_bench_ga_dgemm"
BENCHMARK = "dgemm"
DEFAULT_POLICIES = "procs,process,dedicated-2x,dedicated,paired,paired+caller,single"


def rows_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """One run's results with the ratio to procs measured in it."""
    try:
        return with_ratios(run["results"], "gflops_median", BASELINE, threads=int(run["threads"]))
    except (KeyError, TypeError, ValueError):
        raise WeftError("weft_bench_ga_dgemm output is malformed (threads/results/gflops_median)") from None


def measure(program: Path, threads: int, args: argparse.Namespace) -> dict[str, Any]:
    return run_pool_bench(program, BENCHMARK, threads + 1, threads,
                          ["--policies", args.policies, "--n", str(args.n), "--tile", str(args.tile),
                           "--rounds", str(args.rounds)], args.timeout, rows_of)


def run_report(document: dict[str, Any]) -> Group:
    rows = [row for run in document["runs"] for row in rows_of(run)]
    first = document["runs"][0]
    table = report.table(
        f"global-array DGEMM, N = {first['n']}, {first['tile']}×{first['tile']} tiles",
        [Column("T", justify="right"), Column("policy"), Column("GFLOP/s", justify="right"),
         Column("÷ procs", justify="right"), Column("verified"), Column("ctx·wrk·ep", justify="right"),
         Column("locks/call", justify="right"), Column("RSS MiB", justify="right"),
         Column("mlx5 UAR·uUAR·QP·CQ", justify="right")],
        [],
        caption="measured: median of interleaved rounds, C checked bit for bit against a serial dgemm; "
                "mlx5: the resource model, not measured",
    )
    for r in rows:
        res = r.get("resources", {})
        table.add_row(str(r["threads"]), r["policy"], report.fmt_number(r["gflops_median"]),
                      report.fmt_ratio(r["ratio"], 0.95) if r["policy"] != BASELINE else Text("1.00×"),
                      Text("yes", style="green") if r.get("verified") else Text("NO", style="bold red"),
                      fmt_objects(res), fmt_int(res.get("locks_per_put")), fmt_mib(res.get("rss_bytes")),
                      fmt_mlx5(r.get("mlx5")))
    meta = document["metadata"]
    heading = Text.assemble(("DGEMM on endpoint pools", "bold"),
                            f" — {meta['hostname']}, {meta['cores']} cores, UCX path (WEFT_SHM=0)")
    return Group(heading, table, "")


def chart(document: dict[str, Any], path: Path) -> Path:
    rows = [row for run in document["runs"] for row in rows_of(run)]
    figure = report.new_figure(8, 4.8)
    axes = figure.add_subplot()
    for policy in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == policy]
        xs = [r["resources"].get("workers", 0) for r in mine]
        axes.plot(xs, [r["gflops_median"] for r in mine], marker="o", label=policy)
        for x, r in zip(xs, mine):
            axes.annotate(f"T={r['threads']}", (x, r["gflops_median"]), fontsize=7,
                          textcoords="offset points", xytext=(3, 3))
    axes.set_xlabel("UCX workers created (measured, incl. the home worker)")
    axes.set_ylabel("GFLOP/s")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    axes.set_title(f"Global-array DGEMM vs resources — {document['metadata']['hostname']}")
    figure.savefig(path, dpi=120)
    return path


# What `weft bench dgemm` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(run_report, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> tuple[dict[str, Any], int]:
        threads = parse_threads(args.threads)
        program = runner.executable(BENCH)
        runs = [measure(program, t, args) for t in runner.steps(threads, lambda t: f"weft_bench_ga_dgemm T={t}")]
        return {"runs": runs}, max(threads) + 1

    pool_command(args, BENCHMARK, measure_all, run_report, chart, rows_of,
                 "a DGEMM result did not match the serial dgemm")


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "dgemm",
        help="global-array DGEMM (tiles got, multiplied, put back) per endpoint sharing policy",
        description="Run bench/weft_bench_ga_dgemm for each thread count: client threads take tiles of C "
        "from a server rank, get the tiles of A and B, multiply them with OpenBLAS and put C back, on "
        "each endpoint policy and on single-threaded processes (procs); verified against a serial dgemm.",
    )
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default: 1,2)")
    parser.add_argument("--policies", default=DEFAULT_POLICIES, help=f"(default: {DEFAULT_POLICIES})")
    parser.add_argument("--n", type=int, default=512, help="matrix order (default: 512)")
    parser.add_argument("--tile", type=int, default=64, help="tile order, divides n (default: 64)")
    add_run_options(parser, rounds=3)
    parser.set_defaults(func=command)
