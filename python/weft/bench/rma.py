"""`weft bench rma`: weft's one-sided operations against raw UCX, MPI RMA
and MPI two-sided, measured side by side in one run of
bench/weft_bench_rma on 2 ranks of this machine.

With --peers (the default over shared memory), the same invocation also
measures OpenSHMEM (bench/peers/shmem_peer.c, built with oshcc, run with
oshrun), ucx_perftest (ucp_put_bw, ucp_am_lat, ucp_get) and a plain
single-core memcpy, and puts them in one table with weft's ratio to each:
8-byte put rate, put + flush latency, get latency, bandwidth 8 B ... 4 MiB.

--sizes LIST or -m MIN:MAX choose the sizes of the bandwidth sweep (and
run it without --peers too), --iters and --warmup the iterations of each
timed loop and the untimed ones before it.

weft_bench_rma --json FILE writes
    {"benchmark": "rma", "nranks": 2, "transport": "<UCX transport>",
     "iters": 100000, "warmup": 0, "window": 256, "rounds": 5,
     "sweep_sizes": [8, 64, ...],
     "results": [{"impl": "weft", "op": "put_rate", "size": 8,
                  "value": 24.1, "unit": "Mmsg/s"}, ...]}
where some implementations lack some operations.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Column, Table
from rich.text import Text

from weft import WeftError
from weft.core import report, results, runner

BENCH = "weft_bench_rma"
BENCHMARK = "rma"

# Each transport and the settings that select it: UCX's for weft and UCX,
# Open MPI's for MPI two-sided (other MPIs ignore OMPI_ variables).  Over
# shm weft takes its direct path; over tcp the direct path is off, or weft
# would not use TCP between ranks of one node.
TRANSPORT_ENV: dict[str, dict[str, str]] = {
    "shm": {},
    "tcp": {"UCX_TLS": "tcp,self", "OMPI_MCA_btl": "tcp,self", "WEFT_SHM": "0"},
}
# What a reader must know about a transport's comparison.
TRANSPORT_NOTES = {
    "tcp": "MPI RMA has no TCP path in Open MPI 4.1 (its window stays in shared memory): "
    "vs MPI RMA is not like for like here.",
}

IMPL_LABELS = {"weft": "weft", "ucx": "UCX", "mpi-rma": "MPI RMA", "mpi-2sided": "MPI 2-sided"}
# On the direct path, beside weft's calls (the inline forms of weft_inline.h):
# the library calls behind them, the same calls through a kept target
# (weft_target_t) and plain loads and stores through weft_ptr.
DIRECT_IMPLS = ("weft-lib", "weft-target", "store", "load")
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

    def ratio(self, peer: str, impl: str = "weft") -> float | None:
        """impl's advantage over peer (> 1: impl is faster).  With rounds on
        both sides, the median of the ratios of rounds measured next to each
        other, which a burst of load on the shared machine disturbs less than
        the ratio of the two medians."""
        lower = report.is_latency(self.unit)
        mine, theirs = self.rounds.get(impl), self.rounds.get(peer)
        if mine and theirs and len(mine) == len(theirs):
            pairs = [report.advantage(w, o, lower_is_better=lower) for w, o in zip(mine, theirs)]
            if all(p is not None for p in pairs):
                return statistics.median(p for p in pairs if p is not None)
        return report.advantage(self.values.get(impl), self.values.get(peer), lower_is_better=lower)


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


# ---- sizes, iterations and warm-up --------------------------------------

# The largest size weft_bench_rma's segment holds, and how many sizes a sweep
# may have (as the program's MAX_SIZE and MAX_SIZES).
MAX_SIZE = 4 << 20
MAX_SIZES = 32
# Puts between flushes in the programs' loops: --iters is at least one window.
WINDOW = 256
SIZE = re.compile(r"(?P<digits>[0-9]+)(?P<suffix>[A-Za-z]*)")
SIZE_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str, most: int) -> int:
    """A size in bytes from 1 to most: digits and an optional K, M or G
    (either case: 2^10, 2^20, 2^30), as the benchmark programs take it."""
    if not text:
        raise argparse.ArgumentTypeError("an empty size")
    if text.startswith("-"):
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    match = SIZE.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (digits, then K, M or G)")
    suffix = match["suffix"]
    if suffix.upper() not in SIZE_SUFFIXES:
        raise argparse.ArgumentTypeError(f"{text!r} has an unknown suffix {suffix!r} (K, M or G)")
    size = int(match["digits"]) * SIZE_SUFFIXES[suffix.upper()]
    if size == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is zero")
    if size > most:
        raise argparse.ArgumentTypeError(
            f"{text!r} is more than {report.fmt_size(most)}, the most the benchmark's segment allows")
    return size


def sizes_type(most: int) -> Callable[[str], list[int]]:
    """An argparse type for --sizes: a comma-separated list of sizes."""
    def parse(text: str) -> list[int]:
        sizes = [parse_size(item, most) for item in text.split(",")]
        if len(sizes) > MAX_SIZES:
            raise argparse.ArgumentTypeError(f"more than {MAX_SIZES} sizes")
        return sizes
    return parse


def size_range_type(most: int) -> Callable[[str], list[int]]:
    """An argparse type for -m MIN:MAX: MIN, 2 MIN, 4 MIN, ... up to MAX, as
    OSU's benchmarks take it."""
    def parse(text: str) -> list[int]:
        low, colon, high = text.partition(":")
        if not colon:
            raise argparse.ArgumentTypeError(f"{text!r} is not MIN:MAX")
        first, last = parse_size(low, most), parse_size(high, most)
        if first > last:
            raise argparse.ArgumentTypeError(f"MIN {first} is more than MAX {last}")
        sizes = [first]
        while sizes[-1] * 2 <= last:
            sizes.append(sizes[-1] * 2)
        return sizes
    return parse


