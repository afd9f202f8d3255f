"""`weft project`: the SimGrid SMPI projection of weft's benchmarks.

  weft project calibrate   measure this machine's point-to-point figures (2
                           ranks) and write the calibration the platforms use
                           (smpi-calibration-*.json), with the same program
                           run on the simulated copy of this machine beside it;
  weft project validate    the collectives benchmark on this machine for real
                           and on its simulated copy: times side by side with
                           the error (coll-validation-*.json);
  weft project coll        the hierarchical collectives on the paper's
                           machines (the same as `weft bench coll --smpi`);
  weft project opcost      measure the cost of applying the reduction op
                           here (coll-opcost-*.json), which `weft project
                           coll` charges in simulated reduces;
  weft project summa       SUMMA, simple vs hierarchical (`weft bench summa --smpi`);
  weft project hvec        Algorithm 5, H_topo vs H_conf(i) (`weft bench hvec --smpi`).

Every file named here is saved in the results directory (weft.core.results).
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
from weft.bench import hvec as bench_hvec
from weft.bench import summa as bench_summa
from weft.core import report, results, runner
from weft.models import smpi

CALIB = "weft_smpi_calib"
CALIB_SMPI = "weft_smpi_calib_smpi"
CALIB_SIZES = "8,64,512,2048,3072,4032,4048,8192,16384,65536,262144,1048576,4194304"
VALIDATION = "coll-validation"
VALIDATION_SIZES = "8,512,4096,65536,1048576"
OVERSUBSCRIBED_RANKS = 4      # correctness only: the machine has 2 cores


# ---- calibrate ------------------------------------------------------------------------


def mca_environment() -> dict[str, str]:
    """The Open MPI MCA parameters set in the environment (OMPI_MCA_*),
    which the real runs inherit: recorded with their results."""
    return {key: value for key, value in sorted(os.environ.items()) if key.startswith("OMPI_MCA_")}


def _calib_run(argv_prefix: list[str], run_fn, sizes: str, reps: int, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="weft-calib-") as tmp:
        output = Path(tmp) / "calib.json"
        run_fn([*argv_prefix, "--json", str(output), "--sizes", sizes, "--reps", str(reps)], timeout)
        data = results.read_json(output)
    if not isinstance(data, dict) or not isinstance(data.get("points"), list) or not data["points"]:
        raise WeftError("weft_smpi_calib wrote no points")
    return data


def fastest_calibration(launches: list[dict[str, Any]]) -> dict[str, Any]:
    """One calibration of several launches of weft_smpi_calib (pure): per
    size the smallest time and the largest flood, the smallest entry-stream
    times; the first launch's other fields.  A launch on this machine
    sometimes moves its large messages milliseconds slower throughout (all
    of its repetitions), which the minimum over launches leaves out as the
    minimum over repetitions leaves out noise."""
    first = launches[0]
    points: dict[int, dict[str, Any]] = {}
    for launch in launches:
        for point in launch["points"]:
            best = points.setdefault(int(point["size"]), dict(point))
            for key, value in point.items():
                if key.endswith("_s"):
                    best[key] = min(float(best[key]), float(value))
                elif key.endswith("_Bps"):
                    best[key] = max(float(best[key]), float(value))
    out = {**first, "points": [points[size] for size in sorted(points)], "launches": len(launches)}
    for key in ("bcast_call_s", "reduce_call_s"):
        if all(key in launch for launch in launches):
            out[key] = min(float(launch[key]) for launch in launches)
    return out


def command_calibrate(args: argparse.Namespace) -> Path:
    program = runner.executable(CALIB)

    def real(argv: list[str], limit: float) -> None:
        runner.run_mpi(2, argv, timeout=limit)

    launches = [_calib_run([str(program)], real, args.sizes or CALIB_SIZES, args.reps, args.timeout)
                for _ in range(args.launches)]
    measured = fastest_calibration(launches)
    cal = smpi.parse_calibration(measured, "just measured")
    plat = smpi.this_machine(cal, 2)
    smpi.write_platform(plat)
    sim_program = runner.executable(CALIB_SMPI)

    def simulated(argv: list[str], limit: float) -> None:
        smpi.run(plat, sim_program, argv[1:], {}, limit)

    sim = _calib_run([str(sim_program)], simulated, args.sizes or CALIB_SIZES, 2, args.timeout)
    probes = {key: measured[key] for key in ("bcast_call_s", "reduce_call_s") if key in measured}
    return results.save(smpi.CALIBRATION, {
        "mpi": measured.get("mpi", ""), "mpi_env": mca_environment(), "eager_limit": smpi.EAGER_LIMIT, **probes,
        "points": measured["points"], "launches": [launch["points"] for launch in launches],
        "simulated": sim["points"], "derived": {"lat_s": cal.lat_s, "bw_Bps": cal.bw_Bps,
                                               "coll_entry_s": list(cal.coll_entry_s),
                                               **smpi.protocol_config(cal)}},
        transport="mpi", ranks=2)


def calibration_report(document: dict[str, Any]) -> Group:
    cal = smpi.parse_calibration(document, "")
    sim = {int(p["size"]): p for p in document.get("simulated", [])}
    table = report.table(
        "point-to-point calibration, 2 ranks on this machine (measured) and on its simulated copy",
        [Column("size", justify="right"), Column("ping-pong µs", justify="right"),
         Column("simulated µs", justify="right"), Column("error", justify="right"),
         Column("MPI_Send µs", justify="right"), Column("MPI_Isend µs", justify="right"),
         Column("MPI_Recv µs", justify="right"), Column("flood GB/s", justify="right")], [])
    for point in document["points"]:
        size = int(point["size"])
        other = sim.get(size)
        error = float(other["pingpong_s"]) / float(point["pingpong_s"]) - 1 if other else None
        table.add_row(report.fmt_size(size), report.fmt_number(point["pingpong_s"] * 1e6),
                      report.fmt_number(other["pingpong_s"] * 1e6) if other else report.MISSING,
                      f"{100 * error:+.0f}%" if error is not None else report.MISSING,
                      report.fmt_number(point["send_s"] * 1e6), report.fmt_number(point["isend_s"] * 1e6),
                      report.fmt_number(point["recv_s"] * 1e6), f"{point['flood_Bps'] / 1e9:.2f}")
    derived = Text(f"derived: wire latency {cal.lat_s * 1e9:.0f} ns one way, bandwidth "
                   f"{cal.bw_Bps / 1e9:.2f} GB/s, collective entry bcast {cal.coll_entry_s[0] * 1e9:.0f} ns, "
                   f"reduce {cal.coll_entry_s[1] * 1e9:.0f} ns; " + ", ".join(
                       f"{k}={v}" for k, v in smpi.protocol_config(cal).items()))
    return Group(table, derived)


def calibration_chart(document: dict[str, Any], path: Path) -> Path:
    figure = report.new_figure(7, 4.2)
    axes = figure.add_subplot()
    for key, label, points in (("pingpong_s", "ping-pong, measured", document["points"]),
                               ("pingpong_s", "ping-pong, simulated", document.get("simulated", [])),
                               ("send_s", "MPI_Send (os), measured", document["points"]),
                               ("recv_s", "MPI_Recv (or), measured", document["points"])):
        if points:
            axes.plot([p["size"] for p in points], [p[key] * 1e6 for p in points], marker="o", label=label)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("µs")
    axes.grid(alpha=0.3, which="both")
    axes.legend(fontsize="small")
    axes.set_title("SMPI calibration: this machine, 2 ranks (measured vs simulated)")
    figure.savefig(path, dpi=110)
    return path


# ---- validate -------------------------------------------------------------------------


def command_validate(args: argparse.Namespace) -> Path:
    cal = smpi.calibration()
    cost = bench_coll.op_cost() if args.op_cost else None
    jobs = [(ranks, op, label, number, name) for ranks in (2, OVERSUBSCRIBED_RANKS)
            for op in bench_coll.OPS for label, number, name in bench_coll.ALGORITHMS[op]
            if ranks == 2 or label in bench_coll.LINEAR_FAMILY]
    rows: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    for ranks, op, label, number, name in runner.steps(
            jobs, lambda j: f"validation {j[1]} {j[2]} ({j[0]} ranks, real and simulated)"):
        plat = smpi.this_machine(cal, ranks)
        smpi.write_platform(plat)
        config = {"config": f"tuned {label}", "algorithm": label, "mpi": "openmpi",
                  "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                          f"OMPI_MCA_coll_tuned_{op}_algorithm": str(number)}}
        sizes = args.sizes or VALIDATION_SIZES
        launches = [bench_coll.measure_real(op, config, ranks, sizes, args.iters, args.timeout)
                    for _ in range(args.launches)]
        real = {**launches[0], "points": fastest_launch(launches)}
        sim = bench_coll.measure_smpi(plat, op, label, name, sizes, args.smpi_iters, args.timeout, cost)
        if sim.get("error"):
            failures.append({"op": op, "algorithm": label, "ranks": ranks, "error": sim["error"]})
        rows += bench_coll.validation_rows(op, label, real, sim, ranks)
        runs.append({"op": op, "algorithm": label, "ranks": ranks, "launches": [run["points"] for run in launches]})
    return results.save(VALIDATION, {"calibration": cal.source, "mpi_env": mca_environment(),
                                     "op_cost": cost["source"] if cost else None,
                                     "launches": args.launches, "real_runs": runs,
                                     "smpi_cfg": smpi.protocol_config(cal),
                                     "rows": rows, "failed": failures, "summary": error_summary(rows),
                                     "by_size": error_by(rows, "size"), "by_op_impl": error_by(rows, "op", "impl")},
                        transport="mpi+simgrid-smpi", ranks=2)


def fastest_launch(launches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per size, the smallest native and hierarchical time over several
    launches of the same real configuration (pure): on this shared machine a
    launch's large messages are sometimes milliseconds slower throughout
    (its median too), and noise only adds time -- the calibration takes its
    minimum over repetitions likewise."""
    best: dict[int, dict[str, Any]] = {}
    for run in launches:
        for point in run["points"]:
            size = int(point["size"])
            if size not in best:
                best[size] = dict(point)
            else:
                for key in ("native_s", "hier_s"):
                    best[size][key] = min(float(best[size][key]), float(point[key]))
    return [best[size] for size in sorted(best)]


