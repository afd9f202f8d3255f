"""`weft bench summa`: SUMMA with flat, group-hierarchical and
machine-hierarchical block broadcasts (bench/weft_bench_summa), §7.3 of the
hierarchical-communicators paper (Figs. 11-13).

Real runs measure on this machine: 2 ranks on its cores, and more ranks
oversubscribed on emulated nodes (WEFT_TOPO_* settings) -- correctness
only.  `--smpi` (also `weft project summa`) runs the same source built with
smpicc on the SimGrid platforms of the paper's machines (weft.models.smpi):
a projection, not a measurement.  The broadcast algorithm is Open MPI's
binary tree, as in the paper (tuned algorithm 5; SimGrid's NTSB), or with
--bcast binomial the binomial tree (tuned 6; SimGrid's binomial_tree): the
topological variant over every level needs it, because SimGrid 3.32's NTSB
sends to a rank that does not exist on a one-rank communicator, and SimGrid
broadcasts over every communicator it creates -- the cores of the full
hierarchy are such communicators.

The enhancement factor is simple time / hierarchical time, each the largest
total over the ranks (the paper reports 12x, 5x and 6x for the topological
variant on NTW10E5, SMP20E7 and SMP12E5).  The simulation sweeps the matrix
order (--smpi-n) at the paper's panel width of 8 doubles; above
SMPI_CHECK_MAX the multiplies are charged at the measured rate and not
computed (--charge-only), below it every C is checked.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench import coll as bench_coll
from weft.core import report, results, runner
from weft.models import smpi

BENCH = "weft_bench_summa"
BENCH_SMPI = "weft_bench_summa_smpi"
BENCHMARK = "summa"
PAPER_FACTOR = {"NTW10E5": 12.0, "SMP20E7": 5.0, "SMP12E5": 6.0}   # §7.3, topological vs simple
SMPI_GROUPS = {"NTW10E5": "2,4,6,10", "SMP20E7": "2,4,5,10", "SMP12E5": "2,3,4,6"}
# The machine of the paper's Fig. 1 (two NUMA packages, an L2 per two cores):
# the emulated node of the oversubscribed correctness runs.
EMULATED_NODE = "pack:2 [numa] l3:1 l2:2 core:2 pu:1"
SMPI_CHECK_MAX = 960
VARIANTS = "simple,hier,topo2,topo"
# --bcast: SimGrid's algorithm and the variants it can run
SMPI_BCAST = {"binary": ("NTSB", "simple,hier,topo2"), "binomial": ("binomial_tree", VARIANTS)}
BINARY_BCAST = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_bcast_algorithm": "5"}


def real_env(ranks: int) -> dict[str, str]:
    """Settings of a real run: one BLAS thread, the paper's broadcast
    algorithm, and beyond the cores two emulated nodes."""
    env = {"OPENBLAS_NUM_THREADS": "1", **BINARY_BCAST}
    if ranks > (os.cpu_count() or 1):
        env.update({"WEFT_TOPO_SYNTHETIC": EMULATED_NODE, "WEFT_TOPO_BIND": "by-core",
                    "WEFT_TOPO_NODE": f"block:node%d:{(ranks + 1) // 2}"})
    return env


def run_json(name: str, argv: list[str], launch: Callable[[list[str]], None]) -> dict[str, Any]:
    """Run a benchmark program that writes JSON (--json FILE) through
    launch(argv) and return the verified document."""
    with tempfile.TemporaryDirectory(prefix=f"weft-{name}-") as tmp:
        output = Path(tmp) / "out.json"
        launch([*argv, "--json", str(output)])
        data = results.read_json(output)
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise WeftError(f"{name}: malformed output: {data!r:.200}")
    if not data.get("verified") and data.get("checked", True):
        raise WeftError(f"{name}: results not verified")
    return data


def factors(runs: list[dict[str, Any]]) -> dict[str, float]:
    """{label: simple total / its total} of one program run's configurations."""
    try:
        simple = next(float(r["total_s"]) for r in runs if r["variant"] == "simple")
        return {label(r): simple / float(r["total_s"]) for r in runs}
    except (StopIteration, KeyError, TypeError, ValueError, ZeroDivisionError):
        raise WeftError("weft_bench_summa: no usable simple run to compare with") from None


def label(run: dict[str, Any]) -> str:
    if run["variant"] == "simple":
        return "simple"
    if run["variant"] == "hier":
        return f"hier {run['groups']} groups"
    if run["variant"] == "topo2":
        return f"topological 2 levels ({run['groups']} groups)"
    return f"topological ({run['groups']} groups)"


