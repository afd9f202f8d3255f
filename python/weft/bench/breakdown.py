"""Measuring the breakdown of an 8-byte message on this machine, for
`weft model breakdown` (the models: weft.models.breakdown_measured).

measure(path) runs weft_bench_breakdown on 2 ranks over one UCX path, or
weft_bench_breakdown_direct over the direct path (measure_direct), and
returns the breakdown document (docs/breakdown.md describes every field):

    {"benchmark": "breakdown", "metadata": {...}, "path": "shm",
     "timer": {"tsc_ghz": f, "overhead_ns": f},
     "injection": {"observed_ns": f, "batch": q, "components_ns": {...},
                   "HLP_post_parts_ns": {...}, "HLP_tx_prog_parts_ns": {...}},
     "latency": {"observed_ns": f, "components_ns": {...}, "HLP_post_parts_ns": {...}},
     "points": {NAME: {"count": n, "total_ns": f, "min_ns": f, "median_ns": f}}}
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from weft import WeftError
from weft.core import results, runner
from weft.models import breakdown_direct
from weft.models.breakdown_document import document_of

BENCH = "weft_bench_breakdown"
# The benchmarks keep at most this many rounds (BENCH_BREAKDOWN_MAX_ROUNDS).
MAX_ROUNDS = 32

# Each path and the settings that select it.  "shm" is UCX's shared memory
# (weft's intra-node direct path off); "tcp-nodes" gives the two ranks
# different node names, as if they ran on two nodes: on one host the bytes
# still go through the loopback interface.
PATH_ENV: dict[str, dict[str, str]] = {
    "shm": {"WEFT_SHM": "0"},
    "tcp": {"WEFT_UCX_TLS": "tcp,self", "WEFT_SHM": "0"},
    "tcp-nodes": {"WEFT_UCX_TLS": "tcp,self", "WEFT_TOPO_NODE": "block:node%d:1"},
}
PATH_NOTES: dict[str, str] = {
    "tcp-nodes": "ranks on emulated nodes (WEFT_TOPO_NODE): on one host TCP still uses the loopback interface",
}
# Iterations per pass: (puts of the injection benchmark, round trips of the
# ping-pong), sized so that a pass takes a few milliseconds to a tenth of a
# second per kind (the figures are medians within a round).
DEFAULT_ITERS: dict[str, tuple[int, int]] = {
    "shm": (200_000, 5_000),
    "tcp": (50_000, 1_000),
    "tcp-nodes": (50_000, 1_000),
}
DEFAULT_ROUNDS = 5
DEFAULT_BATCH = 16

DIRECT_BENCH = "weft_bench_breakdown_direct"
# The direct path needs both ranks on one node with WEFT_SHM on (the default).
DIRECT_ENV = {"WEFT_SHM": "1"}
DIRECT_ITERS = (200_000, 20_000)
DIRECT_ROUNDS = 15  # short rounds (about 0.2 s): more of them steady the medians

INJECTION_COMPONENTS = ("HLP_post", "LLP_post", "LLP_prog", "HLP_tx_prog", "busy_post", "misc")
LATENCY_COMPONENTS = ("HLP_post", "LLP_post", "transfer", "LLP_prog", "HLP_rx_prog")
POINT_FIELDS = ("count", "total_ns", "min_ns", "median_ns", "trimmed_mean_ns")


def validate(document: Any) -> dict[str, Any]:
    """The document if it has every field of the breakdown format, else a
    WeftError naming the first one missing."""

    def need(obj: Any, key: str, where: str) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            raise WeftError(f"breakdown result lacks {where}{key}")
        return obj[key]

    for key in ("timer", "injection", "latency", "points"):
        need(document, key, "")
    for key in ("tsc_ghz", "overhead_ns"):
        float(need(document["timer"], key, "timer."))
    for section, names in (("injection", INJECTION_COMPONENTS), ("latency", LATENCY_COMPONENTS)):
        float(need(document[section], "observed_ns", f"{section}."))
        components = need(document[section], "components_ns", f"{section}.")
        for name in names:
            float(need(components, name, f"{section}.components_ns."))
    int(need(document["injection"], "batch", "injection."))
    for name, point in document["points"].items():
        for key in POINT_FIELDS:
            need(point, key, f"points.{name}.")
    return document


def measure(
    path: str,
    *,
    np: int = 2,
    iters: int | None = None,
    lat_iters: int | None = None,
    rounds: int | None = None,
    batch: int = DEFAULT_BATCH,
    timeout: float = 900,
    progress: Callable[[str, float, float], None] | None = None,
) -> dict[str, Any]:
    """Measure the breakdown over path ("shm", "tcp", "tcp-nodes", or "direct":
    measure_direct).

    iters and lat_iters are the puts of the injection benchmark and the
    round trips of the ping-pong per pass, rounds the rounds (defaults per
    path); progress, if
    given, is called as progress(step, done, total) before and after the run."""
    if rounds is not None and not 1 <= rounds <= MAX_ROUNDS:
        raise WeftError(f"rounds must be 1 to {MAX_ROUNDS}, got {rounds}")
    if path == breakdown_direct.PATH:
        return measure_direct(np=np, iters=iters, lat_iters=lat_iters, rounds=rounds or DIRECT_ROUNDS,
                              batch=batch, timeout=timeout, progress=progress)
    if path not in PATH_ENV:
        raise WeftError(f"unknown path {path!r}: expected one of {', '.join(PATH_ENV)}")
    if np != 2:
        raise WeftError(f"the breakdown runs on 2 ranks (an initiator and a target), not {np}")
    default_iters, default_lat = DEFAULT_ITERS[path]
    program = runner.executable(BENCH)
    step = f"weft_bench_breakdown over {path}"
    if progress is not None:
        progress(step, 0, 1)
    with tempfile.TemporaryDirectory(prefix="weft-breakdown-") as tmp:
        output = Path(tmp) / "breakdown.json"
        argv = [
            str(program),
            "--json", str(output),
            "--iters", str(iters or default_iters),
            "--lat-iters", str(lat_iters or default_lat),
            "--rounds", str(rounds or DEFAULT_ROUNDS),
            "--batch", str(batch),
        ]
        runner.run_mpi(np, argv, env=PATH_ENV[path], timeout=timeout)
        data = results.read_json(output)
    if progress is not None:
        progress(step, 1, 1)
    document = document_of(data, "weft_bench_breakdown", path, np, "unknown")
    if path in PATH_NOTES:
        document["note"] = PATH_NOTES[path]
    return validate(document)


def measure_direct(
    *,
    np: int = 2,
    iters: int | None = None,
    lat_iters: int | None = None,
    rounds: int = DIRECT_ROUNDS,
    batch: int = DEFAULT_BATCH,
    timeout: float = 900,
    progress: Callable[[str, float, float], None] | None = None,
) -> dict[str, Any]:
    """Run weft_bench_breakdown_direct on 2 ranks of this node and return
    its breakdown document (checked by weft.models.breakdown_direct)."""
    if np != 2:
        raise WeftError(f"the breakdown runs on 2 ranks (an initiator and a target), not {np}")
    program = runner.executable(DIRECT_BENCH)
    step = "weft_bench_breakdown_direct over the direct path"
    if progress is not None:
        progress(step, 0, 1)
    with tempfile.TemporaryDirectory(prefix="weft-breakdown-direct-") as tmp:
        output = Path(tmp) / "breakdown.json"
        argv = [str(program), "--json", str(output),
                "--iters", str(iters or DIRECT_ITERS[0]),
                "--lat-iters", str(lat_iters or DIRECT_ITERS[1]),
                "--rounds", str(rounds), "--batch", str(batch)]
        runner.run_mpi(np, argv, env=DIRECT_ENV, timeout=timeout)
        data = results.read_json(output)
    if progress is not None:
        progress(step, 1, 1)
    document = document_of(data, DIRECT_BENCH, breakdown_direct.PATH, np, "direct")
    breakdown_direct.from_measurement(document)
    return document


def model_error(document: dict[str, Any]) -> dict[str, float]:
    """(model - observed) / observed for injection and latency, where the
    model is the sum of the components (Eq. 1/2 and the latency equation)."""
    errors = {}
    for section in ("injection", "latency"):
        part = document[section]
        model = sum(float(v) for v in part["components_ns"].values())
        errors[section] = (model - float(part["observed_ns"])) / float(part["observed_ns"])
    return errors
