"""`weft bench latbw`: round-trip latency and flood bandwidth of weft's
one-sided put/get against MPI two-sided messages across message sizes, over
shared memory and over TCP, as in Figs. 2-4 of the one-sided/overlap paper.

--sizes LIST or -m MIN:MAX choose the sizes of both (default: 8 B to 64 KiB
for latency, to 4 MiB for bandwidth), --iters the most round trips or
messages of a point, --warmup the untimed ones before it.

bench/weft_bench_latbw --json FILE writes
    {"benchmark": "latbw", "transport": "<UCX transports>", "ucx_tls": "...",
     "window": 64, "iters": 20000, "warmup": 0,
     "latency_sizes": [8, 16, ...], "bandwidth_sizes": [8, 16, ...],
     "peak_MBps": 11920.3, "peak_kind": "memcpy" | "tcp-stream",
     "latency": [{"impl": "weft-put", "size": 8, "us": 0.03}, ...],
     "bandwidth": [{"impl": "weft-put-nbi", "size": 8, "MBps": 910.0}, ...]}

The goals are reported, not enforced: one-sided latency at most two-sided
at every size, and one-sided flood bandwidth reaching 90% of the path's peak
at a smaller size than two-sided.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from rich.console import Group
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench.rma import TRANSPORT_ENV, add_size_options, add_warmup_option, count_args, count_type, counts_note
from weft.core import report, results, runner

BENCH = "weft_bench_latbw"
BENCHMARK = "latbw"

LATENCY_IMPLS = {"weft-put": "weft put", "weft-get": "weft get", "mpi-block": "MPI blocking",
                 "mpi-nonblock": "MPI non-blocking"}
ONE_SIDED = ("weft-put", "weft-get")
TWO_SIDED = ("mpi-block", "mpi-nonblock")
BANDWIDTH_IMPLS = {"weft-put-nbi": "weft put_nbi", "mpi-isend": "MPI Isend/Irecv"}
PEAK_SHARE = 0.9
PEAK_KINDS = {"memcpy": "single-core memcpy of 4 MiB", "tcp-stream": "TCP stream over loopback"}
# The largest size the program takes with its window of 64 messages: the
# window of the largest size within its 2 GiB segment.
WINDOW = 64
MAX_SIZE = min(1 << 30, (2 << 30) // WINDOW)


def by_size(points: Any, unit: str, program: str = "weft_bench_latbw") -> dict[int, dict[str, float]]:
    """Points of one kind as {size: {impl: value}}, sizes ascending."""
    if not isinstance(points, list):
        raise WeftError(f"{program} output has no list of {unit} points")
    table: dict[int, dict[str, float]] = {}
    for point in points:
        try:
            table.setdefault(int(point["size"]), {})[str(point["impl"])] = float(point[unit])
        except (KeyError, TypeError, ValueError):
            raise WeftError(f"{program} wrote a malformed point: {point!r}") from None
    return dict(sorted(table.items()))


@dataclass(frozen=True)
class LatencyRow:
    size: int
    values: dict[str, float]

    @property
    def one_sided_wins(self) -> bool | None:
        """Whether every one-sided operation is no slower than the faster
        two-sided ping-pong; None when a value is missing."""
        mine = [self.values.get(impl) for impl in ONE_SIDED]
        theirs = [self.values.get(impl) for impl in TWO_SIDED]
        if None in mine or None in theirs:
            return None
        return max(mine) <= min(theirs)  # type: ignore[type-var]


def latency_rows(run: dict[str, Any]) -> list[LatencyRow]:
    return [LatencyRow(size, values) for size, values in by_size(run.get("latency"), "us").items()]


def peak_shares(run: dict[str, Any]) -> dict[int, dict[str, float]]:
    """Bandwidth per size as a fraction of the run's peak."""
    peak = float(run.get("peak_MBps") or 0)
    if peak <= 0:
        raise WeftError("weft_bench_latbw output has no positive peak_MBps")
    return {size: {impl: value / peak for impl, value in values.items()}
            for size, values in by_size(run.get("bandwidth"), "MBps").items()}