def error_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median and largest |error| of the rows that are performance (not oversubscribed)."""
    errors = sorted(abs(r["error"]) for r in rows if not r.get("oversubscribed"))
    if not errors:
        return {}
    mid = len(errors) // 2
    median = errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2
    return {"median_abs": median, "max_abs": errors[-1], "count": len(errors)}


def error_by(rows: list[dict[str, Any]], *keys: str) -> dict[str, dict[str, float]]:
    """error_summary of the performance rows grouped by the values of keys
    ("8", "bcast/hierarchical", ...), in the rows' order (pure)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if not row.get("oversubscribed"):
            groups.setdefault("/".join(str(row[key]) for key in keys), []).append(row)
    return {name: error_summary(members) for name, members in groups.items()}


def validation_report(document: dict[str, Any]) -> Group:
    parts: list[Any] = []
    for ranks in sorted({r["ranks"] for r in document["rows"]}):
        rows = [r for r in document["rows"] if r["ranks"] == ranks]
        over = any(r.get("oversubscribed") for r in rows)
        table = report.table(
            f"validation, {ranks} ranks: this machine (real) vs its simulated copy"
            + (" — OVERSUBSCRIBED: correctness only, the times are not performance" if over else ""),
            [Column("op"), Column("algorithm", no_wrap=True), Column("size", justify="right"), Column("impl"),
             Column("real µs", justify="right"), Column("simulated µs", justify="right"),
             Column("error", justify="right")], [])
        for row in rows:
            table.add_row(row["op"], row["algorithm"], report.fmt_size(row["size"]), row["impl"],
                          report.fmt_number(row["real_s"] * 1e6), report.fmt_number(row["sim_s"] * 1e6),
                          Text(f"{100 * row['error']:+.0f}%", style="dim" if over else ""))
        parts.append(table)
    summary = error_summary(document["rows"])
    if summary:
        parts.append(Text(f"2 ranks: median |error| {100 * summary['median_abs']:.0f}%, largest "
                          f"{100 * summary['max_abs']:.0f}% over {summary['count']} points"))
        for keys in (("size",), ("op", "impl")):
            parts.append(Text(f"  median |error| by {'/'.join(keys)}: " + ", ".join(
                f"{report.fmt_size(int(name)) if keys == ('size',) else name} {100 * one['median_abs']:.0f}%"
                for name, one in error_by(document["rows"], *keys).items())))
    for failure in document.get("failed", []):
        parts.append(Text(f"failed in SimGrid: {failure['op']} {failure['algorithm']} ({failure['ranks']} ranks): "
                          f"{failure['error']}", style="dim"))
    return Group(*parts)


