"""The models of a measured breakdown, over any path: the UCX paths (shm,
tcp, tcp-nodes) here, the direct path by weft.models.breakdown_direct.

A measured breakdown over a UCX path (weft.bench.breakdown.measure, `weft
model breakdown`) is the JSON document

    {"benchmark": "breakdown", "metadata": {...}, "path": "shm"|"tcp"|"tcp-nodes",
     "timer": {"tsc_ghz": f, "overhead_ns": f},
     "injection": {"observed_ns": f, "batch": q, "components_ns": {
         "HLP_post", "LLP_post", "LLP_prog", "HLP_tx_prog", "busy_post", "misc"}},
     "latency": {"observed_ns": f, "components_ns": {
         "HLP_post", "LLP_post", "transfer", "LLP_prog", "HLP_rx_prog"}},
     "points": {NAME: {"count", "total_ns", "min_ns", "median_ns"}}}

whose components are per-message means in ns (latency one way).  A
component timed as several regions may come with its parts
(injection.HLP_post_parts_ns {"entry", "tail"}, HLP_tx_prog_parts_ns
{"callbacks", "call"}, latency.HLP_post_parts_ns): they sum to it, and the
model shows them as its parts (breakdown_document.COMPONENT_PARTS). Progress
there is already amortised the way §6 measures Post_prog: total progress
time divided by the messages it completed; `batch` is reported with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weft import WeftError
from weft.models import breakdown_direct
from weft.models.breakdown_document import (point_stats, read_number, read_parted, read_section,
                                            round_error_notes, speed_notes, timer_notes)
from weft.models.breakdown_methods import choose_models, non_negative
from weft.models.breakdown_model import PATHS, Breakdown, composite, injection_model, latency_model, leaf

INJECTION_FIELDS = ("HLP_post", "LLP_post", "LLP_prog", "HLP_tx_prog", "busy_post", "misc")
LATENCY_FIELDS = ("HLP_post", "LLP_post", "transfer", "LLP_prog", "HLP_rx_prog")
# What a measured transfer is made of: through the memory system between
# ranks of one node, through the kernel's network stack otherwise.
PATH_TRANSFER_LEVEL = {"shm": "I/O", "tcp": "network", "tcp-nodes": "network"}
PATH_DESCRIPTION = {
    "shm": "shared memory (cache-to-cache), 2 ranks on one node",
    "tcp": "TCP over loopback, 2 ranks on one node",
    "tcp-nodes": "TCP between emulated nodes",
}


def from_measurement(document: Any) -> Breakdown:
    """The models of a measured breakdown document over any path (see the
    module's description); malformed documents are a WeftError naming the field."""
    if not isinstance(document, Mapping):
        raise WeftError("a breakdown must be a JSON object")
    if document.get("benchmark") != "breakdown":
        raise WeftError(f"not a breakdown result (benchmark is {document.get('benchmark')!r}, expected 'breakdown')")
    path = document.get("path")
    if path == breakdown_direct.PATH:
        return breakdown_direct.from_measurement(document)
    if path not in PATHS:
        raise WeftError(f"unknown path {path!r}: expected one of {', '.join(PATHS)}")
    timer = document.get("timer") if isinstance(document.get("timer"), Mapping) else {}
    jitter = read_number(timer.get("overhead_ns", 0.0), "timer.overhead_ns")
    measured_inj, inj_observed = read_section(document, "injection", INJECTION_FIELDS, jitter)
    batch = read_number(document["injection"].get("batch"), "injection.batch", positive=True)
    measured_lat, lat_observed = read_section(document, "latency", LATENCY_FIELDS, jitter)
    # a component below 0 (within the timer's jitter) is below resolution:
    # the model adds 0, never a negative time
    inj, lat = non_negative(measured_inj), non_negative(measured_lat)
    metadata = document.get("metadata") if isinstance(document.get("metadata"), Mapping) else {}
    injection = injection_model(
        hlp_post=read_parted(document, "injection", "HLP_post", inj["HLP_post"], "HLP", jitter),
        llp_post=leaf("LLP_post", inj["LLP_post"], "LLP"),
        hlp_tx_prog=read_parted(document, "injection", "HLP_tx_prog", inj["HLP_tx_prog"], "HLP", jitter),
        llp_prog=leaf("LLP_prog", inj["LLP_prog"], "LLP", label=f"LLP_prog (per message, batch {batch:g})"),
        misc=composite("Misc", (leaf("busy_post", inj["busy_post"], "misc", label="busy posts"),
                                leaf("misc", inj["misc"], "misc", label="other"))),
        title=f"weft injection overhead over {path} (Eq. 2)",
        observed_ns=inj_observed,
        observed_note="inverse of the measured injection rate",
    )
    latency = latency_model(
        hlp_post=read_parted(document, "latency", "HLP_post", lat["HLP_post"], "HLP", jitter),
        llp_post=leaf("LLP_post", lat["LLP_post"], "LLP"),
        transfer=leaf("transfer", lat["transfer"], PATH_TRANSFER_LEVEL[path], label=f"transfer ({path}, probed)"),
        llp_prog=leaf("LLP_prog", lat["LLP_prog"], "LLP"),
        hlp_rx_prog=leaf("HLP_rx_prog", lat["HLP_rx_prog"], "HLP"),
        title=f"weft one-way latency over {path}",
        observed_ns=lat_observed,
        observed_note="half the measured ping-pong round trip",
    )
    # a point's minimum, the timer's overhead subtracted, can fall below 0
    # by the timer's own jitter, unbounded; the median and the total of a
    # region of a few instructions (HLP_post_tail, whose ns are less than a
    # change of the timer's cost between its calibration and the loop) by
    # no more than that overhead per sample
    stats = point_stats(document, jitter, ("total_ns", "median_ns"))
    notes = [f"measured over {PATH_DESCRIPTION[path]}"]
    if timer:
        notes.append(f"timer: TSC {timer.get('tsc_ghz', '?')} GHz, overhead {timer.get('overhead_ns', '?')} ns "
                     "(the library's, at the first selection)")
    notes.extend(timer_notes(document))
    notes.extend(speed_notes(document))
    notes.extend(round_error_notes(document))
    models, comparisons, method_notes = choose_models(document, {"injection": injection, "latency": latency},
                                                      {"injection": inj, "latency": lat}, PATH_TRANSFER_LEVEL[path])
    notes.extend(method_notes)
    return Breakdown(name=f"weft-{path}", source="measured", scenarios={"weft": models},
                     overall="weft", notes=tuple(notes), metadata=dict(metadata), points=stats,
                     comparisons=comparisons, selfcheck=dict(document.get("selfcheck") or {}))
