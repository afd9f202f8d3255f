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
  weft project hvec        Algorithm 5, H_topo vs H_conf(i) (`weft bench hvec --smpi`);
  weft project ft          NAS FT, exchange vs slabs and pencils (MPI, and MPI-RMA puts
                           as the one-sided stand-in) on the overlap paper's clusters:
                           the analytic overlap model everywhere, SimGrid SMPI where the
                           message count allows, speedups over exchange-mpi
                           (ft-projection-*.json).

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
from weft.bench import ft as bench_ft
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


# ---- ft ------------------------------------------------------------------------------

FT_PROJECTION = "ft-projection"
FT_SMPI = "ft_smpi"
FT_ALGS = ("exchange-mpi", "slabs-mpi", "pencils-mpi", "exchange-rma", "slabs-rma", "pencils-rma")
FT_DIMS = {"S": (64, 64, 64, 6), "W": (128, 128, 32, 6), "A": (256, 256, 128, 6),
           "B": (512, 256, 256, 20), "C": (512, 512, 512, 20)}
# SimGrid's flow-level network model re-shares the links at each message's
# start and end, so a simulation's cost grows faster than the messages in
# flight: on this (shared, 2-core) machine the 16-rank runs of class B
# slabs (3840 messages per phase) take seconds to a minute, a 64-rank
# exchange (4032 larger ones) more than four minutes, and class C slabs at
# 256 ranks (130 560) would take days.
FT_SMPI_MAX_MESSAGES = 4000


def ft_here_costs(document: dict[str, Any]) -> dict[str, float]:
    """Seconds per unit of each kind of computation from an apps/ft JSON
    report (pure): its compute_s over its compute_units."""
    try:
        seconds, units = document["compute_s"], document["compute_units"]
        costs = {k: float(seconds[k]) / float(units[k]) for k in smpi.FT_KINDS}
    except (KeyError, TypeError, ZeroDivisionError) as error:
        raise WeftError(f"the ft report has no usable compute profile: {error!r}") from None
    if any(c <= 0 for c in costs.values()):
        raise WeftError("the ft report has a kind of computation that took no time")
    return costs


def ft_fft_rate(document: dict[str, Any]) -> float:
    """Flops per second of the FFT kinds of an apps/ft report (pure)."""
    flops = sum(float(document["compute_units"][k]) for k in smpi.FT_FFT_KINDS)
    return flops / sum(float(document["compute_s"][k]) for k in smpi.FT_FFT_KINDS)


def parse_costs(text: str) -> dict[str, float]:
    """--rates plane=S,row=S,...: seconds per unit of every kind."""
    costs: dict[str, float] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if name.strip() not in smpi.FT_KINDS:
            raise WeftError(f"--rates: unknown kind '{name}' (expected {', '.join(smpi.FT_KINDS)})")
        try:
            costs[name.strip()] = float(value)
        except ValueError:
            raise WeftError(f"--rates: {name} must be seconds per unit, not '{value}'") from None
    missing = [k for k in smpi.FT_KINDS if k not in costs]
    if missing or any(v <= 0 for v in costs.values()):
        raise WeftError(f"--rates needs a positive cost for every kind (missing: {', '.join(missing) or 'none'})")
    return costs