def validation_chart(document: dict[str, Any], path: Path) -> Path:
    """Simulated vs real time of every 2-rank point, log-log, with the diagonal."""
    rows = [r for r in document["rows"] if not r.get("oversubscribed")]
    figure = report.new_figure(11, 4.5)
    for index, op in enumerate(bench_coll.OPS):
        axes = figure.add_subplot(1, 2, index + 1)
        mine = [r for r in rows if r["op"] == op]
        for label in dict.fromkeys(r["algorithm"] for r in mine):
            points = [r for r in mine if r["algorithm"] == label]
            axes.scatter([r["real_s"] * 1e6 for r in points], [r["sim_s"] * 1e6 for r in points],
                         label=label, s=18)
        if mine:
            low = min(min(r["real_s"], r["sim_s"]) for r in mine) * 1e6 / 1.5
            high = max(max(r["real_s"], r["sim_s"]) for r in mine) * 1e6 * 1.5
            axes.plot([low, high], [low, high], color="black", linestyle="--", linewidth=1)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("real µs (this machine, 2 ranks)")
        axes.set_ylabel("simulated µs")
        axes.set_title(f"{op}: simulated vs real")
        axes.grid(alpha=0.3, which="both")
        axes.legend(fontsize="x-small")
    figure.savefig(path, dpi=110)
    return path


