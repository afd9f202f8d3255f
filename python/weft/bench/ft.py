"""`weft bench ft`: NAS FT with every transposition algorithm (exchange,
slabs, pencils; over MPI two-sided and weft one-sided), one after the other
in one run of apps/ft/ft on this machine.

A run may also name its FFTW planning ("exchange-mpi@estimate"), so that one
run with alternating trials compares the default plans (FFTW wisdom) with
estimated and measured ones; `--compare` is that comparison, and the
document's "summary" holds its ratios (see summarize()).

ft --json FILE writes, for one algorithm,
    {"benchmark": "ft", "class": "A", "nranks": 2, "algorithm": "slabs-weft",
     "time_s": 1.02, "mflops": 7010.3, "compute_time_s": 0.97,
     "comm_time_s": {"max": 0.06, "mean": 0.05},
     "messages": {"forward": {"count": 128, "bytes": 524288},
                  "inverse": {"count": 256, "bytes": 262144}, "total_per_rank": 1664},
     "fftw": "wisdom", "plan_time_s": 0.004,
     "wisdom": {"path": "...", "imported": true, "saved": false},
     "verified": true, ...}
"""

from __future__ import annotations

import argparse
import os
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
# MPI-3 one-sided puts: runnable by name, not in the default list (they are
# the stand-in for weft's puts under SimGrid, `weft project ft`).
RMA_ALGORITHMS = ("exchange-rma", "slabs-rma", "pencils-rma")
# The NPB way, against which every algorithm is compared.
BASELINE = "exchange-mpi"
REQUIRED = ("algorithm", "time_s", "mflops", "comm_time_s", "messages", "verified")
FFTW_MODES = ("wisdom", "estimate", "measure", "patient")
DEFAULT_FFTW = "wisdom"
ONE_SIDED = ("exchange-weft", "slabs-weft", "pencils-weft", "exchange-rma", "slabs-rma", "pencils-rma")
# --compare: the default plans of every algorithm but pencils-mpi (whose
# tens of thousands of outstanding sends take Open MPI minutes at class B),
# beside today's NPB-like baseline with estimated plans and two algorithms
# with plans measured on every run.
COMPARE = (
    "exchange-mpi", "slabs-mpi", "exchange-weft", "slabs-weft", "pencils-weft",
    "exchange-mpi@estimate", "exchange-mpi@measure", "slabs-weft@measure",
)
# Modifiers a run's label may end with (slabs-weft+tcp+thread): the
# settings they give every rank.  tcp moves the data over UCX's TCP
# transport (and Open MPI's), where the target's side of a put is done by
# the target's progress, not by the initiator's copy as on the direct path.
MODIFIERS = {
    "thread": {"WEFT_PROGRESS_THREAD": "1"},
    "ucx": {"WEFT_SHM": "0"},
    "tcp": {"WEFT_SHM": "0", "UCX_TLS": "tcp,self", "OMPI_MCA_btl": "tcp,self"},
}
# --overlap: exposed communication against compute per algorithm, the copy
# done by the initiator (direct path) or through UCX over TCP, with and
# without weft's progress thread.
OVERLAP = (
    "exchange-mpi", "slabs-mpi", "exchange-weft", "slabs-weft", "pencils-weft",
    "slabs-weft+thread", "pencils-weft+thread",
    "exchange-mpi+tcp", "slabs-mpi+tcp", "exchange-weft+tcp", "slabs-weft+tcp", "pencils-weft+tcp",
    "slabs-weft+tcp+thread", "pencils-weft+tcp+thread",
)
# The goals of the comparison: the default's best time at most this
# fraction of estimate exchange-mpi's, and at most measure's best.
GOAL_VS_ESTIMATE = 0.67
GOAL_VS_MEASURE = 1.0

NOTES = (
    "exposed comm. is the time inside communication calls (posting, sends or puts, waits, "
    "flush, barrier, all-to-all), the part of communication not hidden behind computation; "
    "the rest is compute. msgs and msg size: per rank, forward transposition (the paper's "
    "Table 1). vs NPB = exchange-mpi time ÷ this time (> 1: faster). A name@mode run plans "
    "its FFTs with --fftw mode instead of the run's default; FFTW planning is never timed.\n"
    "The machine is shared and noisy: compare algorithms within one run."
)