def count_type(least: int, why: str = "") -> Callable[[str], int]:
    """An argparse type for a count of iterations, at least `least` (why:
    what says so)."""
    def parse(text: str) -> int:
        if text.startswith("-"):
            raise argparse.ArgumentTypeError(f"{text!r} is negative")
        if not text.isdigit() or not text.isascii():
            raise argparse.ArgumentTypeError(f"{text!r} is not a count (0, 1, 2, ...)")
        value = int(text)
        if value < least:
            raise argparse.ArgumentTypeError(f"{value}: at least {least}{why}")
        return value
    return parse


def add_size_options(parser: argparse.ArgumentParser, most: int, default: str) -> None:
    """--sizes and -m, one or the other, both into args.sizes."""
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument(
        "--sizes", type=sizes_type(most), metavar="LIST",
        help=f"message sizes, e.g. 8,64,4K,1M (K, M, G: 2^10, 2^20, 2^30), each at most "
        f"{report.fmt_size(most)}, at most {MAX_SIZES} of them (default: {default})",
    )
    sizes.add_argument(
        "-m", dest="sizes", type=size_range_type(most), metavar="MIN:MAX",
        help="message sizes MIN, 2 MIN, 4 MIN, ... up to MAX, as OSU's benchmarks take them",
    )


def add_warmup_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--warmup", type=count_type(0), metavar="N",
        help=f"untimed iterations before each timed measurement (default: {default})",
    )


def counts_note(run: dict[str, Any], what: str = "iterations per timed loop") -> Text:
    """The iterations and warm-up a run had, as its program recorded them
    (nothing for results saved before they were)."""
    if "iters" not in run:
        return Text("")
    return Text(f"{what}: {run['iters']}, untimed before each (--warmup): {run.get('warmup', 0)}",
                style="dim")


def count_args(iters: int | None, warmup: int | None, sizes: list[int] | None) -> list[str]:
    """The options of a benchmark program for what was asked (None: its default)."""
    argv = [] if iters is None else ["--iters", str(iters)]
    argv += [] if warmup is None else ["--warmup", str(warmup)]
    return argv + ([] if sizes is None else ["--sizes", ",".join(map(str, sizes))])


def measure(program: Path, tls: str, nranks: int, iters: int | None, timeout: float,
            sweep: bool = False, rounds: int | None = None, warmup: int | None = None,
            sizes: list[int] | None = None) -> dict[str, Any]:
    """Run weft_bench_rma once over one transport (with the bandwidth sweep
    when asked, or at the sizes given); returns its run record."""
    with tempfile.TemporaryDirectory(prefix="weft-rma-") as tmp:
        output = Path(tmp) / "rma.json"
        argv = [str(program), "--json", str(output), *count_args(iters, warmup, sizes)]
        if sweep and sizes is None:
            argv.append("--sweep")
        if rounds is not None:
            argv += ["--rounds", str(rounds)]
        runner.run_mpi(nranks, argv, env=TRANSPORT_ENV[tls], timeout=timeout)
        data = results.read_json(output)
    if not isinstance(data, dict):
        raise WeftError("weft_bench_rma output is not a JSON object")
    parse_rows(data.get("results"))  # reject malformed entries before they are saved
    return {"tls": tls, "nranks": nranks, "transport": "unknown", **data}


# The target-computes case: gets over TCP from a rank that computes without
# calling weft, without weft's progress thread, with it on the computing
# rank's cores (WEFT_PROGRESS_BIND=rank, the default), and with it on a
# core of rank 0 when the program reports one that rank 1 does not run on
# ("rank0_cpu"): where, over TCP loopback, the requests arrive.
BUSY_TLS = "tcp"
BUSY_IMPLS = {"weft": "no progress thread", "weft+progress-thread": "progress thread",
              "weft+progress-thread-other-core": "thread on rank 0's core"}
BUSY_OPS = {"get_lat_idle": "get latency from the idle target, mean", "get_lat_busy": "get latency, mean",
            "get_max_busy": "get latency, worst", "compute_slowdown": "computing thread slowed (%)",
            "weft_cpu_per_get": "target's CPU per get served"}
# A get from a computing target within this multiple of one from an idle
# target without a thread is the progress thread's goal.
BUSY_GOAL = 3.0
# A sleeping thread of rank 1 woken: the floor of a sleeping thread's answer
# (on rank 1's core by another thread there, from rank 0's core, and from
# rank 0's core while rank 1 computes on its own: the thread beside the
# computation).
WAKE_OPS = {"wake_same_core": "on its core", "wake_other_core": "from rank 0's core",
            "wake_busy_core": "from rank 0's core to its computing core"}


