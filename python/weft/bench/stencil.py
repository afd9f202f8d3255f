"""`weft bench stencil`: the 5-point stencil of the scalable-endpoints paper
(§VII, Fig. 13) on each endpoint sharing policy, for every split of the
cores into ranks × threads.

bench/weft_bench_stencil runs on R ranks of T threads each (R·T = the cores
used) and writes

    {"ranks": R, "threads": T, "rows": 512, "cols": 512, "iters": 200,
     "results": [{"policy": "dedicated", "verified": true, "msgs_per_s_median": 1.2e5,
                  "secs_median": 0.8, "msgs_per_s": [...], "resources": {...}}, ...]}

Every thread has an endpoint per neighbour sharing one completion, and
exchanges halos with put-with-signal; every run is checked bit for bit
against a serial run on rank 0.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench.endpoints import (add_run_options, fmt_mib, fmt_mlx5, fmt_objects, pool_command, run_pool_bench,
                                  with_ratios)
from weft.core import report, results, runner

BENCH = "weft_bench_stencil"
BENCHMARK = "stencil"
DEFAULT_POLICIES = "process,dedicated-2x,dedicated,paired,single"
REFERENCE = "process"   # MPI everywhere's resources within a split


def splits(cores: int) -> list[tuple[int, int]]:
    """Every (ranks, threads) with ranks × threads = cores, most ranks first."""
    if cores < 1:
        raise WeftError(f"--cores {cores}: must be >= 1")
    return [(cores // t, t) for t in range(1, cores + 1) if cores % t == 0]


def rows_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        return with_ratios(run["results"], "msgs_per_s_median", REFERENCE,
                           split=f"{int(run['ranks'])}×{int(run['threads'])}")
    except (KeyError, TypeError, ValueError):
        raise WeftError("weft_bench_stencil output is malformed (ranks/threads/results)") from None


def measure(program: Path, ranks: int, threads: int, args: argparse.Namespace) -> dict[str, Any]:
    return run_pool_bench(program, BENCHMARK, ranks, threads,
                          ["--policies", args.policies, "--rows", str(args.rows), "--cols", str(args.cols),
                           "--iters", str(args.iters), "--rounds", str(args.rounds)], args.timeout, rows_of)


def run_report(document: dict[str, Any]) -> Group:
    rows = [row for run in document["runs"] for row in rows_of(run)]
    first = document["runs"][0]
    table = report.table(
        f"5-point stencil, {first['rows']}×{first['cols']} grid, {first['iters']} iterations",
        [Column("ranks×threads", justify="right"), Column("policy"), Column("halo msgs/s", justify="right"),
         Column(f"÷ {REFERENCE}", justify="right"), Column("verified"),
         Column("ctx·wrk·ep", justify="right"), Column("RSS MiB", justify="right"),
         Column("mlx5 UAR·uUAR·QP·CQ /rank", justify="right")],
        [],
        caption="measured: median of interleaved rounds, all ranks' UCX objects (with the home workers) and "
                "RSS growth; grid checked bit for bit against a serial run. mlx5: the resource model per "
                "rank, not measured",
    )
    for r in rows:
        res = r.get("resources", {})
        table.add_row(r["split"], r["policy"], f"{r['msgs_per_s_median']:.0f}",
                      report.fmt_ratio(r["ratio"], 0.95) if r["policy"] != REFERENCE else Text("1.00×"),
                      Text("yes", style="green") if r.get("verified") else Text("NO", style="bold red"),
                      fmt_objects(res), fmt_mib(res.get("rss_bytes")), fmt_mlx5(r.get("mlx5")))
    meta = document["metadata"]
    heading = Text.assemble(("stencil on endpoint pools", "bold"),
                            f" — {meta['hostname']}, {meta['cores']} cores, UCX path (WEFT_SHM=0), "
                            "one endpoint per neighbour, shared completion")
    return Group(heading, table, "")


def chart(document: dict[str, Any], path: Path) -> Path:
    """Halo message rate per split and policy (the paper's Fig. 13(a))."""
    rows = [row for run in document["runs"] for row in rows_of(run)]
    split_names = list(dict.fromkeys(r["split"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    figure = report.new_figure(8, 4.8)
    axes = figure.add_subplot()
    width = 0.8 / max(len(policies), 1)
    for i, policy in enumerate(policies):
        values = [next((r["msgs_per_s_median"] for r in rows if r["split"] == s and r["policy"] == policy), 0)
                  for s in split_names]
        axes.bar([k + i * width for k in range(len(split_names))], [v / 1e3 for v in values], width,
                 label=policy)
    axes.set_xticks([k + width * (len(policies) - 1) / 2 for k in range(len(split_names))], split_names)
    axes.set_xlabel("ranks × threads")
    axes.set_ylabel("halo messages per second (thousands)")
    axes.grid(alpha=0.3, axis="y")
    axes.legend(fontsize="small")
    axes.set_title(f"5-point stencil halo exchange — {document['metadata']['hostname']}")
    figure.savefig(path, dpi=120)
    return path


# What `weft bench stencil` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(run_report, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> tuple[dict[str, Any], int]:
        program = runner.executable(BENCH)
        todo = splits(args.cores or os.cpu_count() or 1)
        runs = [measure(program, r, t, args) for r, t in runner.steps(todo, lambda s: f"stencil {s[0]}×{s[1]}")]
        return {"runs": runs}, max(r for r, _ in todo)

    pool_command(args, BENCHMARK, measure_all, run_report, chart, rows_of,
                 "a stencil result did not match the serial run")


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "stencil",
        help="5-point stencil halo exchange per endpoint policy and ranks×threads split",
        description="Run bench/weft_bench_stencil for every split of the cores into ranks × threads: a 1-D "
        "partition of the grid, one endpoint per neighbour and a shared completion per thread, halos by "
        "put-with-signal; verified against a serial run.",
    )
    parser.add_argument("--cores", type=int, default=0, help="cores to use (default: all of this machine)")
    parser.add_argument("--policies", default=DEFAULT_POLICIES, help=f"(default: {DEFAULT_POLICIES})")
    parser.add_argument("--rows", type=int, default=512, help="grid rows, divisible by the cores (default: 512)")
    parser.add_argument("--cols", type=int, default=512, help="grid columns (default: 512)")
    parser.add_argument("--iters", type=int, default=200, help="iterations (default: 200)")
    add_run_options(parser, rounds=3)
    parser.set_defaults(func=command)
