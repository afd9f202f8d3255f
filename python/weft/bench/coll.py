"""`weft bench coll`: native MPI broadcast/reduce against weft's
hierarchical ones (WEFT_Hbcast/WEFT_Hreduce, a loop over the machine's
levels calling the same MPI collective), for each Open MPI coll/tuned
algorithm forced by MCA parameters, Open MPI coll/han and MPICH's default,
over message sizes: §7.2 of the hierarchical-communicators paper (Figs. 5-10).

`weft bench coll` measures on this machine (bench/weft_bench_coll);
`weft bench coll --onesided` measures weft's one-sided team collectives
(weft_team_bcast/weft_team_allreduce) side by side with the native MPI
call and WEFT_Hbcast/WEFT_Hallreduce, once per Open MPI coll/tuned
algorithm, and compares them with the best algorithm at each size;
`weft bench coll --smpi` (also `weft project coll`) runs the same source
built with smpicc on SimGrid platforms of the paper's machines
(weft.models.smpi) and, for validation, on a simulated copy of this
machine next to real runs of the same configurations.

The enhancement factor of a point is native time / hierarchical time, each
the median over iterations of one rank, maximum over the ranks (the paper's
"maximum time"; the median resists a rank descheduled on a shared machine).
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
from weft.core import report, results, runner
from weft.models import smpi

BENCH = "weft_bench_coll"
BENCH_MPICH = "weft_bench_coll_mpich"
BENCH_SMPI = "weft_bench_coll_smpi"
BENCHMARK = "coll"
OPS = ("bcast", "reduce")

# Open MPI coll/tuned algorithm numbers (MACHINE-NOTES.md) and the SimGrid
# SMPI implementation of the same algorithm.
ALGORITHMS: dict[str, list[tuple[str, int, str]]] = {
    "bcast": [("linear", 1, "flattree"), ("chain", 2, "NTSL"), ("pipeline", 3, "ompi_pipeline"),
              ("split binary", 4, "ompi_split_bintree"), ("binary", 5, "NTSB"),
              ("binomial", 6, "binomial_tree")],
    "reduce": [("linear", 1, "ompi_basic_linear"), ("chain", 2, "ompi_chain"),
               ("pipeline", 3, "ompi_pipeline"), ("binary", 4, "ompi_binary"),
               ("binomial", 5, "ompi_binomial"), ("in-order binary", 6, "ompi_in_order_binary")],
}
LINEAR_FAMILY = ("linear", "chain", "pipeline")   # the goal: hierarchical >= native for these
REAL_SIZES = "8,64,512,4096,32768,262144,1048576"
SMPI_SIZES = "8,1024,16384,262144,1048576"
# Collectives the hierarchy construction uses under SMPI (not timed):
# SimGrid's default allgather is very slow to simulate beyond 64 ranks.
SMPI_SETUP_CFG = {"smpi/allgather": "ring", "smpi/allreduce": "rdb", "smpi/simulate-computation": "no",
                  # the barrier before each timed operation is Open MPI's choice, as on the
                  # paper's machines: SimGrid's default one releases the ranks one by one, a
                  # skew as long as a flat broadcast that both timings would include
                  "smpi/barrier": "ompi"}
# The cost of applying the reduction op (SMPI applies an MPI_Op in no
# simulated time): measured here by `weft project opcost` (MPI_Reduce_local
# of MPI_SUM over doubles), charged by the SMPI build's --op-cost.
OPCOST = "coll-opcost"
OPCOST_SIZES = "8,64,512,4096,32768,262144,1048576"


def op_cost_points(points: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """[(size, seconds of one application of the op)] of an opcost run's
    points, by size (pure).  The SMPI build charges an application of the
    op the time of its size, linear between the measured sizes."""
    try:
        timed = sorted((int(p["size"]), float(p["native_s"])) for p in points)
    except (KeyError, TypeError, ValueError):
        raise WeftError(f"malformed op-cost points: {points!r}") from None
    if not timed:
        raise WeftError("the op cost has no points")
    if any(size < 1 or t <= 0 for size, t in timed):
        raise WeftError(f"the op cost has a non-positive size or time: {timed!r}")
    if len({size for size, _ in timed}) != len(timed):
        raise WeftError(f"the op cost measures a size twice: {timed!r}")
    return timed


def op_cost_arg(points: list[tuple[int, float]]) -> str:
    """--op-cost of weft_bench_coll: B1:S1,B2:S2,..."""
    return ",".join(f"{size}:{seconds:.6e}" for size, seconds in points)


def op_cost() -> dict[str, Any]:
    """The op cost of the last `weft project opcost` run."""
    path = results.latest_path(OPCOST)
    if not path.exists():
        raise WeftError("no op cost measured: run `weft project opcost` (or pass --no-op-cost)")
    document = results.load(path)
    return {"points": op_cost_points(document.get("points", [])), "source": path.name}


def factors(points: list[dict[str, Any]]) -> dict[int, float]:
    """{size: native/hierarchical} of a run's points."""
    out = {}
    for point in points:
        try:
            out[int(point["size"])] = float(point["native_s"]) / float(point["hier_s"])
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            raise WeftError(f"weft_bench_coll wrote a malformed point: {point!r}") from None
    return out