def flop_rate(document: dict[str, Any]) -> float:
    """GFLOP/s of one rank's local DGEMM in a measured run (ranks on their
    own cores only): its share of the 2n^3 flops over its mean multiply
    time, the best of the variants."""
    best = 0.0
    for entry in document["entries"]:
        if entry.get("oversubscribed"):
            continue
        n, ranks = entry["n"], entry["nranks"]
        for run in entry["runs"]:
            if float(run["comp_s"]) > 0:
                best = max(best, 2.0 * n ** 3 / ranks / float(run["comp_s"]) / 1e9)
    if best <= 0:
        raise WeftError("the measured SUMMA results hold no multiply time on ranks with a core "
                        "of their own: run `weft bench summa --ranks 2` or give --flop-rate")
    return best


# ---- commands -------------------------------------------------------------------


def command_real(args: argparse.Namespace) -> Path:
    program = str(runner.executable(BENCH))
    launch = runner.launcher()
    entries = []
    for ranks in runner.steps(args.ranks, lambda r: f"summa on {r} ranks"):
        env = real_env(ranks)

        def go(argv: list[str], env: dict[str, str] = env, ranks: int = ranks) -> None:
            launch.run(ranks, argv, env=env, timeout=args.timeout)

        data = run_json("weft_bench_summa", [program, "--n", str(args.n), "--block", str(args.block),
                                             "--groups", args.groups or default_groups(ranks),
                                             "--rounds", str(args.rounds), "--variants", VARIANTS], go)
        entries.append({**data, "env": env, "oversubscribed": ranks > (os.cpu_count() or 1)})
    return results.save(BENCHMARK, {"mode": "real", "entries": entries}, transport="mpi",
                        ranks=max(args.ranks))


def default_groups(ranks: int) -> str:
    """Every group count from 2 to the ranks that divides them."""
    return ",".join(str(g) for g in range(2, ranks + 1) if ranks % g == 0)


def command_smpi(args: argparse.Namespace) -> Path:
    blocks = args.smpi_block if len(args.smpi_block) > 1 else args.smpi_block * len(args.smpi_n)
    if len(blocks) != len(args.smpi_n):
        raise WeftError(f"--smpi-block gives {len(blocks)} panel widths for {len(args.smpi_n)} orders (--smpi-n)")
    cal = smpi.calibration()
    plats = [p for p in smpi.platforms(cal) if p.name in args.platforms]
    if not plats:
        raise WeftError(f"no platform among {args.platforms}")
    if args.flop_rate:
        rate, rate_source = args.flop_rate, "given with --flop-rate"
    else:
        measured = results.load_latest(BENCHMARK)
        rate = flop_rate(measured)
        rate_source = (f"one core's OpenBLAS DGEMM rate measured here by weft bench summa of "
                       f"{measured['metadata']['date']}")
    program = runner.executable(BENCH_SMPI)
    # cpu-threshold 0: SimGrid drops smpi_execute calls shorter than 1 us by
    # default, which the small local multiplies of the paper's sizes are.
    algorithm, variants = SMPI_BCAST[args.bcast]
    cfg = {**bench_coll.SMPI_SETUP_CFG, "smpi/bcast": algorithm, "smpi/cpu-threshold": "0"}
    entries = []
    points = [(plat, n, b) for plat in plats for n, b in zip(args.smpi_n, blocks)]
    for plat, n, block in runner.steps(points, lambda pt: f"SMPI {pt[0].name} ({pt[0].cores} simulated ranks), "
                                       f"n={pt[1]}, panels of {pt[2]}"):
        smpi.write_platform(plat)

        def go(argv: list[str], plat: smpi.Platform = plat) -> None:
            smpi.run(plat, program, argv[1:], {**cfg}, args.timeout)

        data = run_json("weft_bench_summa_smpi",
                        [str(program), "--n", str(n), "--block", str(block),
                         "--groups", args.groups or SMPI_GROUPS.get(plat.name, "2"), "--rounds", "1",
                         "--variants", variants, "--flop-rate", f"{rate:.6g}",
                         *(["--charge-only"] if n > SMPI_CHECK_MAX else []),
                         *(["--by-node", str(plat.levels[0].fanout)] if args.by_node else [])], go)
        entries.append({**data, "platform": plat.name, "paper_factor": PAPER_FACTOR.get(plat.name),
                        "platform_info": smpi.describe(plat)})
    return results.save(BENCHMARK + "-smpi",
                        {"mode": "smpi", "simulated": True, "flop_rate_gflops": rate,
                         "flop_rate_source": rate_source, "bcast": f"{args.bcast} (SimGrid {algorithm})",
                         "entries": entries}, transport="smpi", ranks=max(e["nranks"] for e in entries))


