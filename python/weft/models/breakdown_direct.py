"""The breakdown of an 8-byte message over weft's intra-node direct path.

Between two ranks of one node (WEFT_SHM on) weft performs a put with the
initiator's own stores into the peer's mapped segment: UCX is not called
(except by the progress calls of the injection loop), the 8-byte stores
and loads take the place of the LLP (level "LLP"), and the paper's
2·PCIe + Network + RC-to-MEM becomes the signal's cache line moving
between two cores (level "network": the signal's locked add, which takes
the line's ownership from the waiter's core, the waiter's load that brings
it back, and what the probe finds beyond those two).  The program
weft_bench_breakdown_direct measures it (docs/breakdown.md, "Direct path"),
weft.bench.breakdown.measure_direct() runs it, and from_measurement() turns
the document into the models that `weft model breakdown` and `weft model
whatif` render:

    injection = HLP_post + direct_copy + (LLP_prog + HLP_prog) / q + misc
        (Eq. 2 with this path's Post = HLP_post + direct_copy, Post_prog the
        weft_progress call every q puts, amortised; the document holds it
        per message already)
    latency   = HLP_post + direct_copy + signal_add + transfer
                + poll_phase + signal_poll + payload_read
        (a put-with-signal ping-pong: the sender's weft code, its copy and
        its signal add; the line's move between the cores that the probe's
        own store, add, load and read do not account for; half an iteration
        of the waiter's loop, the delay before the load that sees the
        signal; that load, and the read of the payload)

Every timed figure subtracts, from each of its timed regions, the timer's
overhead calibrated in its own round (`injection.timer_overhead_ns`,
`latency.timer_overhead_ns`), not the library's calibration at the first
selection (`timer.overhead_ns`): the core of the VM of docs/breakdown.md
runs at two speeds, and an empty region reads 13.6 ns at one, up to
17.6 ns at the other.

The document:

    {"benchmark": "breakdown", "metadata": {...}, "path": "direct",
     "timer": {"tsc_ghz": f, "overhead_ns": f},
     "injection": {"observed_ns": f, "batch": q, "timer_overhead_ns": f, "components_ns": {
         "HLP_post", "direct_copy", "LLP_prog", "HLP_prog", "misc"}, ...},
     "latency": {"observed_ns": f, "timer_overhead_ns": f, "components_ns": {
         "HLP_post", "direct_copy", "signal_add", "transfer", "poll_phase",
         "signal_poll", "payload_read"}, "probe": {...}, ...},
     "points": {NAME: {"count", "total_ns", "min_ns", "median_ns", "trimmed_mean_ns"}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weft import WeftError
from weft.models.breakdown_document import (point_stats, read_number, read_section, round_error_notes, speed_notes,
                                            timer_notes)
from weft.models.breakdown_methods import choose_models, non_negative
from weft.models.breakdown_model import Breakdown, Model, leaf

PATH = "direct"
INJECTION_FIELDS = ("HLP_post", "direct_copy", "LLP_prog", "HLP_prog", "misc")
LATENCY_FIELDS = ("HLP_post", "direct_copy", "signal_add", "transfer", "poll_phase", "signal_poll", "payload_read")
PROBE_FIELDS = ("raw_observed_ns", "raw_store_ns", "raw_add_ns", "raw_load_ns", "raw_read_ns", "residual_ns",
                "overlap_ns", "transfer_ns")
DESCRIPTION = "weft's direct path: stores into the peer's mapped segment, 2 ranks on one node"


def injection(components: Mapping[str, float], batch: float, observed_ns: float) -> Model:
    """Eq. 2 over the direct path: Post = HLP_post + direct_copy, Post_prog =
    the progress call per message (already divided by the batch), Misc."""
    return Model(
        "injection", "weft injection overhead over the direct path (Eq. 2)",
        "Post + Post_prog + Misc = (HLP_post + direct_copy) + (LLP_prog + HLP_prog)/q + Misc",
        (leaf("HLP_post", components["HLP_post"], "HLP"),
         leaf("direct_copy", components["direct_copy"], "LLP", label="direct_copy (the initiator's store)"),
         leaf("LLP_prog", components["LLP_prog"], "LLP", label=f"UCX progress (per message, batch {batch:g})"),
         leaf("HLP_prog", components["HLP_prog"], "HLP",
              label=f"weft_progress's own code (per message, batch {batch:g})"),
         leaf("misc", components["misc"], "misc", label="Misc (the loop)")),
        observed_ns, "inverse of the measured injection rate")


def latency(components: Mapping[str, float], observed_ns: float) -> Model:
    """HLP_post + direct_copy + signal_add + transfer + poll_phase + signal_poll + payload_read."""
    return Model(
        "latency", "weft one-way latency over the direct path (put-with-signal)",
        "HLP_post + direct_copy + signal_add + transfer + poll_phase + signal_poll + payload_read",
        (leaf("HLP_post", components["HLP_post"], "HLP"),
         leaf("direct_copy", components["direct_copy"], "LLP", label="direct_copy (the payload's store)"),
         leaf("signal_add", components["signal_add"], "network",
              label="signal_add (locked add: the line's ownership from the peer's core)"),
         leaf("transfer", components["transfer"], "network",
              label="transfer (the probe's one way beyond its own add and load)"),
         leaf("poll_phase", components["poll_phase"], "HLP",
              label="poll phase (half an iteration of the wait loop)"),
         leaf("signal_poll", components["signal_poll"], "network",
              label="signal_poll (the load that brings the line back)"),
         leaf("payload_read", components["payload_read"], "LLP", label="payload read")),
        observed_ns, "half the measured put-with-signal round trip")


def from_measurement(document: Any) -> Breakdown:
    """The models of a direct-path breakdown document; a malformed one is a
    WeftError naming the field."""
    if not isinstance(document, Mapping):
        raise WeftError("a breakdown must be a JSON object")
    if document.get("benchmark") != "breakdown":
        raise WeftError(f"not a breakdown result (benchmark is {document.get('benchmark')!r}, expected 'breakdown')")
    if document.get("path") != PATH:
        raise WeftError(f"not a direct-path breakdown (path is {document.get('path')!r})")
    timer = document.get("timer")
    if not isinstance(timer, Mapping):
        raise WeftError("breakdown has no 'timer' object")
    jitter = read_number(timer.get("overhead_ns"), "timer.overhead_ns")
    inj, inj_observed = read_section(document, "injection", INJECTION_FIELDS, jitter)
    batch = read_number(document["injection"].get("batch"), "injection.batch", positive=True)
    lat, lat_observed = read_section(document, "latency", LATENCY_FIELDS, jitter)
    # a component below 0 (within the timer's jitter) is below resolution:
    # the model adds 0, never a negative time
    inj, lat = non_negative(inj), non_negative(lat)
    probe = document["latency"].get("probe")
    if not isinstance(probe, Mapping):
        raise WeftError("breakdown latency has no 'probe' object")
    for name in PROBE_FIELDS:
        value = read_number(probe.get(name), f"latency.probe.{name}", signed=True)
        # the probe's timed operations, like the components, may fall below
        # 0 by the timer's jitter; its residual is signed
        if name != "residual_ns" and value < -jitter:
            raise WeftError(f"latency.probe.{name} must be non-negative, got {value!r} "
                            f"(beyond the timer overhead {jitter:g} ns)")
    # a region of a nanosecond (the copy) can read below 0 once the timer's
    # overhead is subtracted: by up to the overhead per sample
    stats = point_stats(document, jitter, ("total_ns", "min_ns", "median_ns"))
    metadata = document.get("metadata") if isinstance(document.get("metadata"), Mapping) else {}
    notes = (
        f"measured over {DESCRIPTION}",
        f"timer: TSC {timer.get('tsc_ghz', '?')} GHz, overhead {timer['overhead_ns']} ns (the library's, at the "
        "first selection)",
        *timer_notes(document),
        f"probe: weft's ping-pong without weft, {probe['raw_observed_ns']:.1f} ns one way; its own add "
        f"{probe['raw_add_ns']:.1f} ns and successful load {probe['raw_load_ns']:.1f} ns are what weft's "
        f"signal_add and signal_poll time, the rest ({probe['residual_ns']:.1f} ns) is the transfer",
        "'network' here is the cache-coherence transfer between the two cores: the signal's add, "
        "the load that sees it and the probe's residual",
        *speed_notes(document),
        *round_error_notes(document),
    )
    models, comparisons, method_notes = choose_models(
        document, {"injection": injection(inj, batch, inj_observed), "latency": latency(lat, lat_observed)},
        {"injection": inj, "latency": lat}, "network")
    return Breakdown(name=f"weft-{PATH}", source="measured", scenarios={"weft": models},
                     overall="weft", notes=(*notes, *method_notes), metadata=dict(metadata), points=stats,
                     highlights=("direct_copy", "signal_add", "transfer", "signal_poll"),
                     comparisons=comparisons, selfcheck=dict(document.get("selfcheck") or {}))