def _run_bench(argv_prefix: list[str], op: str, sizes: str, iters: int, runner_fn, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="weft-coll-") as tmp:
        output = Path(tmp) / "coll.json"
        runner_fn([*argv_prefix, "--json", str(output), "--op", op, "--sizes", sizes,
                   "--iters", str(iters)], timeout)
        try:
            data = results.read_json(output)
        except WeftError as error:
            raise WeftError(f"{error}\n  the file:\n{output.read_text(errors='replace')}") from None
    if not isinstance(data, dict) or not data.get("verified"):
        raise WeftError(f"weft_bench_coll {op}: results not verified")
    if op in OPS:
        factors(data["points"])
    return data


# ---- real runs ------------------------------------------------------------------


def real_configs(op: str, mpich: bool) -> list[dict[str, Any]]:
    """Every configuration measured on this machine for op."""
    configs = [{"config": f"tuned {label}", "algorithm": label, "mpi": "openmpi",
                "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                        f"OMPI_MCA_coll_tuned_{op}_algorithm": str(number)}}
               for label, number, _ in ALGORITHMS[op]]
    configs.append({"config": "han", "algorithm": "han", "mpi": "openmpi",
                    "env": {"OMPI_MCA_coll_han_priority": "100"}})
    if mpich:
        configs.append({"config": "MPICH default", "algorithm": "mpich", "mpi": "mpich", "env": {}})
    return configs


def measure_real(op: str, config: dict[str, Any], ranks: int, sizes: str, iters: int,
                 timeout: float) -> dict[str, Any]:
    env = config["env"]
    program = runner.executable(BENCH_MPICH if config["mpi"] == "mpich" else BENCH)
    # weft's own MPI starts with the launcher chosen; the other one (the
    # MPICH comparison of an Open MPI build) with its usual launcher.
    launch = runner.launcher()
    if launch.flavor != config["mpi"]:
        launch = runner.default_launcher(config["mpi"])

    def run(argv: list[str], limit: float) -> None:
        launch.run(ranks, argv, env=env, timeout=limit)

    data = _run_bench([str(program)], op, sizes, iters, run, timeout)
    return {"op": op, **{k: v for k, v in config.items() if k != "env"}, "env": env,
            "nranks": ranks, "library": data["mpi"], "points": data["points"]}


# ---- simulated runs ---------------------------------------------------------------


def measure_smpi(platform: smpi.Platform, op: str, label: str, smpi_name: str, sizes: str,
                 iters: int, timeout: float, op_cost: dict[str, Any] | None = None,
                 groups: str | None = None) -> dict[str, Any]:
    """One configuration simulated; op_cost (of op_cost()) charges each
    application of the reduction op, None leaves it free as SMPI does;
    groups ("10,16") replaces the machine's levels by a tailor-made
    hierarchy (weft_coll_groups)."""
    program = runner.executable(BENCH_SMPI)
    cfg = {**SMPI_SETUP_CFG, f"smpi/{op}": smpi_name}
    extra: list[str] = []
    charged = op_cost if op == "reduce" else None
    if charged:
        extra = ["--op-cost", op_cost_arg(charged["points"])]
        cfg["smpi/cpu-threshold"] = "0"   # else SimGrid drops costs under 1 us
    if groups:
        extra += ["--groups", groups]

    def run(argv: list[str], limit: float) -> None:
        smpi.run(platform, program, [*argv[1:], *extra], cfg, limit)

    record = {"op": op, "platform": platform.name,
              "config": f"tuned {label}" + (f", levels {groups}" if groups else ""), "algorithm": label,
              "smpi_algorithm": smpi_name, "nranks": platform.cores, "op_cost": charged, "groups": groups or ""}
    try:
        data = _run_bench([str(program)], op, sizes, iters, run, timeout)
    except WeftError as error:
        # A SimGrid implementation may fail (ompi_split_bintree aborts with
        # MPI_ERR_TRUNCATE on some sizes): kept as a failed configuration.
        last = [line.strip() for line in str(error).splitlines() if "CRITICAL" in line or "error" in line]
        return {**record, "points": [], "error": (last[-1] if last else str(error))[:300]}
    return {**record, "points": data["points"]}


# ---- reports --------------------------------------------------------------------


def best(run: dict[str, Any]) -> tuple[float, int]:
    """The largest factor of a run and its size."""
    fac = factors(run["points"])
    size = max(fac, key=fac.get)  # type: ignore[arg-type]
    return fac[size], size


def factor_table(title: str, runs: list[dict[str, Any]], caption: str | None = None) -> Any:
    """Rows: configurations; columns: the factor at each size, then the maximum."""
    sizes = sorted({int(p["size"]) for run in runs for p in run["points"]})
    table = report.table(title, [Column("algorithm", no_wrap=True),
                                 *(Column(report.fmt_size(s), justify="right") for s in sizes),
                                 Column("max", justify="right")], [], caption=caption)
    for run in runs:
        if run.get("error"):
            table.add_row(run["config"], *(Text("failed", style="dim") for _ in sizes),
                          Text("failed in SimGrid", style="dim"))
            continue
        fac = factors(run["points"])
        goal = 1.0 if run["algorithm"] in LINEAR_FAMILY else 0.0
        table.add_row(run["config"], *(report.fmt_ratio(fac.get(s), goal) for s in sizes),
                      report.fmt_ratio(best(run)[0], goal))
    return table


def times_table(title: str, runs: list[dict[str, Any]]) -> Any:
    """Native and hierarchical times of the largest size."""
    table = report.table(title, [Column("algorithm", no_wrap=True), Column("size", justify="right"),
                                 Column("native µs", justify="right"),
                                 Column("hierarchical µs", justify="right")], [])
    for run in runs:
        point = max(run["points"], key=lambda p: int(p["size"]))
        table.add_row(run["config"], report.fmt_size(int(point["size"])),
                      report.fmt_number(float(point["native_s"]) * 1e6),
                      report.fmt_number(float(point["hier_s"]) * 1e6))
    return table


def factor_chart(path: Path, groups: dict[str, list[dict[str, Any]]], title: str) -> Path:
    """Like the paper's Figs. 5-10: per panel (platform/op), the factor of
    each algorithm at each size, log scale, a line at 1."""
    panels = list(groups.items())
    columns = 2
    rows = (len(panels) + columns - 1) // columns
    figure = report.new_figure(12, 3.6 * rows)
    for index, (name, runs) in enumerate(panels):
        axes = figure.add_subplot(rows, columns, index + 1)
        sizes = sorted({int(p["size"]) for run in runs for p in run["points"]})
        width = 0.8 / max(len(runs), 1)
        for k, run in enumerate(runs):
            if run.get("error"):
                continue
            fac = factors(run["points"])
            xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(sizes))]
            axes.bar(xs, [fac.get(s, float("nan")) for s in sizes], width=width, label=run["config"])
        axes.axhline(1.0, color="black", linestyle="--", linewidth=1)
        axes.set_yscale("log")
        axes.set_xticks(range(len(sizes)), [report.fmt_size(s) for s in sizes])
        axes.set_title(name)
        axes.set_ylabel("native / hierarchical")
        axes.grid(axis="y", alpha=0.3, which="both")
        axes.legend(fontsize="x-small", ncols=2)
    figure.suptitle(title)
    figure.savefig(path, dpi=110)
    return path