def busy_once(program: Path, nranks: int, timeout: float, env: dict[str, str],
              counts: list[str]) -> dict[str, Any]:
    """One run of weft_bench_rma --busy-target; its JSON document."""
    with tempfile.TemporaryDirectory(prefix="weft-rma-") as tmp:
        output = Path(tmp) / "busy.json"
        runner.run_mpi(nranks, [str(program), "--busy-target", "--rounds", "3", "--json", str(output), *counts],
                       env={**TRANSPORT_ENV[BUSY_TLS], **env}, timeout=timeout)
        data = results.read_json(output)
    if not isinstance(data, dict):
        raise WeftError("weft_bench_rma output is not a JSON object")
    return data


def measure_busy(program: Path, nranks: int, timeout: float, iters: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]:
    """Run weft_bench_rma --busy-target over TCP without the progress
    thread, with it, and with it bound to a core of rank 0 if there is one
    rank 1 does not run on; returns one run record holding them all."""
    counts = count_args(iters, warmup, None)
    first = busy_once(program, nranks, timeout, {"WEFT_PROGRESS_THREAD": "0"}, counts)
    beside = {"WEFT_PROGRESS_THREAD": "1", "WEFT_PROGRESS_BIND": "rank"}
    runs = [(first, None), (busy_once(program, nranks, timeout, beside, counts), None)]
    other = first.get("rank0_cpu")
    if isinstance(other, int) and not isinstance(other, bool) and other >= 0:
        env = {"WEFT_PROGRESS_THREAD": "1", "WEFT_PROGRESS_BIND": str(other)}
        runs.append((busy_once(program, nranks, timeout, env, counts), "weft+progress-thread-other-core"))
    entries: list[Any] = []
    run: dict[str, Any] = {"transport": "unknown"}
    thread_cpus: dict[str, Any] = {}
    for index, (data, rename) in enumerate(runs):
        if index > 0 and "target_thread_cpus" in data:
            thread_cpus[rename or "weft+progress-thread"] = data["target_thread_cpus"]
        found = data.get("results", [])
        if not isinstance(found, list):
            raise WeftError("weft_bench_rma output has no list of results")
        for entry in found:
            # the wake-ups do not depend on weft's settings: the first run's
            if isinstance(entry, dict) and entry.get("op") in WAKE_OPS and index > 0:
                continue
            if rename and isinstance(entry, dict) and entry.get("impl") == "weft+progress-thread":
                entry = {**entry, "impl": rename}
            entries.append(entry)
        run |= {key: data[key] for key in ("transport", "iters", "warmup", "target_cpus", "rank0_cpu")
                if key in data}
    parse_rows(entries)
    if thread_cpus:
        run["thread_cpus"] = thread_cpus
    return {"tls": BUSY_TLS, "kind": "busy-target", "nranks": nranks, **run, "results": entries}


def busy_report(run: dict[str, Any]) -> Group:
    """Gets from a target that computes for up to a second without calling
    weft: how long they wait without and with the progress thread."""
    rows = parse_rows(run["results"])
    # the other-core column only where that run was made
    impls = [impl for impl in BUSY_IMPLS
             if impl != "weft+progress-thread-other-core" or any(impl in row.values for row in rows)]
    table = report.table(
        f"{run['tls']}: get of 8 B from a target that is computing, in µs",
        [Column("measure", no_wrap=True), *(numeric_column(BUSY_IMPLS[impl]) for impl in impls),
         numeric_column("speed-up")],
        [],
    )
    by_op = {row.op: row for row in rows}
    for row in (by_op[op] for op in BUSY_OPS if op in by_op):
        without, with_thread = (row.values.get(impl) for impl in ("weft", "weft+progress-thread"))
        table.add_row(
            BUSY_OPS[row.op],
            *(report.fmt_number(row.values.get(impl)) for impl in impls),
            report.fmt_ratio(report.advantage(with_thread, without, lower_is_better=True))
            if row.op.startswith("get_lat") or row.op == "get_max_busy" else "",
        )
    # the goal's measure: a get from the computing target against one from
    # the idle target without a thread (which answers at once); green
    # within the goal (BUSY_GOAL), lower is better
    idle, busy = by_op.get("get_lat_idle"), by_op.get("get_lat_busy")
    base = idle.values.get("weft") if idle else None
    if busy is not None and base:
        ratios = {impl: busy.values[impl] / base for impl in impls if impl in busy.values}
        table.add_row(
            "computing ÷ idle target without thread",
            *(Text(f"{ratios[impl]:.2f}×", style="green" if ratios[impl] <= BUSY_GOAL else "")
              if impl in ratios else report.MISSING for impl in impls),
            "",
        )
    heading = Text.assemble(
        ("weft progress thread", "bold"),
        f": rank 1 computes for up to 1 s without calling weft while rank 0 gets from it "
        f"(UCX transport {run['transport']}, where gets need the target's help)",
    )
    wake = {op: by_op[op].values.get("threads") if op in by_op else None for op in WAKE_OPS}
    wake_note = Text("")
    if any(v is not None for v in wake.values()):
        wake_note = Text(
            "a sleeping thread of rank 1 wakes in "
            + ", ".join(f"{report.fmt_number(v)} µs {WAKE_OPS[op]}" for op, v in wake.items() if v is not None)
            + ": the least a request that must wake the progress thread waits",
            style="dim")
    return Group(heading, counts_note(run, "gets timed per round, at most"), table, wake_note, "")