def split_label(label: str, default_fftw: str) -> tuple[str, str, dict[str, str]]:
    """"slabs-weft@measure+tcp" -> ("slabs-weft", "measure", the settings of
    tcp); a name without @ takes the run's default planning."""
    head, *mods = label.split("+")
    alg, _, mode = head.partition("@")
    env: dict[str, str] = {}
    for mod in mods:
        env.update(MODIFIERS[mod])
    return alg, mode or default_fftw, env


def measure(program: Path, cls: str, label: str, nranks: int, extra: list[str], timeout: float,
            default_fftw: str = DEFAULT_FFTW) -> dict[str, Any]:
    """Run ft once; its JSON report (with "label"), or {"algorithm", "label",
    "error"} when it fails without one (a failed algorithm should not cost
    the others' results)."""
    alg, mode, env = split_label(label, default_fftw)
    with tempfile.TemporaryDirectory(prefix="weft-ft-") as tmp:
        output = Path(tmp) / "ft.json"
        argv = [str(program), "--class", cls, "--alg", alg, "--json", str(output), *extra, "--fftw", mode]
        try:
            runner.run_mpi(nranks, argv, env=env, timeout=timeout)
        except WeftError as exc:
            # A run that is not verified still writes its report, which
            # says more than the exit status.
            if not output.is_file():
                return {"algorithm": alg, "label": label, "error": str(exc)}
        data = results.read_json(output)
    missing = [key for key in REQUIRED if not isinstance(data, dict) or key not in data]
    if missing:
        raise WeftError(f"ft wrote a report without {', '.join(missing)}")
    return {**data, "label": label}


def label_of(run: dict[str, Any]) -> str:
    return str(run.get("label", run["algorithm"]))


def table_label(run: dict[str, Any]) -> str:
    """The label in a table cell: the planning and the modifiers on lines of
    their own, so that the table keeps to 80 columns."""
    head, plus, mods = label_of(run).partition("+")
    alg, at, mode = head.partition("@")
    return "\n  ".join([alg, *([at + mode] if at else []), *([plus + mods] if plus else [])])