def crossover(shares: dict[int, dict[str, float]], impl: str, share: float = PEAK_SHARE) -> int | None:
    """The smallest size at which impl reaches share of the peak; None if it never does."""
    return next((size for size, values in shares.items() if values.get(impl, 0.0) >= share), None)


def verdicts(run: dict[str, Any]) -> dict[str, bool | None]:
    """The two goals for one run: latency (one-sided ≤ two-sided at every
    size) and bandwidth (weft reaches 90% of peak at a smaller size than MPI;
    None when neither does)."""
    wins = [row.one_sided_wins for row in latency_rows(run)]
    shares = peak_shares(run)
    mine, theirs = crossover(shares, "weft-put-nbi"), crossover(shares, "mpi-isend")
    if mine is None and theirs is None:
        bandwidth = None
    else:
        bandwidth = mine is not None and (theirs is None or mine < theirs)
    return {"latency": all(w is True for w in wins) if wins else None, "bandwidth": bandwidth}


def measure(program: Path, tls: str, timeout: float, iters: int | None = None, warmup: int | None = None,
            sizes: list[int] | None = None) -> dict[str, Any]:
    """Run weft_bench_latbw once over one transport (None: the program's
    default); returns its run record."""
    with tempfile.TemporaryDirectory(prefix="weft-latbw-") as tmp:
        output = Path(tmp) / "latbw.json"
        runner.run_mpi(2, [str(program), "--json", str(output), *count_args(iters, warmup, sizes)],
                       env=TRANSPORT_ENV[tls], timeout=timeout)
        data = results.read_json(output)
    if not isinstance(data, dict):
        raise WeftError("weft_bench_latbw output is not a JSON object")
    run = {"tls": tls, **data}
    latency_rows(run)  # reject malformed output before it is saved
    peak_shares(run)
    return run


def yes_no(value: bool | None) -> Text:
    if value is None:
        return Text(report.MISSING, style="dim")
    return Text("yes", style="bold green") if value else Text("NO", style="bold red")


def fmt_percent(share: float | None) -> str:
    return report.MISSING if share is None else f"{100 * share:.0f}%"


def fmt_crossover(size: int | None) -> str:
    return f"≥ {report.fmt_size(size)}" if size is not None else "never"


def run_report(run: dict[str, Any]) -> Group:
    """Latency and bandwidth tables of one transport, with the goals."""
    tls = run["tls"]
    latency = report.table(
        f"{tls}: round-trip latency in µs",
        [Column("size", justify="right", no_wrap=True),
         *(Column(label, justify="right") for label in LATENCY_IMPLS.values()),
         Column("one-sided ≤ two-sided?", justify="right")],
        [],
    )
    for row in latency_rows(run):
        latency.add_row(report.fmt_size(row.size),
                        *(report.fmt_number(row.values.get(impl)) for impl in LATENCY_IMPLS),
                        yes_no(row.one_sided_wins))
    shares = peak_shares(run)
    bandwidth = report.table(
        f"{tls}: flood bandwidth, % of the peak {report.fmt_number(run['peak_MBps'])} MB/s "
        f"({PEAK_KINDS.get(run.get('peak_kind', ''), run.get('peak_kind', '?'))})",
        [Column("size", justify="right", no_wrap=True),
         *(Column(label, justify="right") for label in BANDWIDTH_IMPLS.values())],
        [],
    )
    for size, values in shares.items():
        bandwidth.add_row(report.fmt_size(size), *(fmt_percent(values.get(impl)) for impl in BANDWIDTH_IMPLS))
    reached = Text("90% of peak reached at: " + ", ".join(
        f"{label} {fmt_crossover(crossover(shares, impl))}" for impl, label in BANDWIDTH_IMPLS.items()))
    goals = verdicts(run)
    summary = Text.assemble("goals: one-sided latency ≤ two-sided at every size: ", yes_no(goals["latency"]),
                            "; weft reaches 90% of peak at a smaller size than MPI: ", yes_no(goals["bandwidth"]))
    heading = Text.assemble((f"weft vs MPI two-sided over {tls}", "bold"),
                            f": 2 ranks on one node, UCX transport {run.get('transport', 'unknown')}")
    return Group(heading, counts_note(run, "round trips or messages per point, at most"), latency, bandwidth,
                 reached, summary, "")