def real_report(document: dict[str, Any]) -> Group:
    ranks = document["ranks"]
    over = document["oversubscribed"]
    label = (f"{ranks} ranks on {document['metadata']['cores']} cores"
             + (" — OVERSUBSCRIBED: timings are not performance" if over else ""))
    parts: list[Any] = [Text.assemble(("hierarchical vs native collectives, measured", "bold"), f": {label}")]
    for op in OPS:
        runs = [run for run in document["runs"] if run["op"] == op]
        parts.append(factor_table(f"{op}: enhancement factor (native max-time / hierarchical max-time)", runs))
        parts.append(times_table(f"{op}: times at the largest size", runs))
    return Group(*parts)


def smpi_report(document: dict[str, Any]) -> Group:
    parts: list[Any] = [Text("hierarchical vs native collectives, SIMULATED with SimGrid SMPI "
                             "(projection, not measurement)", style="bold")]
    for plat in document["platforms"]:
        for op in OPS:
            runs = [r for r in document["runs"] if r["platform"] == plat["name"] and r["op"] == op]
            if runs:
                paper = plat.get("paper_max", {}).get(op)
                caption = (f"paper's maximum on this machine: {paper}×" if paper else
                           "the paper reports no broadcast/reduce figure for this machine")
                if op == "reduce":
                    charged = sum(1 for r in runs if r.get("op_cost"))
                    caption += ("; the op's measured cost charged" if charged == len(runs) else
                                "; the op free (SMPI's default)" if not charged else
                                f"; the op's cost charged in {charged} of {len(runs)} configurations")
                parts.append(factor_table(
                    f"{plat['name']} ({plat['cores']} simulated cores), {op}: projected factor", runs,
                    caption=caption))
    parts.append(summary_table(document))
    if document.get("validation"):
        parts.append(validation_table(document["validation"]))
    return Group(*parts)


