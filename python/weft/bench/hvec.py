"""`weft bench hvec`: hierarchical vector processing, Algorithm 5 of the
hierarchical-communicators paper (§7.4, Fig. 14) -- the machine's hierarchy
(H_topo) against hierarchies built by hand (H_conf(i)), bench/weft_bench_hvec.

Real runs measure on this machine (2 ranks) and check more ranks
oversubscribed on emulated nodes (correctness only).  `--smpi` (also
`weft project hvec`) runs the same source built with smpicc on the SimGrid
platform of NTW24E5 (576 ranks, 4 switches, 5 levels) with the paper's four
H_conf configurations: a projection, not a measurement.  The paper reports a
speedup of about 10x of H_topo over the H_conf configurations.  --by-node N
numbers the ranks of the H_conf as a scheduler placing them round-robin over
N nodes would (consecutive numbers on different nodes); H_topo follows the
machine whatever the numbering.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column

from weft import WeftError
from weft.bench import coll as bench_coll
from weft.bench import summa as bench_summa
from weft.core import report, results, runner
from weft.models import smpi

BENCH = "weft_bench_hvec"
BENCH_SMPI = "weft_bench_hvec_smpi"
BENCHMARK = "hvec"
PAPER_CONFS = "3,4,2,3,8/6,2,2,3,8/3,2,2,8,6/3,2,4,6,4"   # §7.4, H_conf1-4 on 576 ranks
PAPER_SPEEDUP = 10.0
REAL_SIZES = "1,16,256,4096,65536"
SMPI_SIZES = "1,64,1024,16384"
MAX_CONFS = 4


def factorizations(n: int, depth: int) -> list[list[int]]:
    """Ordered factorizations of n into `depth` factors of at least 2."""
    if depth == 1:
        return [[n]] if n >= 2 else []
    return [[f, *rest] for f in range(2, n + 1) if n % f == 0 for rest in factorizations(n // f, depth - 1)]


def default_confs(ranks: int) -> str:
    """The paper's four configurations on 576 ranks; otherwise up to four
    hand-made hierarchies of 1 to 3 levels."""
    if ranks == 576:
        return PAPER_CONFS
    confs = [c for depth in (3, 2, 1) for c in factorizations(ranks, depth)][:MAX_CONFS]
    return "/".join(",".join(map(str, c)) for c in confs)


def speedups(run_list: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """{size: {H_conf name: its time / H_topo's time}}."""
    try:
        topo = next(r for r in run_list if r["name"] == "H_topo")
        base = {int(p["size"]): float(p["time_s"]) for p in topo["points"]}
        return {size: {r["name"]: float(next(p for p in r["points"] if int(p["size"]) == size)["time_s"]) / t
                       for r in run_list if r["name"] != "H_topo"} for size, t in base.items()}
    except (StopIteration, KeyError, TypeError, ValueError, ZeroDivisionError):
        raise WeftError("weft_bench_hvec: no usable H_topo run to compare with") from None


# ---- commands -------------------------------------------------------------------


def by_node(args: argparse.Namespace) -> list[str]:
    return ["--by-node", str(args.by_node)] if args.by_node else []


def command_real(args: argparse.Namespace) -> Path:
    program = str(runner.executable(BENCH))
    launch = runner.launcher()
    entries = []
    for ranks in runner.steps(args.ranks, lambda r: f"hvec on {r} ranks"):
        env = bench_summa.real_env(ranks)

        def go(argv: list[str], env: dict[str, str] = env, ranks: int = ranks) -> None:
            launch.run(ranks, argv, env=env, timeout=args.timeout)

        data = bench_summa.run_json("weft_bench_hvec", [program, "--sizes", args.sizes or REAL_SIZES,
                                                        "--confs", args.confs or default_confs(ranks),
                                                        "--iters", str(args.iters), *by_node(args)], go)
        entries.append({**data, "env": env, "oversubscribed": ranks > (os.cpu_count() or 1)})
    return results.save(BENCHMARK, {"mode": "real", "entries": entries}, transport="mpi", ranks=max(args.ranks))


def command_smpi(args: argparse.Namespace) -> Path:
    cal = smpi.calibration()
    plats = [p for p in smpi.platforms(cal) if p.name in args.platforms]
    if not plats:
        raise WeftError(f"no platform among {args.platforms}")
    program = runner.executable(BENCH_SMPI)
    entries = []
    for plat in runner.steps(plats, lambda p: f"SMPI {p.name} ({p.cores} simulated ranks)"):
        smpi.write_platform(plat)

        def go(argv: list[str], plat: smpi.Platform = plat) -> None:
            smpi.run(plat, program, argv[1:], dict(bench_coll.SMPI_SETUP_CFG), args.timeout)

        data = bench_summa.run_json("weft_bench_hvec_smpi",
                                    [str(program), "--sizes", args.sizes or SMPI_SIZES,
                                     "--confs", args.confs or default_confs(plat.cores),
                                     "--iters", str(args.smpi_iters), *by_node(args)], go)
        entries.append({**data, "platform": plat.name, "platform_info": smpi.describe(plat),
                        "paper_speedup": PAPER_SPEEDUP if plat.name == "NTW24E5" else None})
    return results.save(BENCHMARK + "-smpi", {"mode": "smpi", "simulated": True, "entries": entries},
                        transport="smpi", ranks=max(e["nranks"] for e in entries))


# ---- reports --------------------------------------------------------------------


def levels_text(run: dict[str, Any]) -> str:
    return " | ".join(",".join(map(str, lv["sizes"])) for lv in run["levels"])


def entry_table(entry: dict[str, Any], simulated: bool) -> Any:
    where = (f"{entry['platform']}, {entry['nranks']} SIMULATED ranks" if simulated else
             f"{entry['nranks']} ranks" + (" — OVERSUBSCRIBED, emulated nodes: correctness only"
                                           if entry.get("oversubscribed") else ""))
    sizes = sorted({int(p["size"]) for r in entry["runs"] for p in r["points"]})
    table = report.table(f"Algorithm 5, {where}: time (µs) per vector size (floats)",
                         [Column("hierarchy", no_wrap=True), Column("communicator sizes, top level first"),
                          *(Column(str(s), justify="right") for s in sizes)], [],
                         caption="verified on rank 0 against a serial replay" if entry["verified"] else "NOT VERIFIED")
    for run in entry["runs"]:
        times = {int(p["size"]): float(p["time_s"]) for p in run["points"]}
        table.add_row(run["name"], levels_text(run), *(report.fmt_number(times[s] * 1e6) for s in sizes))
    return table


def speedup_table(document: dict[str, Any]) -> Any:
    table = report.table("H_conf time / H_topo time" + (" — SIMULATED (SimGrid SMPI), not measured"
                                                        if document.get("simulated") else ""),
                         [Column("machine"), Column("size", justify="right"), Column("min", justify="right"),
                          Column("max", justify="right"), Column("paper", justify="right")], [])
    for entry in document["entries"]:
        for size, per in speedups(entry["runs"]).items():
            if not per:
                continue
            table.add_row(entry.get("platform", f"{entry['nranks']} ranks")
                          + (f", H_conf by node over {entry['conf_by_node']}" if entry.get("conf_by_node") else ""),
                          str(size),
                          report.fmt_ratio(min(per.values())), report.fmt_ratio(max(per.values())),
                          f"≈{entry['paper_speedup']:g}×" if entry.get("paper_speedup") else report.MISSING)
    return table


def chart(document: dict[str, Any], path: Path) -> Path:
    """Like the paper's Fig. 14: time against vector size, log-log, a line
    per hierarchy."""
    entries = document["entries"]
    figure = report.new_figure(5.5 * len(entries), 4.2)
    for i, entry in enumerate(entries):
        axes = figure.add_subplot(1, len(entries), i + 1)
        for run in entry["runs"]:
            pts = sorted((int(p["size"]), float(p["time_s"])) for p in run["points"])
            axes.plot([s for s, _ in pts], [t * 1e6 for _, t in pts], marker="o",
                      linewidth=2.5 if run["name"] == "H_topo" else 1,
                      label=f"{run['name']} ({run['config']})")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("vector size (x4 B)")
        axes.set_ylabel("µs")
        axes.set_title(entry.get("platform", f"{entry['nranks']} ranks")
                       + (f", H_conf by node over {entry['conf_by_node']}" if entry.get("conf_by_node") else "")
                       + (" (simulated)" if document.get("simulated") else
                          " (oversubscribed)" if entry.get("oversubscribed") else ""))
        axes.grid(alpha=0.3, which="both")
        axes.legend(fontsize="x-small")
    figure.suptitle("Algorithm 5: H_topo vs H_conf" + (" — SimGrid SMPI projection" if document.get("simulated")
                                                       else " — measured here"))
    figure.savefig(path, dpi=110)
    return path


def render(document: dict[str, Any]) -> Group:
    simulated = bool(document.get("simulated"))
    return Group(*(entry_table(e, simulated) for e in document["entries"]), speedup_table(document))


# What `weft bench hvec` shows, and `weft report` of its files: measured
# here (hvec-*.json) or simulated (hvec-smpi-*.json).
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": chart}),
             BENCHMARK + "-smpi": results.Renderer(render, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    bench_coll.measure_or_simulate(args, BENCHMARK, command_real, command_smpi, render, chart)


def add_arguments(parser: argparse.ArgumentParser, *, smpi_default: bool) -> None:
    parser.add_argument("--smpi", action="store_true", default=smpi_default,
                        help="project to the paper's NTW24E5 with SimGrid SMPI instead of measuring here")
    parser.add_argument("--ranks", type=runner.ranks_type(), nargs="+", default=[2, 4, 8],
                        help="real rank counts (default 2 4 8; beyond the cores: emulated nodes, correctness only)")
    parser.add_argument("--sizes", help="vector sizes in floats, comma-separated")
    parser.add_argument("--confs", help="H_conf configurations: G1,G2,.../G1,G2,... (default: the paper's on 576 ranks)")
    parser.add_argument("--iters", type=int, default=20, help="timed iterations per point, real runs (default 20)")
    parser.add_argument("--by-node", type=int, metavar="N",
                        help="number the H_conf ranks round-robin over N nodes, as a by-node scheduler would")
    parser.add_argument("--smpi-iters", type=int, default=2, help="iterations per simulated point (default 2)")
    parser.add_argument("--platforms", nargs="+", default=["NTW24E5"], help="simulated platforms (default NTW24E5)")
    parser.add_argument("--timeout", type=float, default=3600, metavar="S", help="seconds per run (default 3600)")
    bench_coll.add_show_arguments(parser, command)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "hvec", help="Algorithm 5: the machine's hierarchy vs hand-made ones (real or SimGrid SMPI)",
        description="Run bench/weft_bench_hvec: hierarchical vector processing over H_topo and H_conf(i), "
        "verified against a serial replay. --smpi projects it to the paper's NTW24E5 with SimGrid SMPI. "
        "Results go to the results directory (JSON and PNG).")
    add_arguments(parser, smpi_default=False)