# ---- reports --------------------------------------------------------------------


def entry_title(entry: dict[str, Any], simulated: bool) -> str:
    where = (f"{entry['platform']}, {entry['nranks']} SIMULATED ranks"
             + (f", simple/hier numbered by node over {entry['by_node']}" if entry.get("by_node") else "")
             if simulated else
             f"{entry['nranks']} ranks" + (" — OVERSUBSCRIBED, emulated nodes: correctness only"
                                           if entry.get("oversubscribed") else ""))
    return (f"SUMMA {where}: grid {entry['grid'][0]}x{entry['grid'][1]}, n={entry['n']}, "
            f"block {entry['block']}")


def entry_table(entry: dict[str, Any], simulated: bool) -> Any:
    fac = factors(entry["runs"])
    table = report.table(entry_title(entry, simulated),
                         [Column("variant", no_wrap=True), Column("group grid", justify="right"),
                          Column("total µs", justify="right"), Column("bcast µs (mean)", justify="right"),
                          Column("dgemm µs (mean)", justify="right"), Column("simple / this", justify="right"),
                          Column("max |C - C_ref|", justify="right")], [],
                         caption=f"error bound n²·ε = {entry['err_bound']:.1e}")
    for run in entry["runs"]:
        table.add_row(label(run), f"{run['group_grid'][0]}x{run['group_grid'][1]}",
                      report.fmt_number(float(run["total_s"]) * 1e6),
                      report.fmt_number(float(run["comm_s"]) * 1e6),
                      report.fmt_number(float(run["comp_s"]) * 1e6),
                      report.fmt_ratio(fac[label(run)]),
                      Text("not computed", style="dim") if run["verified"] is None else
                      Text(f"{run['max_abs_err']:.1e}", style="green" if run["verified"] else "bold red"))
    return table


def machine(entry: dict[str, Any]) -> str:
    return str(entry.get("platform", f"{entry['nranks']} ranks"))