def summary_table(document: dict[str, Any]) -> Any:
    table = report.table("projected maxima next to the paper's",
                         [Column("platform"), Column("op"), Column("projected max", justify="right"),
                          Column("at (algorithm, size)"), Column("paper max", justify="right"),
                          Column("hier ≥ native for linear/chain/pipeline?", justify="right")], [])
    for plat in document["platforms"]:
        for op in OPS:
            runs = [r for r in document["runs"]
                    if r["platform"] == plat["name"] and r["op"] == op and not r.get("error")]
            if not runs:
                continue
            top = max(runs, key=lambda r: best(r)[0])
            value, size = best(top)
            linear = [min(factors(r["points"]).values()) >= 1.0 for r in runs if r["algorithm"] in LINEAR_FAMILY]
            paper = plat.get("paper_max", {}).get(op)
            table.add_row(plat["name"], op, report.fmt_ratio(value), f"{top['algorithm']}, {report.fmt_size(size)}",
                          f"{paper}×" if paper else report.MISSING,
                          Text("yes", style="bold green") if all(linear) else Text("NO", style="bold red"))
    return table


def validation_table(rows: list[dict[str, Any]]) -> Any:
    table = report.table("validation: the simulated copy of this machine vs real runs (2 ranks)",
                         [Column("op"), Column("algorithm"), Column("size", justify="right"),
                          Column("impl"), Column("real µs", justify="right"),
                          Column("simulated µs", justify="right"), Column("error", justify="right")], [])
    for row in rows:
        table.add_row(row["op"], row["algorithm"], report.fmt_size(row["size"]), row["impl"],
                      report.fmt_number(row["real_s"] * 1e6), report.fmt_number(row["sim_s"] * 1e6),
                      f"{100 * row['error']:+.0f}%")
    return table


# ---- commands -------------------------------------------------------------------


def command_real(args: argparse.Namespace) -> Path:
    mpich = args.mpich and (runner.home().programs / BENCH_MPICH).is_file()
    jobs = [(op, config) for op in OPS for config in real_configs(op, mpich)]
    runs = [measure_real(op, config, args.ranks, args.sizes or REAL_SIZES, args.iters, args.timeout)
            for op, config in runner.steps(jobs, lambda job: f"{job[0]} {job[1]['config']} ({args.ranks} ranks)")]
    over = args.ranks > (os.cpu_count() or 1)
    return results.save(BENCHMARK, {"mode": "real", "ranks": args.ranks, "oversubscribed": over, "runs": runs},
                        transport="mpi", ranks=args.ranks)