def best(trials: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest verified trial, as the paper reports the best of five,
    with every trial's time beside it; the first failure if none succeeded."""
    good = [t for t in trials if "error" not in t and t["verified"]]
    if not good:
        return next((t for t in trials if "error" in t), trials[0])
    return {
        **min(good, key=lambda t: t["time_s"]),
        "trial_times_s": [t.get("time_s") if "error" not in t and t["verified"] else None for t in trials],
        "plan_times_s": [t.get("plan_time_s") for t in trials],
    }


def exposed(run: dict[str, Any]) -> float:
    """Non-overlapped communication time: the mean over ranks of the time
    spent inside communication calls."""
    return float(run["comm_time_s"]["mean"])


def speedup(run: dict[str, Any], runs: list[dict[str, Any]]) -> float | None:
    """The baseline's time ÷ run's: exchange-mpi with the run's default
    planning (the plain name), else any exchange-mpi."""
    ok = [r for r in runs if r["algorithm"] == BASELINE and "error" not in r]
    base = next((r for r in ok if label_of(r) == BASELINE), ok[0] if ok else None)
    if base is None or "error" in run:
        return None
    return report.advantage(run["time_s"], base["time_s"], lower_is_better=True)


def _verified(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in runs if "error" not in r and r["verified"]]


def _fastest(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    return min(runs, key=lambda r: r["time_s"]) if runs else None


def _paired(best_of: list[dict[str, Any]], other: dict[str, Any]) -> float | None:
    """The median over trials of (fastest of best_of in trial i) ÷ (other in
    trial i): trials alternate, so both sides of each ratio saw the same
    moment of a shared machine."""
    ratios = []
    for i, base in enumerate(other.get("trial_times_s", [])):
        mine = [t for r in best_of if i < len(r.get("trial_times_s", [])) and (t := r["trial_times_s"][i])]
        if base and mine:
            ratios.append(min(mine) / base)
    return float(np.median(ratios)) if ratios else None


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The comparison's ratios (times: < 1 is faster), from the verified runs:
    the default planning's best algorithm against exchange-mpi@estimate and
    against the best @measure run, each as a ratio of best times and as the
    median of per-trial ratios; and, with the default planning, the best
    one-sided algorithm against the best two-sided one (best two-sided time
    ÷ best one-sided time: > 1, one-sided is faster)."""
    good = _verified(runs)
    default = [r for r in good if "@" not in label_of(r) and "+" not in label_of(r)]
    best = _fastest(default)
    out: dict[str, Any] = {"default_best": label_of(best) if best else None}
    if best is None:
        return out
    estimate = next((r for r in good if label_of(r) == f"{BASELINE}@estimate"), None)
    measured = _fastest([r for r in good if label_of(r).endswith("@measure")])
    for key, other, goal in (("vs_estimate_exchange", estimate, GOAL_VS_ESTIMATE),
                             ("vs_measure", measured, GOAL_VS_MEASURE)):
        if other is not None:
            out[key] = {"ratio": best["time_s"] / other["time_s"], "paired": _paired(default, other),
                        "other": label_of(other), "goal": goal}
    one = _fastest([r for r in default if r["algorithm"] in ONE_SIDED])
    two = _fastest([r for r in default if r["algorithm"] not in ONE_SIDED])
    if one and two:
        out["onesided_vs_twosided"] = {
            "ratio": two["time_s"] / one["time_s"], "one_sided": label_of(one), "two_sided": label_of(two),
            "paired": (lambda p: 1.0 / p if p else None)(_paired([r for r in default if r["algorithm"] in ONE_SIDED], two)),
        }
    plans = [t for r in good for t in r.get("plan_times_s", [r.get("plan_time_s")]) if t is not None]
    if plans:
        out["plan_time_s"] = {"max": max(plans), "min": min(plans)}
    return out


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
            table.add_row(table_label(run), *([report.MISSING] * 6), Text("failed", style="bold red"))
            continue
        forward = run["messages"]["forward"]
        table.add_row(
            table_label(run),
            f"{run['time_s']:.3f}",
            report.fmt_number(run["mflops"]),
            f"{exposed(run):.3f}",
            str(forward["count"]),
            report.fmt_size(forward["bytes"]),
            report.fmt_ratio(speedup(run, runs)),
            Text("yes", style="green") if run["verified"] else Text("NO", style="bold red"),
        )
    failures = [Text(f"{label_of(r)}: {r['error']}", style="red") for r in runs if "error" in r]
    return Group(table, *failures)


def _ratio_line(text: str, ratio: float, paired: float | None, goal: float | None, *, at_most: bool) -> Text:
    line = Text(f"{text}: {ratio:.2f}×")
    if paired is not None:
        line.append(f" (median of per-trial ratios {paired:.2f}×)")
    if goal is not None:
        met = ratio <= goal if at_most else ratio >= goal
        line.append(f"  goal {'≤' if at_most else '≥'} {goal:.2f}: ")
        line.append("met" if met else "not met", style="bold green" if met else "bold red")
    return line


def summary_lines(document: dict[str, Any]) -> list[Text]:
    """The comparison's ratios and the planning cost, when the runs allow them."""
    summary = summarize(document["runs"])
    best = summary.get("default_best")
    lines: list[Text] = []
    mode = document.get("fftw", DEFAULT_FFTW)
    for key, what in (("vs_estimate_exchange", "time ÷ {other}'s"), ("vs_measure", "time ÷ {other}'s")):
        if key in summary:
            item = summary[key]
            lines.append(_ratio_line(f"best with --fftw {mode} ({best}): " + what.format(other=item["other"]),
                                     item["ratio"], item["paired"], item["goal"], at_most=True))
    if "onesided_vs_twosided" in summary:
        item = summary["onesided_vs_twosided"]
        lines.append(_ratio_line(f"best one-sided ({item['one_sided']}) vs best two-sided ({item['two_sided']}),"
                                 " two-sided time ÷ one-sided", item["ratio"], item["paired"],
                                 1.0 if document["metadata"]["ranks"] > 1 else None, at_most=False))
    if "plan_time_s" in summary:
        plans = summary["plan_time_s"]
        lines.append(Text(f"FFTW planning, not timed: {plans['min']:.3f}–{plans['max']:.2f} s per run "
                          "(the most: a run that measured its plans; wisdom imported: milliseconds)"))
    return lines


def stacked_chart(document: dict[str, Any], path: Path) -> Path:
    """A PNG with one horizontal bar per algorithm: compute, then exposed
    communication, stacked."""
    runs = [r for r in document["runs"] if "error" not in r]
    labels = [label_of(r) for r in runs]
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
    """The table of the runs, the comparison's ratios, then the notes."""
    return Group(run_table(document), *summary_lines(document), Text(NOTES, style="dim"))


# What `weft bench ft` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": stacked_chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        if args.np < 1:
            raise WeftError(f"--np must be at least 1, not {args.np}")
        if args.trials < 1:
            raise WeftError(f"--trials must be at least 1, not {args.trials}")
        program = runner.executable(PROGRAM)
        extra = ["--pad", str(args.pad)]
        labels = list(COMPARE) if args.compare else list(OVERLAP) if args.overlap else args.algs
        # Trials go round the algorithms, so that a noisy moment of the
        # machine does not fall on one algorithm's trials alone.
        steps = [(label, trial) for trial in range(args.trials) for label in labels]
        trials: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
        for label, trial in runner.steps(steps, lambda step: f"FT class {args.cls} {step[0]}, trial {step[1] + 1}"):
            trials[label].append(measure(program, args.cls, label, args.np, extra, args.timeout, args.fftw))
        runs = [best(t) for t in trials.values()]
        fields = {"class": args.cls, "pad": args.pad, "fftw": args.fftw, "trials": args.trials, "runs": runs,
                  "summary": summarize(runs), "load_average": load_average()}
        return results.save(BENCHMARK, fields, transport="shm", ranks=args.np)

    shown = RENDERERS[BENCHMARK]
    document = results.measure_or_load(BENCHMARK, None if args.last else measure_all, shown.render, shown.charts,
                                       json_only=args.json_only)
    failed = [label_of(r) for r in document["runs"] if "error" in r or not r["verified"]]
    if failed and not args.last:
        raise WeftError(f"not verified or failed: {', '.join(failed)}")


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages when the run ended: how shared
    the machine was."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def algorithm_list(text: str) -> list[str]:
    """Comma-separated algorithms, each optionally NAME@MODE (its FFTW
    planning) and +MODIFIER... (settings of MODIFIERS)."""
    algs = [a.strip() for a in text.split(",") if a.strip()]
    known = ALGORITHMS + RMA_ALGORITHMS
    unknown = [a for a in algs if a.split("+")[0].partition("@")[0] not in known]
    if unknown or not algs:
        raise argparse.ArgumentTypeError(
            f"unknown algorithm {', '.join(unknown) or '(none)'}; choose from {', '.join(known)}"
        )
    modes = [a for a in algs if "@" in a and a.split("+")[0].partition("@")[2] not in FFTW_MODES]
    if modes:
        raise argparse.ArgumentTypeError(
            f"unknown FFTW planning in {', '.join(modes)}; after @ choose from {', '.join(FFTW_MODES)}"
        )
    mods = [a for a in algs if any(m not in MODIFIERS for m in a.split("+")[1:])]
    if mods:
        raise argparse.ArgumentTypeError(
            f"unknown modifier in {', '.join(mods)}; after + choose from {', '.join(MODIFIERS)}"
        )
    if len(set(algs)) != len(algs):
        raise argparse.ArgumentTypeError(f"an algorithm is named twice in {text}")
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
        help="comma-separated algorithms, each optionally NAME@MODE to plan its FFTs with --fftw MODE, "
        f"and +MOD... with MOD one of {', '.join(MODIFIERS)} (tcp: UCX and Open MPI over TCP; ucx: weft "
        "without its direct path; thread: weft's progress thread) (default: all six)",
    )
    parser.add_argument(
        "--overlap", action="store_true",
        help=f"instead of --algs, exposed communication against compute over the direct path and TCP, "
        f"with and without the progress thread: {','.join(OVERLAP)}",
    )
    parser.add_argument(
        "--compare", action="store_true",
        help=f"instead of --algs, compare the default planning with estimated and measured plans: "
        f"{','.join(COMPARE)}",
    )
    parser.add_argument(
        "--trials", type=int, default=1, metavar="N", help="runs per algorithm, the fastest is kept (default: 1)"
    )
    parser.add_argument("--pad", type=int, default=0, metavar="N", help="row padding passed to ft (default: 0)")
    parser.add_argument(
        "--fftw", choices=FFTW_MODES, default=DEFAULT_FFTW,
        help="FFTW planning of the plain algorithm names (default: wisdom, measured once per machine and "
        "shape and kept in $WEFT_FFTW_WISDOM or ~/.cache/weft)",
    )
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument(
        "--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON, without table or plot"
    )
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
