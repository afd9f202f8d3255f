"""`weft bench ft`: NAS FT with every transposition algorithm (exchange,
slabs, pencils; over MPI two-sided and weft one-sided), one after the other
in one run of apps/ft/ft on this machine.

ft --json FILE writes, for one algorithm,
    {"benchmark": "ft", "class": "A", "nranks": 2, "algorithm": "slabs-weft",
     "time_s": 1.02, "mflops": 7010.3, "compute_time_s": 0.97,
     "comm_time_s": {"max": 0.06, "mean": 0.05},
     "messages": {"forward": {"count": 128, "bytes": 524288},
                  "inverse": {"count": 256, "bytes": 262144}, "total_per_rank": 1664},
     "verified": true, ...}
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.core import report, results, runner

PROGRAM = "ft"
BENCHMARK = "ft"
CLASSES = ("S", "W", "A", "B", "C")
ALGORITHMS = ("exchange-mpi", "slabs-mpi", "pencils-mpi", "exchange-weft", "slabs-weft", "pencils-weft")
# The NPB way, against which every algorithm is compared.
BASELINE = "exchange-mpi"
REQUIRED = ("algorithm", "time_s", "mflops", "comm_time_s", "messages", "verified")

NOTES = (
    "exposed comm. is the time inside communication calls (posting, sends or puts, waits, "
    "flush, barrier, all-to-all), the part of communication not hidden behind computation; "
    "the rest is compute. msgs and msg size: per rank, forward transposition (the paper's "
    "Table 1). vs NPB = exchange-mpi time ÷ this time (> 1: faster).\n"
    "The machine is shared and noisy: compare algorithms within one run."
)


def measure(program: Path, cls: str, alg: str, nranks: int, extra: list[str], timeout: float) -> dict[str, Any]:
    """Run ft once; its JSON report, or {"algorithm", "error"} when it fails
    without one (a failed algorithm should not cost the others' results)."""
    with tempfile.TemporaryDirectory(prefix="weft-ft-") as tmp:
        output = Path(tmp) / "ft.json"
        argv = [str(program), "--class", cls, "--alg", alg, "--json", str(output), *extra]
        try:
            runner.run_mpi(nranks, argv, timeout=timeout)
        except WeftError as exc:
            # A run that is not verified still writes its report, which
            # says more than the exit status.
            if not output.is_file():
                return {"algorithm": alg, "error": str(exc)}
        data = results.read_json(output)
    missing = [key for key in REQUIRED if not isinstance(data, dict) or key not in data]
    if missing:
        raise WeftError(f"ft wrote a report without {', '.join(missing)}")
    return data


def best(trials: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest verified trial, as the paper reports the best of five,
    with every trial's time beside it; the first failure if none succeeded."""
    good = [t for t in trials if "error" not in t and t["verified"]]
    if not good:
        return next((t for t in trials if "error" in t), trials[0])
    return {**min(good, key=lambda t: t["time_s"]), "trial_times_s": [t.get("time_s") for t in trials]}


def exposed(run: dict[str, Any]) -> float:
    """Non-overlapped communication time: the mean over ranks of the time
    spent inside communication calls."""
    return float(run["comm_time_s"]["mean"])


def speedup(run: dict[str, Any], runs: list[dict[str, Any]]) -> float | None:
    base = next((r for r in runs if r["algorithm"] == BASELINE and "error" not in r), None)
    if base is None or "error" in run:
        return None
    return report.advantage(run["time_s"], base["time_s"], lower_is_better=True)


def numeric_column(header: str) -> Column:
    """A right-aligned column whose header may wrap between words, never inside one."""
    return Column(header, justify="right", min_width=max(len(word) for word in header.split()))


def run_table(document: dict[str, Any]) -> Group:
    """One row per algorithm: time, Mop/s, exposed communication (the chart
    shows it against compute), messages of the forward transposition and
    their size, verification."""
    runs = document["runs"]
    meta = document["metadata"]
    columns = [
        Column("algorithm", no_wrap=True),
        *(numeric_column(h) for h in ("time s", "Mop/s", "exposed comm. s", "msgs")),
        Column("msg size", justify="right", no_wrap=True),
        numeric_column("vs NPB"),
        Column("ok"),
    ]
    table = report.table(
        f"NAS FT class {document['class']}, {meta['ranks']} ranks on {meta['hostname']}", columns, []
    )
    for run in runs:
        if "error" in run:
            table.add_row(run["algorithm"], *([report.MISSING] * 6), Text("failed", style="bold red"))
            continue
        forward = run["messages"]["forward"]
        table.add_row(
            run["algorithm"],
            f"{run['time_s']:.3f}",
            report.fmt_number(run["mflops"]),
            f"{exposed(run):.3f}",
            str(forward["count"]),
            report.fmt_size(forward["bytes"]),
            report.fmt_ratio(speedup(run, runs)),
            Text("yes", style="green") if run["verified"] else Text("NO", style="bold red"),
        )
    failures = [Text(f"{r['algorithm']}: {r['error']}", style="red") for r in runs if "error" in r]
    return Group(table, *failures)


def stacked_chart(document: dict[str, Any], path: Path) -> Path:
    """A PNG with one horizontal bar per algorithm: compute, then exposed
    communication, stacked."""
    runs = [r for r in document["runs"] if "error" not in r]
    labels = [r["algorithm"] for r in runs]
    comm = np.array([exposed(r) for r in runs])
    compute = np.array([r["time_s"] for r in runs]) - comm
    figure = report.new_figure(8, 1.5 + 0.5 * len(runs))
    axes = figure.add_subplot()
    positions = np.arange(len(runs))
    axes.barh(positions, compute, label="compute")
    axes.barh(positions, comm, left=compute, label="exposed communication")
    # One pathological algorithm (pencils over Open MPI takes ~20× longer)
    # would flatten every other bar: clip the axis and write its time.
    totals = compute + comm
    limit = 3 * float(np.median(totals)) if len(runs) else 0.0
    if len(runs) > 2 and totals.max() > limit:
        axes.set_xlim(0, limit)
        for position, total in zip(positions, totals):
            if total > limit:
                axes.text(limit * 0.98, position, f"{total:.1f} s →", ha="right", va="center",
                          color="white", fontweight="bold")
    axes.set_yticks(positions, labels)
    axes.invert_yaxis()
    axes.set_xlabel("time (s)")
    meta = document["metadata"]
    axes.set_title(f"NAS FT class {document['class']}, {meta['ranks']} ranks on {meta['hostname']} ({meta['date'][:10]})")
    axes.grid(axis="x", alpha=0.3)
    figure.legend(loc="outside lower center", ncols=2, fontsize="small")
    figure.savefig(path, dpi=120)
    return path


def render(document: dict[str, Any]) -> Group:
    """The table of the runs, then the notes."""
    return Group(run_table(document), Text(NOTES, style="dim"))


# What `weft bench ft` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": stacked_chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        if args.np < 1:
            raise WeftError(f"--np must be at least 1, not {args.np}")
        if args.trials < 1:
            raise WeftError(f"--trials must be at least 1, not {args.trials}")
        program = runner.executable(PROGRAM)
        extra = ["--pad", str(args.pad), "--fftw", args.fftw]
        # Trials go round the algorithms, so that a noisy moment of the
        # machine does not fall on one algorithm's trials alone.
        steps = [(alg, trial) for trial in range(args.trials) for alg in args.algs]
        trials: dict[str, list[dict[str, Any]]] = {alg: [] for alg in args.algs}
        for alg, trial in runner.steps(steps, lambda step: f"FT class {args.cls} {step[0]}, trial {step[1] + 1}"):
            trials[alg].append(measure(program, args.cls, alg, args.np, extra, args.timeout))
        runs = [best(t) for t in trials.values()]
        fields = {"class": args.cls, "pad": args.pad, "fftw": args.fftw, "trials": args.trials, "runs": runs}
        return results.save(BENCHMARK, fields, transport="shm", ranks=args.np)

    shown = RENDERERS[BENCHMARK]
    document = results.measure_or_load(BENCHMARK, None if args.last else measure_all, shown.render, shown.charts,
                                       json_only=args.json_only)
    failed = [r["algorithm"] for r in document["runs"] if "error" in r or not r["verified"]]
    if failed and not args.last:
        raise WeftError(f"not verified or failed: {', '.join(failed)}")


def algorithm_list(text: str) -> list[str]:
    algs = [a.strip() for a in text.split(",") if a.strip()]
    unknown = [a for a in algs if a not in ALGORITHMS]
    if unknown or not algs:
        raise argparse.ArgumentTypeError(
            f"unknown algorithm {', '.join(unknown) or '(none)'}; choose from {', '.join(ALGORITHMS)}"
        )
    return algs


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "ft",
        help="NAS FT: exchange, slabs and pencils over MPI and weft",
        description="Run apps/ft/ft with each algorithm on this machine and compare them in one "
        "run: time, Mop/s, compute vs exposed communication, messages. Results are saved under "
        "the results directory (JSON and a PNG of compute and exposed communication).",
    )
    parser.add_argument("--class", dest="cls", choices=CLASSES, default="A", help="NPB class (default: A)")
    parser.add_argument("--np", type=runner.ranks_type(), default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument(
        "--algs", type=algorithm_list, default=list(ALGORITHMS), metavar="A,B",
        help="comma-separated algorithms (default: all six)",
    )
    parser.add_argument(
        "--trials", type=int, default=1, metavar="N", help="runs per algorithm, the fastest is kept (default: 1)"
    )
    parser.add_argument("--pad", type=int, default=0, metavar="N", help="row padding passed to ft (default: 0)")
    parser.add_argument("--fftw", choices=("estimate", "measure"), default="estimate", help="FFTW planning (default: estimate)")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument(
        "--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON, without table or plot"
    )
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