def command_smpi(args: argparse.Namespace) -> Path:
    if args.merge:
        return merge(args.merge)
    cal = smpi.calibration()
    cost = op_cost() if args.op_cost and "reduce" in args.ops else None
    plats = [p for p in smpi.platforms(cal) if p.name in args.platforms]
    if not plats and not args.validate:
        raise WeftError(f"no platform among {args.platforms}")
    for plat in plats:
        smpi.write_platform(plat)
    jobs = [(plat, op, label, name) for plat in plats for op in args.ops for label, _, name in ALGORITHMS[op]
            if not args.algorithms or label in args.algorithms]
    runs = [measure_smpi(plat, op, label, name, args.sizes or SMPI_SIZES, args.smpi_iters, args.timeout, cost,
                         args.groups)
            for plat, op, label, name in runner.steps(jobs, lambda j: f"SMPI {j[0].name} {j[1]} {j[2]}")]
    validation = validate(cal, args) if args.validate else []
    described = [{**smpi.describe(p), "paper_max": p.paper_max} for p in plats]
    return results.save(BENCHMARK + "-smpi", {"mode": "smpi", "calibration": cal.source, "platforms": described,
                                              "op_cost": cost, "runs": runs, "validation": validation},
                        transport="simgrid-smpi", ranks=max((p.cores for p in plats), default=2))


def merge(paths: list[Path]) -> Path:
    """One document of several projection runs (e.g. one per platform,
    run side by side): platforms, runs and validation rows concatenated; a
    configuration (platform, op, algorithm) simulated again in a later
    file replaces the earlier one (e.g. reduces re-run with the op's cost);
    each run names the calibration it was simulated with."""
    documents = [results.load(path) for path in paths]
    for path, document in zip(paths, documents):
        if document.get("mode") != "smpi":
            raise WeftError(f"{path} is not a `weft project coll` result")
    # a platform simulated in several runs (e.g. one per algorithm) is listed once
    platforms = list({p["name"]: p for d in reversed(documents) for p in d["platforms"]}.values())[::-1]
    # each run keeps the calibration it was simulated with
    runs = [{**r, "calibration": r.get("calibration", d["calibration"])} for d in documents for r in d["runs"]]
    runs = latest_runs(runs)
    return results.save(BENCHMARK + "-smpi", {
        "mode": "smpi", "calibration": documents[-1]["calibration"],
        "calibrations": sorted({r["calibration"] for r in runs}), "platforms": platforms,
        "op_cost": next((d["op_cost"] for d in reversed(documents) if d.get("op_cost")), None),
        "runs": runs,
        "validation": [v for d in documents for v in d.get("validation", [])],
        "merged_from": [str(path.name) for path in paths]},
        transport="simgrid-smpi", ranks=max((p["cores"] for p in platforms), default=2))