# ---- peers: OpenSHMEM, ucx_perftest, memcpy -------------------------------

PEERS_PROGRAM = "weft_shmem_peer"
# Columns of the peers table, in order.
PEER_IMPLS = {
    "weft": "weft",
    "openshmem": "OpenSHMEM",
    "mpi-rma": "MPI RMA",
    "mpi-2sided": "MPI 2-sided",
    "ucx_perftest": "ucx_perftest",
    "memcpy": "memcpy",
}
# Ratios measured in rounds of one program (weft_bench_rma) pair those
# rounds; the others are ratios of medians of separate programs.
SIDE_BY_SIDE = {"weft", "mpi-rma", "mpi-2sided", "memcpy", "memcpy-seg"}
# weft's bandwidth against these copies is paired block by block
# (op "put_bw_block": each block of weft beside one of each copy).
BLOCK_PEERS = {"memcpy": "memcpy", "memcpy-seg": "memcpy, same memory"}
# The goals of the comparison: (operation, smallest size) -> {peer: weft's
# advantage aimed for}.  Latency advantages are other / weft, so 2 means
# "at most half of".
PEERS_GOALS: dict[str, dict[str, float]] = {
    "put_rate": {"openshmem": 3.0, "ucx_perftest": 3.0},
    "put_lat": {"openshmem": 2.0},
    "get_lat": {"openshmem": 2.0},
}
BW_GOAL_FROM = 65536
BW_GOAL = {"memcpy": 0.9, "memcpy-seg": 0.9}
PEER_ROW_NAMES = {
    "put_rate": "put rate",
    "put_lat": "put + flush latency",
    "get_lat": "get latency",
    "put_bw": "bandwidth",
}
SWEEP_SIZES = (8, 64, 512, 4096, 32768, 65536, 262144, 1 << 20, 4 << 20)
SWEEP_BYTES = 64 << 20
# Rounds of weft_bench_rma and shmem_peer in each cycle of --peers.
CYCLE_ROUNDS = 2
PERFTEST_NOTE = (
    "ucx_perftest: put rate from ucp_put_bw, latency from ucp_am_lat (half a ping-pong of "
    "active messages), get latency from ucp_get, bandwidth from ucp_put_bw; "
    "OpenSHMEM: shmem_putmem_nbi windows + shmem_quiet, shmem_putmem + shmem_quiet, "
    "shmem_getmem. The programs run one after the other, in cycles; ratios with "
    "OpenSHMEM and ucx_perftest compare medians over the cycles, the others pair rounds of "
    "one program; against memcpy (two private page-aligned buffers) and memcpy into the same "
    "mapped memory weft's puts write, the median of ratios of blocks timed one after the other."
)


def shmem_peer(timeout: float) -> Path:
    """weft_shmem_peer (bench/peers/shmem_peer.c), which the build makes
    with Open MPI's oshcc when it finds it."""
    del timeout  # built by CMake, not here
    try:
        return runner.executable(PEERS_PROGRAM)
    except WeftError:
        raise WeftError("weft_shmem_peer was not built: install Open MPI's OpenSHMEM "
                        "(oshcc, in openmpi-bin), reconfigure, or run with --no-peers") from None


def measure_shmem(program: Path, iters: int | None, timeout: float, rounds: int,
                  sizes: list[int] | None = None) -> list[Any]:
    """OpenSHMEM's figures from shmem_peer on 2 PEs, its bandwidth at the
    sizes asked (shmem_peer measures its own fixed sizes and runs no
    warm-up).  Its exit status is not trusted: Open MPI 4.1's
    shmem_finalize crashes on some machines after the results are written,
    so the results file decides."""
    if shutil.which("oshrun") is None:
        raise WeftError("`oshrun` is not on PATH: install openmpi-bin or run with --no-peers")
    with tempfile.TemporaryDirectory(prefix="weft-rma-") as tmp:
        output = Path(tmp) / "shmem.json"
        argv = ["oshrun", "-np", "2", "--oversubscribe", str(program), "--json", str(output),
                "--rounds", str(rounds)]
        if iters is not None:
            argv += ["--iters", str(iters)]
        env = {**os.environ}
        if os.geteuid() == 0:
            env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise WeftError(f"shmem_peer timed out after {timeout:g} s") from None
        if not output.is_file():
            tail = "\n".join((proc.stderr or "").strip().splitlines()[-10:])
            raise WeftError(f"shmem_peer wrote no results (exit status {proc.returncode})\n{tail}")
        data = results.read_json(output)
    entries = data.get("results") if isinstance(data, dict) else None
    parse_rows(entries)
    return [entry for entry in entries or []
            if sizes is None or entry["op"] != "put_bw" or int(entry["size"]) in sizes]


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


FINAL = re.compile(r"^Final:\s+(.*)$", re.MULTILINE)


def perftest_final(output: str) -> list[float]:
    """The numbers of ucx_perftest's "Final:" line: iterations, then three
    latency/overhead columns (µs), two bandwidth columns (MiB/s), two
    message-rate columns (msg/s)."""
    match = FINAL.search(output)
    if match is None:
        raise WeftError(f"ucx_perftest printed no 'Final:' line:\n{output[-500:]}")
    try:
        return [float(v) for v in match.group(1).split()]
    except ValueError:
        raise WeftError(f"ucx_perftest's 'Final:' line is malformed: {match.group(0)}") from None