def summary(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per machine and matrix order: the topological factors (all levels,
    first level only), the best user-group factor and the broadcasts' share
    of simple's time."""
    out = {}
    for entry in document["entries"]:
        fac = factors(entry["runs"])
        simple = next(r for r in entry["runs"] if r["variant"] == "simple")
        hier = [v for k, v in fac.items() if k.startswith("hier")]
        out[f"{machine(entry)} n={entry['n']}" + (" by node" if entry.get("by_node") else "")] = {
            "topological": next((fac[label(r)] for r in entry["runs"] if r["variant"] == "topo"), None),
            "topological_2": next((fac[label(r)] for r in entry["runs"] if r["variant"] == "topo2"), None),
            "best_hier": max(hier) if hier else None,
            "bcast_share": float(simple["comm_s"]) / (float(simple["comm_s"]) + float(simple["comp_s"]))
            if float(simple["comm_s"]) + float(simple["comp_s"]) > 0 else None,
            "paper": entry.get("paper_factor")}
    return out


def summary_table(document: dict[str, Any]) -> Any:
    table = report.table("SUMMA: enhancement factor simple / hierarchical"
                         + (" — SIMULATED (SimGrid SMPI), not measured" if document.get("simulated") else ""),
                         [Column("machine"), Column("topological (all levels)", justify="right"),
                          Column("topological (2 levels)", justify="right"),
                          Column("best user groups", justify="right"),
                          Column("bcast share of simple", justify="right"),
                          Column("paper (topological)", justify="right")],
                         [])
    for name, row in summary(document).items():
        table.add_row(name, report.fmt_ratio(row["topological"]), report.fmt_ratio(row["topological_2"]),
                      report.fmt_ratio(row["best_hier"]),
                      f"{100 * row['bcast_share']:.0f}%" if row["bcast_share"] is not None else report.MISSING,
                      f"{row['paper']:g}×" if row["paper"] else report.MISSING)
    return table


def chart(document: dict[str, Any], path: Path) -> Path:
    """Like the paper's Figs. 11-13: per machine, a bar per variant, the
    mean multiply time below the mean broadcast time."""
    entries = document["entries"]
    machines = list(dict.fromkeys(machine(e) for e in entries))
    orders = sorted({int(e["n"]) for e in entries})
    figure = report.new_figure(5.5 * len(machines), 4.2 * len(orders))
    for entry in entries:
        column = machines.index(machine(entry))
        axes = figure.add_subplot(len(orders), len(machines),
                                  orders.index(int(entry["n"])) * len(machines) + column + 1)
        names = [label(r) for r in entry["runs"]]
        comp = [float(r["comp_s"]) * 1e6 for r in entry["runs"]]
        comm = [float(r["comm_s"]) * 1e6 for r in entry["runs"]]
        axes.bar(names, comp, color="tab:blue", label="dgemm (mean)")
        axes.bar(names, comm, bottom=comp, color="tab:red", label="broadcasts (mean)")
        axes.set_ylabel("µs")
        axes.tick_params(axis="x", rotation=45, labelsize="small")
        axes.set_title(f"{machine(entry)}, n={entry['n']}" + (", by node" if entry.get("by_node") else "")
                       + (" (simulated)" if document.get("simulated") else
                          " (oversubscribed)" if entry.get("oversubscribed") else ""))
        axes.legend(fontsize="small")
    figure.suptitle("SUMMA: simple vs hierarchical broadcasts"
                    + (" — SimGrid SMPI projection" if document.get("simulated") else " — measured here"))
    figure.savefig(path, dpi=110)
    return path


def render(document: dict[str, Any]) -> Group:
    simulated = bool(document.get("simulated"))
    parts: list[Any] = [entry_table(e, simulated) for e in document["entries"]]
    parts.append(summary_table(document))
    if simulated:
        parts.append(Text(f"DGEMM cost in the simulation: {document['flop_rate_gflops']:.3g} GFLOP/s per rank "
                          f"({document['flop_rate_source']}); broadcast: {document.get('bcast', '?')}", style="dim"))
    return Group(*parts)


# What `weft bench summa` shows, and `weft report` of its files: measured
# here (summa-*.json) or simulated (summa-smpi-*.json).
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": chart}),
             BENCHMARK + "-smpi": results.Renderer(render, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    bench_coll.measure_or_simulate(args, BENCHMARK, command_real, command_smpi, render, chart)


def add_arguments(parser: argparse.ArgumentParser, *, smpi_default: bool) -> None:
    parser.add_argument("--smpi", action="store_true", default=smpi_default,
                        help="project to the paper's machines with SimGrid SMPI instead of measuring here")
    parser.add_argument("--ranks", type=runner.ranks_type(), nargs="+", default=[2, 4, 8],
                        help="real rank counts (default 2 4 8; beyond the cores: emulated nodes, correctness only)")
    parser.add_argument("--n", type=int, default=512, help="matrix order, real runs (default 512)")
    parser.add_argument("--block", type=int, default=64, help="panel width, real runs (default 64)")
    parser.add_argument("--groups", help="group counts of the hierarchical variant, comma-separated")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per variant, real runs (default 5)")
    parser.add_argument("--smpi-n", type=int, nargs="+", default=[240, 960, 3840],
                        help=f"matrix orders, simulated (default 240 960 3840; above {SMPI_CHECK_MAX} the "
                        "multiplies are charged, not computed)")
    parser.add_argument("--smpi-block", type=int, nargs="+", default=[8, 32, 128],
                        help="panel width of each order, or one for all (default 8 32 128: the paper's 8 at "
                        "n=240, then the same 30 steps)")
    parser.add_argument("--by-node", action="store_true",
                        help="simulated: place simple and hier on the grid as a scheduler numbering the ranks "
                        "round-robin over the platform's nodes (blades) would; topo follows the machine")
    parser.add_argument("--bcast", choices=sorted(SMPI_BCAST), default="binomial",
                        help="simulated broadcast algorithm: binomial (default; every variant) or the "
                        "paper's binary (SimGrid's NTSB, which cannot run the topological variant over every level)")
    parser.add_argument("--flop-rate", type=float,
                        help="simulated GFLOP/s per rank (default: measured by the last real run)")
    parser.add_argument("--platforms", nargs="+", default=["NTW10E5", "SMP20E7", "SMP12E5"],
                        help="simulated platforms (default: the paper's three SUMMA machines)")
    parser.add_argument("--timeout", type=float, default=1800, metavar="S", help="seconds per run (default 1800)")
    bench_coll.add_show_arguments(parser, command)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "summa", help="SUMMA with flat vs hierarchical broadcasts (real or SimGrid SMPI)",
        description="Run bench/weft_bench_summa: simple, hierarchical (user groups) and topological "
        "SUMMA, verified against a serial DGEMM. --smpi projects it to the paper's machines with "
        "SimGrid SMPI. Results go to the results directory (JSON and PNG).")
    add_arguments(parser, smpi_default=False)