def _figure(title: str) -> tuple[Figure, Any]:
    figure = report.new_figure(8, 5)
    axes = figure.add_subplot()
    axes.set_title(title)
    axes.set_xscale("log", base=2)
    axes.grid(alpha=0.3, which="both")
    return figure, axes


def latency_chart(document: dict[str, Any], path: Path) -> Path:
    """Round-trip latency vs size, log-log, a line per implementation and transport."""
    figure, axes = _figure(f"Round-trip latency, 2 ranks on {document['metadata']['hostname']}")
    for run in document["runs"]:
        rows = latency_rows(run)
        for impl, label in LATENCY_IMPLS.items():
            points = [(row.size, row.values[impl]) for row in rows if impl in row.values]
            if points:
                axes.plot(*zip(*points), marker="o", markersize=3, label=f"{label} [{run['tls']}]",
                          linestyle="-" if impl in ONE_SIDED else "--")
    axes.set_yscale("log")
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("round trip (µs)")
    axes.legend(fontsize="small")
    figure.savefig(path, dpi=120)
    return path


def bandwidth_chart(document: dict[str, Any], path: Path) -> Path:
    """Flood bandwidth as % of each transport's peak vs size, log-x."""
    figure, axes = _figure(f"Flood bandwidth, 2 ranks on {document['metadata']['hostname']}")
    for run in document["runs"]:
        shares = peak_shares(run)
        for impl, label in BANDWIDTH_IMPLS.items():
            points = [(size, 100 * values[impl]) for size, values in shares.items() if impl in values]
            if points:
                axes.plot(*zip(*points), marker="o", markersize=3, label=f"{label} [{run['tls']}]",
                          linestyle="-" if impl.startswith("weft") else "--")
    axes.axhline(100 * PEAK_SHARE, color="black", linestyle=":", linewidth=1)
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("% of peak (memcpy for shm, TCP stream for tcp)")
    axes.legend(fontsize="small")
    figure.savefig(path, dpi=120)
    return path


def render(document: dict[str, Any]) -> Group:
    """The tables of every transport measured."""
    return Group(*map(run_report, document["runs"]))


# What `weft bench latbw` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render, {"-latency.png": latency_chart, "-bandwidth.png": bandwidth_chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        program = runner.executable(BENCH)
        transports = list(TRANSPORT_ENV) if args.tls == "both" else [args.tls]
        runs = [measure(program, tls, args.timeout, args.iters, args.warmup, args.sizes)
                for tls in runner.steps(transports, lambda tls: f"weft_bench_latbw over {tls}")]
        return results.save(BENCHMARK, {"runs": runs}, transport="+".join(transports), ranks=2)

    shown = RENDERERS[BENCHMARK]
    results.measure_or_load(BENCHMARK, None if args.last else measure_all, shown.render, shown.charts,
                            json_only=args.json_only)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "latbw",
        help="latency and flood bandwidth of weft put/get vs MPI two-sided, by size",
        description="Run bench/weft_bench_latbw: round-trip latency (by default 8 B to 64 KiB) of weft put/get vs MPI "
        "blocking and non-blocking ping-pong, and flood bandwidth (by default 8 B to 4 MiB) of weft put_nbi vs "
        "MPI_Isend/MPI_Irecv as a share of the path's peak. Results go to the results directory (JSON and "
        "two PNGs).",
    )
    parser.add_argument(
        "--tls", choices=[*TRANSPORT_ENV, "both"], default="shm",
        help="transport: shm, tcp (UCX_TLS=tcp,self, Open MPI btl tcp,self) or both (default: shm)",
    )
    parser.add_argument(
        "--iters", type=count_type(1), metavar="N",
        help="the most round trips or messages of a point, which otherwise runs for about 0.1 s "
        "(default: 20000)",
    )
    add_warmup_option(parser, "0: only the calibration of each point, 5 round trips or one window")
    add_size_options(parser, MAX_SIZE, "8 B, 16 B, ... 64 KiB for latency, ... 4 MiB for bandwidth")
    parser.add_argument("--timeout", type=float, default=300, metavar="S", help="seconds allowed per run (default: 300)")
    parser.add_argument("--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON only")
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