# ---- opcost ------------------------------------------------------------------------


def command_opcost(args: argparse.Namespace) -> Path:
    """MPI_Reduce_local of MPI_SUM over doubles on one rank, by size."""
    program = runner.executable(bench_coll.BENCH)

    def run(argv: list[str], limit: float) -> None:
        runner.run_mpi(1, argv, timeout=limit)

    data = bench_coll._run_bench([str(program)], "opcost", args.sizes or bench_coll.OPCOST_SIZES, args.iters,
                                 run, args.timeout)
    bench_coll.op_cost_points(data["points"])
    return results.save(bench_coll.OPCOST, {"mpi": data["mpi"], "op": "MPI_SUM", "type": "MPI_DOUBLE",
                                            "points": data["points"]},
                        transport="mpi", ranks=1)


def opcost_report(document: dict[str, Any]) -> Group:
    table = report.table("cost of one application of MPI_SUM over doubles (MPI_Reduce_local, 1 rank, measured)",
                         [Column("size", justify="right"), Column("µs", justify="right"),
                          Column("ns per byte", justify="right")], [])
    for point in document["points"]:
        table.add_row(report.fmt_size(int(point["size"])), report.fmt_number(point["native_s"] * 1e6),
                      f"{point['native_s'] / int(point['size']) * 1e9:.3f}")
    return Group(table, Text("`weft project coll` charges each application of the op in a simulated reduce "
                             "the time of its size, linear between these sizes"))


def opcost_chart(document: dict[str, Any], path: Path) -> Path:
    figure = report.new_figure(7, 4.2)
    axes = figure.add_subplot()
    sizes = [int(p["size"]) for p in document["points"]]
    axes.plot(sizes, [p["native_s"] * 1e6 for p in document["points"]], marker="o")
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("µs per application")
    axes.grid(alpha=0.3, which="both")
    axes.set_title("MPI_SUM over doubles on this machine (MPI_Reduce_local)")
    figure.savefig(path, dpi=110)
    return path


# ---- command line -----------------------------------------------------------------------


def _show(args: argparse.Namespace, name: str, make: Callable[[argparse.Namespace], Path],
          render: Callable[[dict[str, Any]], Any], chart: results.Chart) -> None:
    results.measure_or_load(name, None if args.last else lambda: make(args), render, {".png": chart},
                            json_only=args.json_only)