def ft_points(platforms: list[smpi.FtPlatform], classes: list[str], ranks: list[int],
              algs: list[str]) -> list[tuple[smpi.FtPlatform, str, int, str]]:
    """Every (platform, class, ranks, algorithm) that the class's grid and
    the platform's nodes allow (pure)."""
    out = []
    for fp in platforms:
        for cls in classes:
            nx, ny, nz, _ = FT_DIMS[cls]
            for p in ranks:
                if ny % p or nz % p or -(-p // fp.cores_per_node) > fp.max_nodes:
                    continue
                out += [(fp, cls, p, alg) for alg in algs]
    return out


def ft_speedups(rows: list[dict[str, Any]], source: str) -> dict[tuple[str, str, int], dict[str, float]]:
    """Per (platform, class, ranks), each algorithm's speedup over
    exchange-mpi from one source ("model" or "smpi"), both times from it (pure)."""
    times: dict[tuple[str, str, int], dict[str, float]] = {}
    for row in rows:
        if row.get(f"{source}_s") is not None:
            times.setdefault((row["platform"], row["class"], row["ranks"]), {})[row["algorithm"]] = row[f"{source}_s"]
    return {key: {alg: t["exchange-mpi"] / v for alg, v in t.items()}
            for key, t in times.items() if "exchange-mpi" in t}


def command_ft(args: argparse.Namespace) -> Path:
    if args.rates:
        here = parse_costs(args.rates)
        calib: dict[str, Any] = {"source": "given with --rates"}
        rate = len(smpi.FT_FFT_KINDS) / sum(here[k] for k in smpi.FT_FFT_KINDS)
    else:
        report_doc = bench_ft.measure(runner.executable(bench_ft.PROGRAM), args.calib_class, "exchange-mpi", 1,
                                      [], args.timeout)
        if "error" in report_doc:
            raise WeftError(f"the calibration run of ft failed: {report_doc['error']}")
        here, rate = ft_here_costs(report_doc), ft_fft_rate(report_doc)
        calib = {"source": f"ft --class {args.calib_class} --alg exchange-mpi, 1 rank, on this machine",
                 "time_s": report_doc["time_s"], "compute_s": report_doc["compute_s"],
                 "compute_units": report_doc["compute_units"]}
    wanted = [fp for fp in smpi.FT_PLATFORMS if fp.name in args.platforms]
    if not wanted:
        raise WeftError(f"no platform among {args.platforms}; choose from "
                        + ", ".join(fp.name for fp in smpi.FT_PLATFORMS))
    points = ft_points(wanted, args.classes, args.ranks, args.algs)
    program = runner.executable(FT_SMPI) if args.smpi_max_messages > 0 else None
    rows: list[dict[str, Any]] = []
    for fp, cls, ranks, alg in runner.steps(points, lambda pt: f"FT {pt[0].name} class {pt[1]}, {pt[2]} ranks, {pt[3]}"):
        nx, ny, nz, niter = FT_DIMS[cls]
        factor = smpi.ft_speed_factor(fp, rate)
        cost = {k: v * factor for k, v in here.items()}
        model = smpi.ft_model(fp, (nx, ny, nz), niter, ranks, alg, cost)
        count, size = smpi.ft_messages((nx, ny, nz), ranks, alg)["inverse"]
        row: dict[str, Any] = {"platform": fp.name, "class": cls, "ranks": ranks, "algorithm": alg,
                               "messages_per_rank": count, "message_bytes": size,
                               "model_s": model["time_s"], "wire_s": model["wire_s"], "smpi_s": None}
        if program is not None and count * ranks <= args.smpi_max_messages:
            row.update(ft_simulate(fp, cls, ranks, alg, cost, niter, program, args.timeout))
        elif program is not None:
            row["smpi_skipped"] = f"{count * ranks} messages per phase > --smpi-max-messages {args.smpi_max_messages}"
        rows.append(row)
    return results.save(FT_PROJECTION, {
        "simulated": True, "calibration": calib, "here_cost_per_unit": here, "here_fft_flops_per_s": rate,
        "efficiency": smpi.FT_PAPER_EFFICIENCY,
        "platforms": [{"name": fp.name, "machine": fp.machine, "sources": fp.sources, "paper": fp.paper,
                       "paper_class": fp.paper_class, "cores_per_node": fp.cores_per_node,
                       "peak_gflops": fp.peak_gflops, "lat_s": fp.lat_s, "bw_Bps": fp.bw_Bps,
                       "o_send_s": fp.o_send_s, "o_recv_s": fp.o_recv_s, "o_put_s": fp.o_put_s,
                       "speed_factor": smpi.ft_speed_factor(fp, rate)} for fp in wanted],
        "rows": rows}, transport="smpi", ranks=max((r["ranks"] for r in rows), default=0))


def ft_simulate(fp: smpi.FtPlatform, cls: str, ranks: int, alg: str, cost: dict[str, float], niter: int,
                program: Path, timeout: float) -> dict[str, Any]:
    """One SMPI run of ft_smpi with the computation charged, one iteration:
    the whole run's time is the first part plus niter iterations."""
    plat = smpi.ft_platform(fp, ranks)
    smpi.write_platform(plat)
    with tempfile.TemporaryDirectory(prefix="weft-ft-smpi-") as tmp:
        output = Path(tmp) / "ft.json"
        argv = ["--class", cls, "--alg", alg, "--iters", "1", "--fftw", "estimate",
                "--simulate", ",".join(f"{k}={v:.6g}" for k, v in cost.items()),
                "--put-overhead", f"{fp.o_put_s:.6g}", "--json", str(output)]
        try:
            smpi.run(plat, program, argv, {}, timeout)
            data = results.read_json(output)
        except WeftError as error:
            return {"smpi_error": str(error).splitlines()[0][:200]}
    return {"smpi_s": float(data["time_first_s"]) + niter * float(data["time_per_iter_s"]),
            "smpi_comm_s": float(data["comm_time_s"]["mean"])}


def _fmt_speedup(value: float | None) -> str:
    return report.MISSING if value is None else f"{value:.2f}×"


def ft_report(document: dict[str, Any]) -> Group:
    rows = document["rows"]
    algs = [a for a in FT_ALGS if any(r["algorithm"] == a for r in rows) and a != "exchange-mpi"]
    model, sim = ft_speedups(rows, "model"), ft_speedups(rows, "smpi")
    table = report.table(
        "NAS FT on the overlap paper's clusters, SIMULATED: speedup over exchange-mpi "
        "(model; SMPI in brackets where it ran)",
        [Column("platform", no_wrap=True), Column("class"), Column("ranks", justify="right"),
         Column("exchange-mpi s", justify="right"), *(Column(a, justify="right") for a in algs),
         Column("paper (over NAS Fortran)")], [])
    paper = {p["name"]: p["paper"] for p in document["platforms"]}
    for key in sorted(model, key=lambda k: ([p["name"] for p in document["platforms"]].index(k[0]), k[1], k[2])):
        base = next(r for r in rows if (r["platform"], r["class"], r["ranks"]) == key and r["algorithm"] == "exchange-mpi")
        cells = []
        for alg in algs:
            text = _fmt_speedup(model[key].get(alg))
            if key in sim and alg in sim[key]:
                text += f" ({sim[key][alg]:.2f}×)"
            cells.append(text)
        table.add_row(key[0], key[1], str(key[2]), report.fmt_number(base["model_s"]), *cells,
                      paper[key[0]] if key[2] == max(k[2] for k in model if k[0] == key[0]) else "")
    both = [(r["model_s"], r["smpi_s"]) for r in rows if r.get("smpi_s")]
    lines = [Text(f"compute: this machine's FFT rate {document['here_fft_flops_per_s'] / 1e9:.2f} GFlop/s "
                  f"({document['calibration']['source']}), scaled to each processor's peak x "
                  f"{document['efficiency']}")]
    if both:
        errors = sorted(abs(m / s - 1) for m, s in both)
        lines.append(Text(f"model vs SMPI: median |error| {100 * errors[len(errors) // 2]:.0f}%, largest "
                          f"{100 * errors[-1]:.0f}% over {len(both)} runs"))
    failed = [r for r in rows if r.get("smpi_error")]
    for r in failed:
        lines.append(Text(f"SMPI failed: {r['platform']} {r['class']} {r['ranks']} {r['algorithm']}: "
                          f"{r['smpi_error']}", style="dim"))
    return Group(table, *lines)


def ft_chart(document: dict[str, Any], path: Path) -> Path:
    rows = document["rows"]
    plats = [p["name"] for p in document["platforms"]]
    model, sim = ft_speedups(rows, "model"), ft_speedups(rows, "smpi")
    figure = report.new_figure(4.2 * max(len(plats), 1), 4.4)
    styles = {"B": "--", "C": "-"}
    for index, name in enumerate(plats):
        axes = figure.add_subplot(1, len(plats), index + 1)
        axes.axhspan(1.75, 1.9, color="grey", alpha=0.25, label="paper: 1.75–1.9× over NAS Fortran")
        axes.axhline(1.0, color="black", linewidth=0.8)
        for alg in FT_ALGS[1:]:
            for cls in sorted({k[1] for k in model if k[0] == name}):
                keys = sorted(k for k in model if k[0] == name and k[1] == cls and alg in model[k])
                if not keys:
                    continue
                line, = axes.plot([k[2] for k in keys], [model[k][alg] for k in keys], styles.get(cls, ":"),
                                  marker="o", markersize=3, label=f"{alg} class {cls}")
                simulated = [k for k in keys if k in sim and alg in sim[k]]
                axes.scatter([k[2] for k in simulated], [sim[k][alg] for k in simulated], s=40,
                             facecolors="none", edgecolors=line.get_color())
        axes.set_xscale("log", base=2)
        axes.set_xlabel("ranks")
        axes.set_ylabel("speedup over exchange-mpi")
        axes.set_title(f"{name} (SIMULATED)", fontsize="medium")
        axes.grid(alpha=0.3)
        if index == 0:
            axes.legend(fontsize="xx-small", loc="upper left")
    figure.suptitle("NAS FT projected to the overlap paper's clusters: model lines, SMPI circles")
    figure.savefig(path, dpi=110)
    return path


def _ranks_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"ranks must be integers, not '{text}'") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"ranks must be positive integers, not '{text}'")
    return values