def run_perftest(test: str, size: int, iters: int, timeout: float, warmup: int | None = None) -> list[float]:
    """One ucx_perftest test between a server and a client on this machine
    (warmup: its -w, None for its default)."""
    if shutil.which("ucx_perftest") is None:
        raise WeftError("`ucx_perftest` is not on PATH: install ucx-utils or run with --no-peers")
    for attempt in range(3):
        port = free_port()
        server = subprocess.Popen(["ucx_perftest", "-p", str(port)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            time.sleep(0.3 * (attempt + 1))
            client = subprocess.run(
                ["ucx_perftest", "localhost", "-p", str(port), "-t", test, "-s", str(size), "-n", str(iters),
                 *([] if warmup is None else ["-w", str(warmup)])],
                capture_output=True, text=True, timeout=timeout,
            )
            if client.returncode == 0:
                return perftest_final(client.stdout)
            failure = client.stderr.strip()[-500:]
        except subprocess.TimeoutExpired:
            failure = f"timed out after {timeout:g} s"
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
            server.wait()
    raise WeftError(f"ucx_perftest -t {test} -s {size} failed: {failure}")


def measure_perftest(iters: int | None, timeout: float, warmup: int | None = None,
                     sizes: list[int] | None = None) -> list[Any]:
    """ucx_perftest's figures, as weft_bench_rma's result entries, its
    bandwidth at sizes (None: the sweep's default ones)."""
    n = iters or 100000
    rate = run_perftest("ucp_put_bw", 8, n, timeout, warmup)
    lat = run_perftest("ucp_am_lat", 8, n, timeout, warmup)
    get = run_perftest("ucp_get", 8, n, timeout, warmup)
    entries: list[Any] = [
        {"impl": "ucx_perftest", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": rate[7] / 1e6},
        {"impl": "ucx_perftest", "op": "put_lat", "size": 8, "unit": "us", "value": lat[2]},
        {"impl": "ucx_perftest", "op": "get_lat", "size": 8, "unit": "us", "value": get[2]},
    ]
    for size in sizes or SWEEP_SIZES:
        count = max(16, min(n, SWEEP_BYTES // size))
        bw = run_perftest("ucp_put_bw", size, count, timeout, warmup)
        # ucx_perftest's MB are 2^20 bytes
        entries.append({"impl": "ucx_perftest", "op": "put_bw", "size": size, "unit": "MB/s",
                         "value": bw[5] * (1 << 20) / 1e6})
    return entries


def merge_cycles(entries: list[Any]) -> list[Any]:
    """One entry per (impl, op, size) from the entries of several cycles:
    the rounds of every cycle, in order, and their median."""
    merged: dict[tuple[str, str, int], dict[str, Any]] = {}
    for entry in entries:
        key = (entry["impl"], entry["op"], int(entry["size"]))
        rounds = entry.get("rounds", [entry["value"]])
        if key in merged:
            merged[key]["rounds"] += rounds
        else:
            merged[key] = {**entry, "rounds": list(rounds)}
    for entry in merged.values():
        entry["value"] = statistics.median(entry["rounds"])
    return list(merged.values())


def measure_peers(program: Path, nranks: int, iters: int | None, timeout: float,
                  cycles: int, warmup: int | None = None, sizes: list[int] | None = None) -> dict[str, Any]:
    """weft_bench_rma with the sweep over shared memory, OpenSHMEM and
    ucx_perftest, one after the other, `cycles` times, so that load on a
    shared machine hits every system alike; each program is a step of the
    progress bar.  One run record."""
    steps = [(cycle, step) for cycle in range(cycles) for step in ("weft", "openshmem", "ucx_perftest")]
    labels = {"weft": "weft_bench_rma: weft, MPI RMA, MPI 2-sided, memcpy",
              "openshmem": "OpenSHMEM (oshrun)", "ucx_perftest": "ucx_perftest"}
    run: dict[str, Any] = {}
    entries: list[Any] = []
    load_before = os.getloadavg()[0]
    for cycle, step in runner.steps(steps, lambda item: f"cycle {item[0] + 1}/{cycles}: {labels[item[1]]}"):
        if step == "weft":
            run = measure(program, "shm", nranks, iters, timeout, sweep=True, rounds=CYCLE_ROUNDS,
                          warmup=warmup, sizes=sizes)
            entries += run["results"]
        elif step == "openshmem":
            entries += measure_shmem(shmem_peer(timeout), iters, timeout, CYCLE_ROUNDS, sizes)
        else:
            entries += measure_perftest(iters, timeout, warmup, sizes)
    run["results"] = merge_cycles(entries)
    run["kind"] = "peers"
    run["cycles"] = cycles
    run["loadavg"] = [load_before, os.getloadavg()[0]]
    parse_rows(run["results"])
    return run


def peer_ratio(row: Row, peer: str) -> float | None:
    """weft's advantage over peer on a row: paired rounds for programs run
    side by side, else the ratio of medians."""
    if peer in SIDE_BY_SIDE:
        return row.ratio(peer)
    return report.advantage(row.values.get("weft"), row.values.get(peer),
                            lower_is_better=report.is_latency(row.unit))


def block_ratios(run: dict[str, Any]) -> dict[tuple[str, int], list[float]]:
    """weft's bandwidth over each copy of BLOCK_PEERS, block by block:
    {(peer, size): [ratio of each pair of blocks]}."""
    ratios: dict[tuple[str, int], list[float]] = {}
    for row in parse_rows(run["results"]):
        mine = row.rounds.get("weft")
        if row.op != "put_bw_block" or not mine:
            continue
        for peer in BLOCK_PEERS:
            theirs = row.rounds.get(peer)
            if theirs and len(theirs) == len(mine):
                ratios[(peer, row.size)] = [w / o for w, o in zip(mine, theirs) if o > 0]
    return ratios


def spread(values: list[float]) -> tuple[float, float, float]:
    """Median and quartiles (first, third) of values."""
    if len(values) < 2:
        return (values[0],) * 3
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return median, q1, q3


def peer_goal(row: Row, peer: str) -> float | None:
    """The advantage over peer this row aims for, if any."""
    if row.op == "put_bw":
        return BW_GOAL.get(peer) if row.size >= BW_GOAL_FROM else None
    return PEERS_GOALS.get(row.op, {}).get(peer)


def peer_rows(run: dict[str, Any]) -> list[Row]:
    """The rows of the peers table: 8-byte rate and latencies, then bandwidth by size."""
    rows = parse_rows(run["results"])
    head = [r for op in ("put_rate", "put_lat", "get_lat") for r in rows if r.op == op and r.size == 8]
    return head + sorted((r for r in rows if r.op == "put_bw"), key=lambda r: r.size)


def peers_report(run: dict[str, Any]) -> Group:
    """Two tables over the same rows: every system's figures, then weft's
    advantage over each (green: a goal met, red: missed)."""
    peers = [impl for impl in PEER_IMPLS if impl != "weft"]
    rows = peer_rows(run)
    values = report.table(
        "puts and gets of 2 ranks on one node",
        [Column("measure", no_wrap=True), Column("unit", no_wrap=True),
         *(numeric_column(label) for label in PEER_IMPLS.values())],
        [],
    )
    ratios = report.table(
        "weft's advantage over X (rate: weft ÷ X, latency: X ÷ weft)",
        [Column("measure", no_wrap=True), *(numeric_column(f"vs {PEER_IMPLS[p]}") for p in peers)],
        [],
    )
    blocks = block_ratios(run)
    for index, row in enumerate(rows):
        name = f"{PEER_ROW_NAMES.get(row.op, row.op)} {report.fmt_size(row.size)}"
        unit = "GB/s" if row.op == "put_bw" else report.fmt_unit(row.unit)
        scale = 1e-3 if row.op == "put_bw" else 1.0
        section = index + 1 < len(rows) and rows[index + 1].op == "put_bw" and row.op != "put_bw"
        values.add_row(
            name, unit,
            *(report.fmt_number(None if row.values.get(i) is None else row.values[i] * scale)
              for i in PEER_IMPLS),
            end_section=section,
        )
        cells = []
        for peer in peers:
            ratio, goal = peer_ratio(row, peer), peer_goal(row, peer)
            if row.op == "put_bw" and (peer, row.size) in blocks:
                ratio = spread(blocks[(peer, row.size)])[0]
            cells.append(report.fmt_ratio(ratio, goal) if goal is not None
                         else Text(report.fmt_ratio(ratio).plain))
        ratios.add_row(name, *cells, end_section=section)
    heading = Text.assemble(
        ("weft RMA beside its peers", "bold"),
        f": {run['nranks']} ranks on one node, weft's path: {run['transport']}",
    )
    goals = Text("Goals (coloured): put rate ≥ 3× OpenSHMEM and ucx_perftest; latencies ≤ 0.5× "
                 "OpenSHMEM's (advantage ≥ 2×); bandwidth from 64 KiB ≥ 0.9× memcpy.", style="dim")
    load = Text(f"load average (1 min) before and after: {run['loadavg'][0]:.2f}, {run['loadavg'][1]:.2f}",
                style="dim") if "loadavg" in run else Text("")
    # on the direct path the same program measured weft beside plain accesses
    direct = direct_table(run["tls"], parse_rows(run["results"]))
    return Group(heading, counts_note(run), values, ratios, block_table(run, blocks), goals, load,
                 Text(PERFTEST_NOTE, style="dim"), *([direct] if direct is not None else []), "")


def block_table(run: dict[str, Any], blocks: dict[tuple[str, int], list[float]]) -> Table:
    """weft ÷ each copy per size: median of the block pairs, quartiles, and
    the page faults weft's puts took while timed."""
    faults = {row.size: row.values.get("weft") for row in parse_rows(run["results"])
              if row.op == "page_faults"}
    table = report.table(
        "weft's put bandwidth ÷ a copy's, block pairs timed one after the other",
        [Column("size", justify="right", no_wrap=True),
         *(numeric_column(f"÷ {label}: median [IQR]") for label in BLOCK_PEERS.values()),
         numeric_column("pairs"), numeric_column("faults (weft, median)")],
        [],
    )
    for size in sorted({size for _, size in blocks}):
        cells = []
        for peer in BLOCK_PEERS:
            values = blocks.get((peer, size))
            if not values:
                cells.append(Text(report.MISSING, style="dim"))
                continue
            median, q1, q3 = spread(values)
            goal = BW_GOAL.get(peer) if size >= BW_GOAL_FROM else None
            text = report.fmt_ratio(median, goal) if goal is not None else Text(f"{median:.2f}×")
            cells.append(Text.assemble(text, f" [{q1:.2f}–{q3:.2f}]"))
        pairs = len(blocks.get(("memcpy", size), []))
        table.add_row(report.fmt_size(size), *cells, str(pairs), report.fmt_number(faults.get(size)))
    return table


def peers_chart(run: dict[str, Any], meta: dict[str, Any], path: Path) -> Path:
    """Message rate and bandwidth of puts by size, one line per system;
    memcpy is the limit of a copy made by one core."""
    rows = [r for r in parse_rows(run["results"]) if r.op == "put_bw"]
    figure = report.new_figure(11, 4.5)
    rate_axes, bw_axes = figure.subplots(1, 2)
    for impl, label in {**PEER_IMPLS, "memcpy-seg": BLOCK_PEERS["memcpy-seg"]}.items():
        points = sorted((r.size, r.values[impl]) for r in rows if impl in r.values)
        if not points:
            continue
        sizes = [p[0] for p in points]
        style = ({"linestyle": "--", "color": "black"} if impl == "memcpy"
                 else {"linestyle": ":", "color": "grey"} if impl == "memcpy-seg" else {"marker": "o"})
        rate_axes.plot(sizes, [mb / size for size, mb in points], label=label, **style)
        bw_axes.plot(sizes, [mb * 1e-3 for _, mb in points], label=label, **style)
    for axes, ylabel in ((rate_axes, "puts per second (millions)"), (bw_axes, "bandwidth (GB/s)")):
        axes.set_xscale("log", base=2)
        axes.set_yscale("log")
        axes.set_xlabel("message size (bytes)")
        axes.set_ylabel(ylabel)
        axes.grid(alpha=0.3, which="both")
    rate_axes.set_title("put rate by size")
    bw_axes.set_title("put bandwidth by size")
    handles, labels = rate_axes.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize="small")
    figure.suptitle(f"weft and its peers, {run['nranks']} ranks on {meta['hostname']} ({meta['date'][:10]})")
    figure.savefig(path, dpi=120)
    return path


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


# weft against plain loads and stores on the direct path, and the goals
# (issue 24): a put rate of half the stores', a get within twice a load.
DIRECT_GOALS = {("put_rate", "store"): 0.5, ("get_lat", "load"): 0.5}


# The direct-path rows by operation: a short name with its unit, and the
# scale from the recorded unit (latencies are recorded in µs, shown in ns).
DIRECT_OPS = {"put_rate": ("put, M/s", 1.0), "put_rate_best": ("put best, M/s", 1.0),
              "get_lat": ("get, ns", 1e3), "get_lat_best": ("get best, ns", 1e3)}


def direct_table(tls: str, rows: list[Row]) -> Table | None:
    """weft's inline calls beside the library calls behind them, the same
    calls through a kept target, and plain loads and stores through
    weft_ptr, when the run measured them ("best": the fastest of short
    blocks timed alternately)."""
    mine = [r for r in rows if r.op in DIRECT_OPS and any(impl in r.values for impl in DIRECT_IMPLS)]
    if not mine:
        return None
    table = report.table(
        f"{tls}: weft beside the library call and a plain access (vs X: > 1, weft is faster)",
        [Column("operation", no_wrap=True), numeric_column("weft"), numeric_column("library call"),
         numeric_column("kept target"), numeric_column("plain"), numeric_column("vs library"),
         numeric_column("vs plain"), numeric_column("kept vs plain")],
        [],
    )
    for row in mine:
        name, scale = DIRECT_OPS[row.op]
        plain = "store" if "store" in row.values else "load"
        goal = DIRECT_GOALS.get((row.op.removesuffix("_best"), plain), 1.0)

        def shown(impl: str) -> str:
            value = row.values.get(impl)
            return report.fmt_number(None if value is None else value * scale)

        table.add_row(name, shown("weft"), shown("weft-lib"), shown("weft-target"), shown(plain),
                      report.fmt_ratio(row.ratio("weft-lib")),
                      report.fmt_ratio(row.ratio(plain), goal),
                      report.fmt_ratio(row.ratio(plain, "weft-target"), goal))
    return table


def run_report(run: dict[str, Any]) -> Group:
    """What one run measured: where, then a table per unit (latencies, rates)."""
    if run.get("kind") == "busy-target":
        return busy_report(run)
    if run.get("kind") == "peers":
        return peers_report(run)
    # a sweep's blocks and page faults have a table of their own
    rows = [row for row in parse_rows(run["results"]) if row.op not in ("put_bw_block", "page_faults")]
    units = dict.fromkeys(row.unit for row in rows)
    tables: list[Table] = [unit_table(run["tls"], unit, [r for r in rows if r.unit == unit]) for unit in units]
    direct = direct_table(run["tls"], rows)
    if direct is not None:
        tables.append(direct)
    blocks = block_ratios(run)
    if blocks:
        tables.append(block_table(run, blocks))
    heading = Text.assemble(
        (f"weft RMA over {run['tls']}", "bold"),
        f" vs UCX, MPI RMA and MPI two-sided: {run['nranks']} ranks on one node, "
        f"UCX transport {run['transport']}",
    )
    notes = [Text(TRANSPORT_NOTES[run["tls"]], style="yellow")] if run["tls"] in TRANSPORT_NOTES else []
    return Group(heading, counts_note(run), *notes, *tables, "")


def ratio_chart(document: dict[str, Any], path: Path) -> Path:
    """A PNG of weft's advantage over each peer, for every row of every run
    that has a peer to compare with."""
    runs = document["runs"]
    groups: list[str] = []
    series: dict[str, list[float | None]] = {f"vs {IMPL_LABELS[peer]}": [] for peer in PEER_GOALS}
    for run in runs:
        if run.get("kind") == "peers":
            continue
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


def chart(document: dict[str, Any], path: Path) -> Path:
    """The peers run's chart when there is one, else the ratios'."""
    peers = [run for run in document["runs"] if run.get("kind") == "peers"]
    if peers:
        return peers_chart(peers[0], document["metadata"], path)
    return ratio_chart(document, path)


def render(document: dict[str, Any]) -> Group:
    """Every run's tables, then the notes."""
    return Group(*map(run_report, document["runs"]), Text(NOTES, style="dim"))


# What `weft bench rma` shows, and `weft report` of its files.
RENDERERS = {BENCHMARK: results.Renderer(render, {".png": chart})}


def command(args: argparse.Namespace) -> None:
    def measure_all() -> Path:
        program = runner.executable(BENCH)
        transports = list(TRANSPORT_ENV) if args.tls == "both" else [args.tls]
        # over shared memory the peers run measures weft too
        comparisons = [t for t in transports if not (t == "shm" and args.peers)]
        steps = comparisons + ([] if args.no_busy else ["busy"])
        runs = (
            [measure_peers(program, args.np, args.iters, args.timeout, args.cycles, args.warmup, args.sizes)]
            if "shm" in transports and args.peers
            else []
        )
        runs += [
            measure_busy(program, args.np, args.timeout, args.iters, args.warmup)
            if step == "busy"
            else measure(program, step, args.np, args.iters, args.timeout, warmup=args.warmup, sizes=args.sizes)
            for step in runner.steps(
                steps,
                lambda step: "gets from a computing target, tcp" if step == "busy" else f"weft_bench_rma over {step}",
            )
        ]
        return results.save(BENCHMARK, {"runs": runs}, transport="+".join(transports), ranks=args.np)

    shown = RENDERERS[BENCHMARK]
    results.measure_or_load(BENCHMARK, None if args.last else measure_all, shown.render, shown.charts,
                            json_only=args.json_only)


def register(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "rma",
        help="weft put/get vs UCX, MPI RMA, MPI two-sided, OpenSHMEM, ucx_perftest and memcpy",
        description="Run bench/weft_bench_rma on this machine and compare weft with raw UCX, "
        "MPI RMA and MPI two-sided, as ratios from one run; with --peers (the default over "
        "shared memory) the same invocation also measures OpenSHMEM, ucx_perftest and a "
        "single-core memcpy. Results are saved in the results directory (JSON and a PNG of the "
        "ratios).",
    )
    parser.add_argument("--np", type=runner.ranks_type(2, 2), default=2, metavar="N", help="number of ranks (default: 2)")
    parser.add_argument(
        "--tls",
        choices=[*TRANSPORT_ENV, "both"],
        default="shm",
        help="transport: shm (UCX and MPI defaults), tcp (UCX_TLS=tcp,self, Open MPI btl tcp,self) "
        "or both (default: shm)",
    )
    parser.add_argument(
        "--iters", type=count_type(WINDOW, f" (a window of {WINDOW} puts)"), metavar="N",
        help=f"iterations of each timed loop, at least {WINDOW} (default: 100000; the gets from a busy "
        "rank: at most 2000)",
    )
    add_warmup_option(parser, "0 for weft's program, which always runs one pass of 4 windows "
                      "before its rounds; ucx_perftest's own")
    add_size_options(parser, MAX_SIZE, "with --peers 8 B, 64 B, 512 B, ... 4 MiB; without, no sweep")
    parser.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds allowed per run (default: 600)")
    parser.add_argument(
        "--json", "--json-only", dest="json_only", action="store_true", help="save the results and print them as JSON, without tables or plot"
    )
    parser.add_argument(
        "--no-busy", action="store_true", help="skip the gets from a computing target (without progress thread, with it, and with it "
        "on a core of rank 0 when rank 1 does not run there)"
    )
    parser.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="over shm, also measure OpenSHMEM, ucx_perftest and memcpy and show one table of "
        "rate, latencies and bandwidth 8 B - 4 MiB with weft's ratio to each (default: on)",
    )
    parser.add_argument(
        "--cycles", type=int, default=3, metavar="N",
        help="with --peers, run the systems one after the other N times (default: 3)",
    )
    parser.add_argument("--last", action="store_true", help="show the last saved results instead of measuring")
    parser.set_defaults(func=command)