# How `weft report` shows the files of calibrate, validate and opcost.
RENDERERS = {smpi.CALIBRATION: results.Renderer(calibration_report, {".png": calibration_chart}),
             VALIDATION: results.Renderer(validation_report, {".png": validation_chart}),
             bench_coll.OPCOST: results.Renderer(opcost_report, {".png": opcost_chart})}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("project", help="project a benchmark to other machines with SimGrid SMPI")
    targets = parser.add_subparsers(dest="target", metavar="BENCHMARK", required=True)
    coll = targets.add_parser("coll", help="hierarchical vs native bcast/reduce on the paper's machines",
                              description="Same as `weft bench coll --smpi`.")
    bench_coll.add_arguments(coll, smpi_default=True)

    calibrate = targets.add_parser(
        "calibrate", help="measure this machine's MPI point to point (2 ranks) for the simulated platforms",
        description="Ping-pong, per-message send/receive overheads and bandwidth between two ranks, "
        "written to the results directory as smpi-calibration-*.json; the platforms read the latest one.")
    calibrate.add_argument("--sizes", help=f"message sizes in bytes (default {CALIB_SIZES})")
    calibrate.add_argument("--reps", type=int, default=15, help="repetitions per size (minimum; default 15)")
    calibrate.add_argument("--launches", type=int, default=3,
                           help="launches of the calibration program, the fastest figure kept (default 3)")
    calibrate.add_argument("--timeout", type=float, default=600, metavar="S")
    calibrate.add_argument("--last", action="store_true", help="show the last calibration instead of measuring")
    calibrate.add_argument("--json", dest="json_only", action="store_true", help="print the results as JSON only")
    calibrate.set_defaults(func=lambda a: _show(a, smpi.CALIBRATION, command_calibrate, calibration_report,
                                                calibration_chart))

    validate = targets.add_parser(
        "validate", help="the collectives benchmark on this machine, real vs simulated, with the error",
        description="Every bcast/reduce algorithm on 2 real ranks and on the simulated copy of this machine "
        f"(and linear/chain/pipeline on {OVERSUBSCRIBED_RANKS} oversubscribed ranks, correctness only); "
        "the real time of a point is the fastest of --launches launches.")
    validate.add_argument("--sizes", help=f"message sizes in bytes (default {VALIDATION_SIZES})")
    validate.add_argument("--iters", type=int, default=50, help="timed iterations per real point (default 50)")
    validate.add_argument("--launches", type=int, default=3,
                          help="real launches per configuration, the fastest kept per size (default 3)")
    validate.add_argument("--smpi-iters", type=int, default=2, help="iterations per simulated point (default 2)")
    validate.add_argument("--timeout", type=float, default=600, metavar="S")
    validate.add_argument("--no-op-cost", dest="op_cost", action="store_false",
                          help="apply the reduction op in no simulated time, as SMPI does (default: charge "
                          "the cost measured by `weft project opcost`, as the projection does)")
    validate.add_argument("--last", action="store_true", help="show the last validation instead of running")
    validate.add_argument("--json", dest="json_only", action="store_true", help="print the results as JSON only")
    validate.set_defaults(func=lambda a: _show(a, VALIDATION, command_validate, validation_report,
                                               validation_chart))
    opcost = targets.add_parser(
        "opcost", help="measure the cost of applying MPI_SUM here, charged by `weft project coll` reduces",
        description="MPI_Reduce_local of MPI_SUM over doubles on one rank, by size (median over iterations), "
        "written to the results directory as coll-opcost-*.json; the projection charges each application of the op "
        "the time of its size, linear between the measured sizes.")
    opcost.add_argument("--sizes", help=f"message sizes in bytes (default {bench_coll.OPCOST_SIZES})")
    opcost.add_argument("--iters", type=int, default=200, help="timed applications per size (default 200)")
    opcost.add_argument("--timeout", type=float, default=300, metavar="S")
    opcost.add_argument("--last", action="store_true", help="show the last measurement instead of measuring")
    opcost.add_argument("--json", dest="json_only", action="store_true", help="print the results as JSON only")
    opcost.set_defaults(func=lambda a: _show(a, bench_coll.OPCOST, command_opcost, opcost_report, opcost_chart))
    summa = targets.add_parser("summa", help="simple vs hierarchical SUMMA on the paper's machines",
                               description="Same as `weft bench summa --smpi`.")
    bench_summa.add_arguments(summa, smpi_default=True)
    hvec = targets.add_parser("hvec", help="Algorithm 5, H_topo vs H_conf(i), on the paper's NTW24E5",
                              description="Same as `weft bench hvec --smpi`.")
    bench_hvec.add_arguments(hvec, smpi_default=True)