# ---- command line -----------------------------------------------------------------------


def _show(args: argparse.Namespace, name: str, make: Callable[[argparse.Namespace], Path],
          render: Callable[[dict[str, Any]], Any], chart: results.Chart) -> None:
    results.measure_or_load(name, None if args.last else lambda: make(args), render, {".png": chart},
                            json_only=args.json_only)


# How `weft report` shows the files of calibrate, validate and opcost.
RENDERERS = {smpi.CALIBRATION: results.Renderer(calibration_report, {".png": calibration_chart}),
             VALIDATION: results.Renderer(validation_report, {".png": validation_chart}),
             bench_coll.OPCOST: results.Renderer(opcost_report, {".png": opcost_chart}),
             FT_PROJECTION: results.Renderer(ft_report, {".png": ft_chart})}


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
    ft = targets.add_parser(
        "ft", help="NAS FT, exchange vs slabs/pencils, on the overlap paper's clusters (simulated)",
        description="The analytic overlap model of apps/ft at every point, and SimGrid SMPI runs of "
        "ft_smpi (computation charged from this machine's measured rates, scaled to each platform) "
        "where the messages per phase allow; speedups over exchange-mpi beside the paper's figures.")
    ft.add_argument("--classes", nargs="+", choices=sorted(FT_DIMS), default=["B", "C"], help="NPB classes (default B C)")
    ft.add_argument("--ranks", type=_ranks_list, default=[16, 64, 256], metavar="N,N",
                    help="rank counts (default 16,64,256)")
    ft.add_argument("--platforms", nargs="+", default=[fp.name for fp in smpi.FT_PLATFORMS],
                    help="platforms (default all: " + ", ".join(fp.name for fp in smpi.FT_PLATFORMS) + ")")
    ft.add_argument("--algs", type=lambda t: [a for a in t.split(",") if a], default=list(FT_ALGS),
                    metavar="A,B", help="algorithms (default all six; exchange-mpi is the baseline)")
    ft.add_argument("--calib-class", choices=sorted(FT_DIMS), default="A",
                    help="class of the 1-rank ft run that measures this machine's rates (default A)")
    ft.add_argument("--rates", help="seconds per unit of each kind (plane=S,row=S,final=S,evolve=S,init=S,"
                    "twiddle=S) instead of measuring")
    ft.add_argument("--smpi-max-messages", type=int, default=FT_SMPI_MAX_MESSAGES, metavar="N",
                    help=f"simulate with SMPI only points of at most N messages per phase (default "
                    f"{FT_SMPI_MAX_MESSAGES}; 0: model only)")
    ft.add_argument("--timeout", type=float, default=900, metavar="S", help="seconds per run (default 900)")
    ft.add_argument("--last", action="store_true", help="show the last projection instead of running")
    ft.add_argument("--json", dest="json_only", action="store_true", help="print the results as JSON only")
    ft.set_defaults(func=lambda a: _show(a, FT_PROJECTION, command_ft, ft_report, ft_chart))