def latest_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last run of each (platform, op, algorithm, tailor-made levels),
    in the order the configurations first appear (pure)."""
    last: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    order: list[tuple[str, str, str, str]] = []
    for run in runs:
        key = (run["platform"], run["op"], run["algorithm"], run.get("groups", ""))
        if key not in last:
            order.append(key)
        last[key] = run
    return [last[key] for key in order]


def validation_rows(op: str, label: str, real: dict[str, Any], sim: dict[str, Any], ranks: int) -> list[dict[str, Any]]:
    """Side-by-side rows of one configuration (pure); error = simulated / real - 1."""
    simulated = {int(p["size"]): p for p in sim.get("points", [])}
    rows = []
    for point in real["points"]:
        other = simulated.get(int(point["size"]))
        if other is None:
            continue
        for impl, key in (("native", "native_s"), ("hierarchical", "hier_s")):
            rows.append({"op": op, "algorithm": label, "ranks": ranks, "size": int(point["size"]),
                         "impl": impl, "real_s": float(point[key]), "sim_s": float(other[key]),
                         "error": float(other[key]) / float(point[key]) - 1,
                         "oversubscribed": ranks > (os.cpu_count() or 1)})
    return rows


def validate(cal: smpi.Calibration, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The linear, chain and pipeline configurations on 2 real ranks and on
    the simulated copy of this machine (`weft project validate` runs them all)."""
    plat = smpi.this_machine(cal, 2)
    smpi.write_platform(plat)
    sizes = "8,4096,262144"
    rows = []
    jobs = [(op, label, number, name) for op in OPS for label, number, name in ALGORITHMS[op][:3]]
    for op, label, number, name in runner.steps(jobs, lambda j: f"validation {j[0]} {j[1]}"):
        config = {"config": f"tuned {label}", "algorithm": label, "mpi": "openmpi",
                  "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                          f"OMPI_MCA_coll_tuned_{op}_algorithm": str(number)}}
        real = measure_real(op, config, 2, sizes, args.iters, args.timeout)
        sim = measure_smpi(plat, op, label, name, sizes, args.smpi_iters, args.timeout,
                           op_cost() if args.op_cost else None)
        rows += validation_rows(op, label, real, sim, 2)
    return rows


def chart(document: dict[str, Any], path: Path) -> Path:
    """factor_chart of a real run (a panel per op) or of a projection (a
    panel per platform and op)."""
    if document["mode"] == "smpi":
        groups = {f"{p['name']} {op}": [r for r in document["runs"] if r["platform"] == p["name"] and r["op"] == op]
                  for p in document["platforms"] for op in OPS}
        title = "Projected enhancement factor (SimGrid SMPI), hierarchical vs native"
    else:
        groups = {op: [r for r in document["runs"] if r["op"] == op] for op in OPS}
        title = (f"Measured enhancement factor, {document['ranks']} ranks"
                 + (" (oversubscribed: not performance)" if document["oversubscribed"] else ""))
    return factor_chart(path, {k: v for k, v in groups.items() if v}, title)


# What `weft bench coll` shows, and `weft report` of its files: measured
# here (coll-*.json) or simulated (coll-smpi-*.json).
# ---- one-sided team collectives ---------------------------------------------------

ONESIDED = "coll-onesided"
ONESIDED_OPS = ("bcast", "allreduce")
ONESIDED_SIZES = "8,64,512,4096,65536,262144,1048576"
# Open MPI 4.1 coll/tuned allreduce algorithms (ompi_info --all).
ALLREDUCE_ALGORITHMS = [("basic linear", 1), ("nonoverlapping", 2), ("recursive doubling", 3),
                        ("ring", 4), ("segmented ring", 5), ("rabenseifner", 6)]
# The goals of the one-sided collectives (2 ranks of a node): latency at most
# SMALL_GOAL x the best MPI one up to 4 KiB, at most 1.0 x from 64 KiB up.
SMALL_GOAL, SMALL_MAX, LARGE_MIN = 0.5, 4096, 65536


def onesided_configs(op: str, flavor: str) -> list[dict[str, Any]]:
    """The MPI configurations a one-sided run is measured against: MPI's own
    choice, then every coll/tuned algorithm forced (Open MPI only)."""
    configs = [{"config": "default", "algorithm": "default", "env": {}}]
    if flavor != "openmpi":
        return configs
    table = ALLREDUCE_ALGORITHMS if op == "allreduce" else [(label, n) for label, n, _ in ALGORITHMS[op]]
    return configs + [{"config": f"tuned {label}", "algorithm": label,
                       "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                               f"OMPI_MCA_coll_tuned_{op}_algorithm": str(number)}}
                      for label, number in table]


def onesided_rows(runs: list[dict[str, Any]], stat: str = "") -> list[dict[str, Any]]:
    """Per op and size: the MPI configuration with the lowest native time,
    and the one-sided time over it and over the hierarchical (MPI-based)
    time, each ratio taken within one run (side by side).  stat "" uses the
    medians, "min" the fastest batches (pure)."""
    key = (lambda name: f"{name}_min_s") if stat == "min" else (lambda name: f"{name}_s")
    rows = []
    for op in ONESIDED_OPS:
        by_size: dict[int, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for run in runs:
            if run.get("op") != op:
                continue
            for p in run.get("points", []):
                by_size.setdefault(int(p["size"]), []).append((run, p))
        for size in sorted(by_size):
            try:
                run, p = min(by_size[size], key=lambda rp: float(rp[1][key("native")]))
                hrun, hp = min(by_size[size], key=lambda rp: float(rp[1][key("hier")]))
                native, onesided = float(p[key("native")]), float(p[key("onesided")])
                hier, honesided = float(hp[key("hier")]), float(hp[key("onesided")])
            except (KeyError, TypeError, ValueError):
                raise WeftError(f"weft_bench_coll wrote a malformed one-sided point at {size} B") from None
            if min(native, onesided, hier, honesided) <= 0:
                raise WeftError(f"a non-positive time at {size} B")
            goal = SMALL_GOAL if size <= SMALL_MAX else 1.0 if size >= LARGE_MIN else None
            rows.append({"op": op, "size": size, "best_mpi": run["config"], "native_s": native,
                         "onesided_s": onesided, "vs_mpi": onesided / native,
                         "best_hier": hrun["config"], "hier_s": hier, "vs_hier": honesided / hier,
                         "goal": goal,
                         "met": None if goal is None else onesided / native <= goal and honesided / hier <= goal})
    return rows


def onesided_table(document: dict[str, Any], stat: str) -> Any:
    label = "fastest batch" if stat == "min" else "median batch"
    table = report.table(
        f"one-sided team collectives vs the best MPI algorithm and WEFT_H* ({label}, "
        f"{document['ranks']} ranks)",
        [Column("op"), Column("size", justify="right"), Column("best MPI", no_wrap=True),
         Column("MPI µs", justify="right"), Column("one-sided µs", justify="right"),
         Column("÷ MPI", justify="right"), Column("WEFT_H µs", justify="right"),
         Column("÷ WEFT_H", justify="right"), Column("goal", justify="right")], [])
    for row in onesided_rows(document["runs"], stat):
        goal = row["goal"]
        table.add_row(row["op"], report.fmt_size(row["size"]), row["best_mpi"],
                      report.fmt_number(row["native_s"] * 1e6), report.fmt_number(row["onesided_s"] * 1e6),
                      f"{row['vs_mpi']:.2f}", report.fmt_number(row["hier_s"] * 1e6), f"{row['vs_hier']:.2f}",
                      report.MISSING if goal is None else
                      Text(f"≤ {goal:g}", style="bold green" if row["met"] else "bold red"))
    return table


def onesided_report(document: dict[str, Any]) -> Group:
    over = document["oversubscribed"]
    parts: list[Any] = [Text.assemble(("one-sided team collectives, measured", "bold"),
                                      " — OVERSUBSCRIBED: timings are not performance" if over else "")]
    parts.append(onesided_table(document, ""))
    parts.append(onesided_table(document, "min"))
    return Group(*parts)


def measure_onesided(op: str, config: dict[str, Any], ranks: int, sizes: str, iters: int,
                     timeout: float) -> dict[str, Any]:
    program = runner.executable(BENCH)
    launch = runner.launcher()

    def run(argv: list[str], limit: float) -> None:
        launch.run(ranks, [*argv, "--onesided", "1"], env=config["env"], timeout=limit)

    with tempfile.TemporaryDirectory(prefix="weft-coll-") as tmp:
        output = Path(tmp) / "coll.json"
        run([str(program), "--json", str(output), "--op", op, "--sizes", sizes, "--iters", str(iters)],
            timeout)
        data = results.read_json(output)
    if not isinstance(data, dict) or not data.get("verified"):
        raise WeftError(f"weft_bench_coll --onesided {op}: results not verified")
    return {"op": op, **{k: v for k, v in config.items() if k != "env"}, "env": config["env"],
            "nranks": ranks, "library": data["mpi"], "points": data["points"]}


def command_onesided(args: argparse.Namespace) -> Path:
    flavor = runner.launcher().flavor
    jobs = [(op, config) for op in ONESIDED_OPS for config in onesided_configs(op, flavor)]
    runs = [measure_onesided(op, config, args.ranks, args.sizes or ONESIDED_SIZES, args.iters, args.timeout)
            for op, config in runner.steps(jobs, lambda job: f"one-sided {job[0]} vs {job[1]['config']}")]
    over = args.ranks > (os.cpu_count() or 1)
    return results.save(ONESIDED, {"mode": "onesided", "ranks": args.ranks, "oversubscribed": over,
                                   "runs": runs, "rows": onesided_rows(runs),
                                   "rows_fastest": onesided_rows(runs, "min")},
                        transport="weft+mpi", ranks=args.ranks)


RENDERERS = {BENCHMARK: results.Renderer(real_report, {".png": chart}),
             ONESIDED: results.Renderer(onesided_report, {}),
             BENCHMARK + "-smpi": results.Renderer(smpi_report, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    if getattr(args, "onesided", False):
        results.measure_or_load(ONESIDED, None if args.last else lambda: command_onesided(args),
                                onesided_report, {}, json_only=args.json_only)
        return
    measure_or_simulate(args, BENCHMARK, command_real, command_smpi, smpi_report if args.smpi else real_report, chart)


def add_arguments(parser: argparse.ArgumentParser, *, smpi_default: bool) -> None:
    parser.add_argument("--smpi", action="store_true", default=smpi_default,
                        help="project to the paper's machines with SimGrid SMPI instead of measuring here")
    parser.add_argument("--ranks", type=runner.ranks_type(), default=2, help="real ranks (default 2; more are oversubscribed)")
    parser.add_argument("--sizes", help="message sizes in bytes, comma-separated")
    parser.add_argument("--iters", type=int, default=50, help="timed iterations per point, real runs (default 50)")
    parser.add_argument("--smpi-iters", type=int, default=2, help="iterations per simulated point (default 2)")
    parser.add_argument("--platforms", nargs="+", default=["NTW10E5", "SMP20E7", "SMP12E5"],
                        help="simulated platforms (NTW10E5 SMP20E7 SMP12E5 NTW24E5)")
    parser.add_argument("--algorithms", nargs="+", metavar="NAME",
                        help="simulate only these algorithms (e.g. linear chain pipeline)")
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS),
                        help="simulate only these collectives (default: bcast reduce)")
    parser.add_argument("--groups", metavar="G1,G2,...",
                        help="simulated runs: a tailor-made hierarchy (group sizes from the top, product = "
                        "the platform's cores) instead of the machine's levels")
    parser.add_argument("--no-op-cost", dest="op_cost", action="store_false",
                        help="apply the reduction op in no simulated time, as SMPI does (default: charge "
                        "the cost measured by `weft project opcost`)")
    parser.add_argument("--no-validate", dest="validate", action="store_false",
                        help="skip the simulated-vs-real comparison on this machine")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="JSON",
                        help="combine saved projection results (e.g. one run per platform) into one")
    parser.add_argument("--no-mpich", dest="mpich", action="store_false", help="skip MPICH's default")
    parser.add_argument("--onesided", action="store_true",
                        help="weft's one-sided team bcast/allreduce next to MPI's (each coll/tuned "
                        "algorithm) and WEFT_Hbcast/WEFT_Hallreduce, side by side in each run")
    parser.add_argument("--timeout", type=float, default=1800, metavar="S", help="seconds per run (default 1800)")
    add_show_arguments(parser, command)


def add_show_arguments(parser: argparse.ArgumentParser, command: Callable[[argparse.Namespace], None]) -> None:
    """--json-only and --last (measure_or_simulate) and the command of a
    benchmark measured here or simulated (coll, summa, hvec)."""
    parser.add_argument("--json", "--json-only", dest="json_only", action="store_true", help="print the results as JSON only")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of running")
    parser.set_defaults(func=command)


def measure_or_simulate(args: argparse.Namespace, benchmark: str, measure: Callable[[argparse.Namespace], Path],
                        simulate: Callable[[argparse.Namespace], Path],
                        render: Callable[[dict[str, Any]], Any], chart: results.Chart) -> None:
    """results.measure_or_load of a benchmark measured here (results
    <benchmark>-*.json) or, with --smpi, simulated (<benchmark>-smpi-*.json)."""
    results.measure_or_load(benchmark + "-smpi" if args.smpi else benchmark,
                            None if args.last else lambda: (simulate if args.smpi else measure)(args),
                            render, {".png": chart}, json_only=args.json_only)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "coll",
        help="hierarchical vs native MPI broadcast/reduce, per Open MPI algorithm (real or SimGrid SMPI)",
        description="Run bench/weft_bench_coll for each Open MPI coll/tuned bcast/reduce algorithm, "
        "coll/han and MPICH's default: native vs weft's hierarchical collectives over message sizes. "
        "--smpi projects the same benchmark to the paper's machines with SimGrid SMPI. Results go to "
        "the results directory (JSON and PNG).",
    )
    add_arguments(parser, smpi_default=False)
