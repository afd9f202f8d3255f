"""`weft bench rma`: weft's one-sided operations against raw UCX, MPI RMA
and MPI two-sided, measured side by side in one run of
bench/weft_bench_rma on 2 ranks of this machine.

weft_bench_rma --json FILE writes
    {"benchmark": "rma", "nranks": 2, "transport": "<UCX transport>",
     "results": [{"impl": "weft", "op": "put_rate", "size": 8,
                  "value": 24.1, "unit": "Mmsg/s"}, ...]}
where some implementations lack some operations.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column, Table
from rich.text import Text

from weft import WeftError, report, results, runner

BENCH = "bench/weft_bench_rma"
BENCHMARK = "rma"

# Each transport and the settings that select it: UCX's for weft and UCX,
# Open MPI's for MPI two-sided (other MPIs ignore OMPI_ variables).
TRANSPORT_ENV: dict[str, dict[str, str]] = {
    "shm": {},
    "tcp": {"UCX_TLS": "tcp,self", "OMPI_MCA_btl": "tcp,self"},
}
# What a reader must know about a transport's comparison.
TRANSPORT_NOTES = {
    "tcp": "MPI RMA has no TCP path in Open MPI 4.1 (its window stays in shared memory): "
    "vs MPI RMA is not like for like here.",
}

IMPL_LABELS = {"weft": "weft", "ucx": "UCX", "mpi-rma": "MPI RMA", "mpi-2sided": "MPI 2-sided"}
# The peers weft is compared with, and the ratio each comparison aims for:
# against raw UCX the ratio is weft's own overhead.
PEER_GOALS = {"ucx": 0.95, "mpi-rma": 1.0, "mpi-2sided": 1.0}
# Operations by name; the unit says whether a row is a latency or a rate.
OP_NAMES = {
    "put_lat": "put",
    "get_lat": "get",
    "pingpong_lat": "ping-pong",
    "put_rate": "put",
    "msg_rate": "message",
}


@dataclass(frozen=True)
class Row:
    """One operation at one size, with the value each implementation measured
    (the median of its rounds) and, when the program kept them, the rounds."""

    op: str
    size: int
    unit: str
    values: dict[str, float]
    rounds: dict[str, list[float]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return OP_NAMES.get(self.op, self.op)

    @property
    def label(self) -> str:
        """Operation, kind and size, e.g. "put latency 8 B"."""
        kind = "latency" if report.is_latency(self.unit) else "rate"
        what = f"{self.name} {kind}" if self.op in OP_NAMES else self.op
        return f"{what} {report.fmt_size(self.size)}"

    def ratio(self, peer: str) -> float | None:
        """weft's advantage over peer (> 1: weft is faster).  With rounds on
        both sides, the median of the ratios of rounds measured next to each
        other, which a burst of load on the shared machine disturbs less than
        the ratio of the two medians."""
        lower = report.is_latency(self.unit)
        mine, theirs = self.rounds.get("weft"), self.rounds.get(peer)
        if mine and theirs and len(mine) == len(theirs):
            pairs = [report.advantage(w, o, lower_is_better=lower) for w, o in zip(mine, theirs)]
            if all(p is not None for p in pairs):
                return statistics.median(p for p in pairs if p is not None)
        return report.advantage(self.values.get("weft"), self.values.get(peer), lower_is_better=lower)


def parse_rows(entries: Any) -> list[Row]:
    """Group result entries by operation and size, in a stable order:
    known operations first, then by size."""
    if not isinstance(entries, list):
        raise WeftError("weft_bench_rma output has no list of results")
    grouped: dict[tuple[str, int], Row] = {}
    for entry in entries:
        try:
            key = (str(entry["op"]), int(entry["size"]))
            row = grouped.setdefault(key, Row(key[0], key[1], str(entry["unit"]), {}))
            row.values[str(entry["impl"])] = float(entry["value"])
            if "rounds" in entry:
                row.rounds[str(entry["impl"])] = [float(v) for v in entry["rounds"]]
        except (KeyError, TypeError, ValueError):
            raise WeftError(f"weft_bench_rma wrote a malformed result entry: {entry!r}") from None
    order = list(OP_NAMES)
    return sorted(
        grouped.values(),
        key=lambda r: (order.index(r.op) if r.op in order else len(order), r.op, r.size),
    )


def measure(program: Path, tls: str, nranks: int, iters: int | None, timeout: float) -> dict[str, Any]:
    """Run weft_bench_rma once over one transport; returns its run record."""
    with tempfile.TemporaryDirectory(prefix="weft-rma-") as tmp:
        output = Path(tmp) / "rma.json"
        argv = [str(program), "--json", str(output)]
        if iters is not None:
            argv += ["--iters", str(iters)]
        runner.run_mpi(nranks, argv, env=TRANSPORT_ENV[tls], timeout=timeout)
        data = results.read_json(output)
    if not isinstance(data, dict):
        raise WeftError("weft_bench_rma output is not a JSON object")
    parse_rows(data.get("results"))  # reject malformed entries before they are saved
    return {"tls": tls, "nranks": nranks, "transport": "unknown", **data}


# The target-computes case: gets over TCP from a rank that computes without
# calling weft, with and without weft's progress thread.
BUSY_TLS = "tcp"
BUSY_IMPLS = {"weft": "no progress thread", "weft+progress-thread": "progress thread"}
BUSY_OPS = {"get_lat_busy": "get latency, mean", "get_max_busy": "get latency, worst"}


def measure_busy(program: Path, nranks: int, timeout: float) -> dict[str, Any]:
    """Run weft_bench_rma --busy-target over TCP without and with the
    progress thread; returns one run record holding both."""
    entries: list[Any] = []
    transport = "unknown"
    for thread in ("0", "1"):
        with tempfile.TemporaryDirectory(prefix="weft-rma-") as tmp:
            output = Path(tmp) / "busy.json"
            env = {**TRANSPORT_ENV[BUSY_TLS], "WEFT_PROGRESS_THREAD": thread}
            runner.run_mpi(nranks, [str(program), "--busy-target", "--rounds", "3", "--json", str(output)],
                           env=env, timeout=timeout)
            data = results.read_json(output)
        if not isinstance(data, dict):
            raise WeftError("weft_bench_rma output is not a JSON object")
        entries += data.get("results", [])
        transport = data.get("transport", transport)
    parse_rows(entries)
    return {"tls": BUSY_TLS, "kind": "busy-target", "nranks": nranks, "transport": transport, "results": entries}


def busy_report(run: dict[str, Any]) -> Group:
    """Gets from a target that computes for up to a second without calling
    weft: how long they wait without and with the progress thread."""
    rows = parse_rows(run["results"])
    table = report.table(
        f"{run['tls']}: get of 8 B from a target that is computing, in µs",
        [Column("measure", no_wrap=True), *(numeric_column(label) for label in BUSY_IMPLS.values()),
         numeric_column("speed-up")],
        [],
    )
    for row in rows:
        if row.op not in BUSY_OPS:
            continue
        without, with_thread = (row.values.get(impl) for impl in BUSY_IMPLS)
        table.add_row(
            BUSY_OPS[row.op],
            *(report.fmt_number(row.values.get(impl)) for impl in BUSY_IMPLS),
            report.fmt_ratio(report.advantage(with_thread, without, lower_is_better=True)),
        )
    heading = Text.assemble(
        ("weft progress thread", "bold"),
        f": rank 1 computes for up to 1 s without calling weft while rank 0 gets from it "
        f"(UCX transport {run['transport']}, where gets need the target's help)",
    )
    return Group(heading, table, "")


NOTES = (
    "vs X is weft's advantage over X: > 1 means weft is faster. Green marks a met goal: "
    "1, or 0.95 against UCX, where the ratio is weft's own overhead.\n"
    "The machine is shared and noisy: these are ratios from one run, not reference figures."
)


def numeric_column(header: str) -> Column:
    """A right-aligned column whose header may wrap between words, never inside one."""
    return Column(header, justify="right", min_width=max(len(word) for word in header.split()))


def unit_table(tls: str, unit: str, rows: list[Row]) -> Table:
    """The rows of one unit: latencies or rates, a row per operation and size."""
    if report.is_latency(unit):
        title = f"{tls}: latency in {report.fmt_unit(unit)}, vs X = X ÷ weft"
    else:
        title = f"{tls}: rate in {report.fmt_unit(unit)}, vs X = weft ÷ X"
    columns = [
        Column("operation", no_wrap=True),
        Column("size", justify="right", no_wrap=True),
        *(numeric_column(label) for label in IMPL_LABELS.values()),
        *(numeric_column(f"vs {IMPL_LABELS[peer]}") for peer in PEER_GOALS),
    ]
    table = report.table(title, columns, [])
    for index, row in enumerate(rows):
        table.add_row(
            row.name,
            report.fmt_size(row.size),
            *(report.fmt_number(row.values.get(impl)) for impl in IMPL_LABELS),
            *(report.fmt_ratio(row.ratio(peer), goal) for peer, goal in PEER_GOALS.items()),
            # A rule between operations keeps the sizes of one operation together.
            end_section=index + 1 < len(rows) and rows[index + 1].op != row.op,
        )
    return table


def run_report(run: dict[str, Any]) -> Group:
    """What one run measured: where, then a table per unit (latencies, rates)."""
    if run.get("kind") == "busy-target":
        return busy_report(run)
    rows = parse_rows(run["results"])
    units = dict.fromkeys(row.unit for row in rows)
    tables = [unit_table(run["tls"], unit, [r for r in rows if r.unit == unit]) for unit in units]
    heading = Text.assemble(
        (f"weft RMA over {run['tls']}", "bold"),
        f" vs UCX, MPI RMA and MPI two-sided: {run['nranks']} ranks on one node, "
        f"UCX transport {run['transport']}",
    )
    notes = [Text(TRANSPORT_NOTES[run["tls"]], style="yellow")] if run["tls"] in TRANSPORT_NOTES else []
    return Group(heading, *notes, *tables, "")


def ratio_chart(document: dict[str, Any], path: Path) -> Path:
    """A PNG of weft's advantage over each peer, for every row of every run
    that has a peer to compare with."""
    runs = document["runs"]
    groups: list[str] = []
    series: dict[str, list[float | None]] = {f"vs {IMPL_LABELS[peer]}": [] for peer in PEER_GOALS}
    for run in runs:
        for row in parse_rows(run["results"]):
            ratios = {peer: row.ratio(peer) for peer in PEER_GOALS}
            if all(ratio is None for ratio in ratios.values()):
                continue
            groups.append(row.label + (f" [{run['tls']}]" if len(runs) > 1 else ""))
            for peer, ratio in ratios.items():
                series[f"vs {IMPL_LABELS[peer]}"].append(ratio)
    meta = document["metadata"]
    return report.grouped_bar_chart(
        path,
        groups,
        series,
        title=f"weft RMA, {meta['ranks']} ranks on {meta['hostname']} ({meta['date'][:10]})",
        xlabel="weft's advantage (rate: weft ÷ other, latency: other ÷ weft; > 1: weft faster)",
    )


def command(args: argparse.Namespace) -> None:
    if args.last:
        document = results.load_latest(BENCHMARK)
    else:
        program = runner.executable(BENCH)
        transports = list(TRANSPORT_ENV) if args.tls == "both" else [args.tls]
        steps = transports + ([] if args.no_busy else ["busy"])
        runs = [
            measure_busy(program, args.np, args.timeout)
            if step == "busy"
            else measure(program, step, args.np, args.iters, args.timeout)
            for step in runner.steps(
                steps,
                lambda step: "gets from a computing target, tcp" if step == "busy" else f"weft_bench_rma over {step}",
            )
        ]
        path = results.save(BENCHMARK, {"runs": runs}, transport="+".join(transports), ranks=args.np)
        document = results.load(path)
    if args.json_only:
        print(json.dumps(document, indent=2))
        return
    for run in document["runs"]:
        report.console.print(run_report(run))
    report.console.print(Text(NOTES, style="dim"))
    if not args.last:
        png = ratio_chart(document, path.with_suffix(".png"))
        report.console.print(f"[dim]saved {path} and {png.name}[/dim]")


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "rma",
        help="weft put/get vs UCX, MPI RMA and MPI two-sided",
        description="Run bench/weft_bench_rma on this machine and compare weft with raw UCX, "
        "MPI RMA and MPI two-sided, as ratios from one run. Results are saved under "
        "bench/results/ (JSON and a PNG of the ratios).",
    )
    parser.add_argument("--np", type=int, default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument(
        "--tls",
        choices=[*TRANSPORT_ENV, "both"],
        default="shm",
        help="transport: shm (UCX and MPI defaults), tcp (UCX_TLS=tcp,self, Open MPI btl tcp,self) "
        "or both (default: shm)",
    )
    parser.add_argument("--iters", type=int, metavar="N", help="iterations per measurement (default: the program's)")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument(
        "--json-only", action="store_true", help="save the results and print them as JSON, without tables or plot"
    )
    parser.add_argument(
        "--no-busy", action="store_true", help="skip the gets from a computing target (with and without progress thread)"
    )
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
