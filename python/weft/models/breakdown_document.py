"""A measured breakdown document: the checks and notes that the readers of
every path share (weft.models.breakdown_measured for the UCX paths,
weft.models.breakdown_direct for the direct one), and the document made of a
benchmark's output.

Every reader takes the timer's overhead (`timer.overhead_ns`, or a
section's own `timer_overhead_ns`) as the jitter a figure may fall below 0
by: the overhead subtracted from every sample is an estimate, and a region
of a few instructions can read a little below 0 once it is subtracted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from weft import WeftError
from weft.core import results
from weft.models.breakdown_model import KINDS, Component, composite, leaf

POINT_FIELDS = ("count", "total_ns", "min_ns", "median_ns")


def read_number(value: Any, where: str, *, positive: bool = False, signed: bool = False) -> float:
    """A document's number, finite and non-negative (or of either sign:
    signed; non-zero: positive), else a WeftError naming it (`where`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise WeftError(f"{where} must be a finite number, got {value!r}")
    if (value < 0 and not signed) or (positive and value == 0):
        raise WeftError(f"{where} must be {'positive' if positive else 'non-negative'}, got {value!r}")
    return float(value)


def read_section(document: Mapping[str, Any], kind: str, fields: tuple[str, ...],
                 jitter_ns: float = 0.0) -> tuple[dict[str, float], float]:
    """A section's components and observed time.  A component below 0 by
    no more than jitter_ns (the timer overhead subtracted from every
    sample, whose estimate it is within) is a measured 0 and kept as
    measured; further below 0 it is an error."""
    section = document.get(kind)
    if not isinstance(section, Mapping):
        raise WeftError(f"breakdown has no {kind!r} object")
    components = section.get("components_ns")
    if not isinstance(components, Mapping):
        raise WeftError(f"breakdown {kind} has no 'components_ns' object")
    missing = [name for name in fields if name not in components]
    if missing:
        raise WeftError(f"breakdown {kind} lacks components {', '.join(missing)} (expected {', '.join(fields)})")
    unknown = sorted(set(components) - set(fields))
    if unknown:
        raise WeftError(f"breakdown {kind} has unknown components {', '.join(unknown)} (expected {', '.join(fields)})")
    values = {name: read_number(components[name], f"{kind}.components_ns.{name}", signed=True) for name in fields}
    for name, value in values.items():
        if value < -jitter_ns:
            raise WeftError(f"{kind}.components_ns.{name} must be non-negative, got {value!r}"
                            + (f" (beyond the timer overhead {jitter_ns:g} ns)" if jitter_ns else ""))
    return values, read_number(section.get("observed_ns"), f"{kind}.observed_ns", positive=True)


# A component measured as several regions (docs/breakdown.md): the
# document's optional "<component>_parts_ns" object, whose parts sum to the
# component.  Part name -> what it times.
COMPONENT_PARTS: dict[str, dict[str, str]] = {
    "HLP_post": {"entry": "to the UCX call", "tail": "after the UCX call"},
    "HLP_tx_prog": {"callbacks": "completion callbacks", "call": "weft_progress's own code"},
}


def read_parted(document: Mapping[str, Any], kind: str, name: str, ns: float, level: str,
                jitter_ns: float) -> Component:
    """Component `name` of section `kind`: a leaf, or, when the section has
    its parts, a composite of them (which must sum to ns)."""
    parts = document[kind].get(f"{name}_parts_ns")
    if parts is None:
        return leaf(name, ns, level)
    where = f"{kind}.{name}_parts_ns"
    expected = COMPONENT_PARTS[name]
    if not isinstance(parts, Mapping) or set(parts) != set(expected):
        raise WeftError(f"{where} must have exactly the parts {', '.join(expected)}, got {parts!r}")
    values = {part: read_number(parts[part], f"{where}.{part}", signed=True) for part in expected}
    for part, value in values.items():
        if value < -jitter_ns:
            raise WeftError(f"{where}.{part} must be non-negative, got {value!r}")
    total = math.fsum(values.values())
    measured = read_number(document[kind]["components_ns"][name], f"{kind}.components_ns.{name}", signed=True)
    # the document rounds each figure to 0.001 ns
    if abs(total - measured) > 0.005:
        raise WeftError(f"{where} sum to {total:g} ns, not {kind}.components_ns.{name} = {measured:g} ns")
    if min(values.values()) < 0:
        # a part below 0 (the timer's jitter) counts 0, and the parts no
        # longer add up to the component the model takes (ns): it stands alone
        return leaf(name, ns, level)
    return composite(name, tuple(leaf(f"{name}_{part}", value, level, label=f"{name} ({expected[part]})")
                                 for part, value in values.items()))


def point_stats(document: Mapping[str, Any], jitter: float, floored: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """The document's trace points, each field a number (only `count`
    non-negative): a region of a few ns, the timer's overhead subtracted,
    can read below 0, but the `floored` fields not by more than that
    overhead per sample (`jitter` ns; for `total_ns`, times the count)."""
    points = document.get("points", {})
    if not isinstance(points, Mapping):
        raise WeftError("breakdown 'points' must be an object of trace points")
    stats = {str(name): {key: read_number(point.get(key) if isinstance(point, Mapping) else None,
                                      f"points.{name}.{key}", signed=key != "count")
                         for key in POINT_FIELDS}
             for name, point in points.items()}
    for name, stat in stats.items():
        for key in floored:
            floor = -jitter * (stat["count"] if key == "total_ns" else 1)
            if stat[key] < floor:
                raise WeftError(f"points.{name}.{key} must be at least {floor:g} (the timer overhead "
                                f"{jitter:g} ns per sample below 0), got {stat[key]!r}")
    return stats


def round_errors(document: Mapping[str, Any], kind: str, method: str = "trace points") -> list[float]:
    """(model − observed) / observed in percent of each round, each round's
    model from its own figures (`model_rounds_ns`, which the benchmarks
    write beside `observed_rounds_ns`; the differential method's in
    `differential.<kind>.model_rounds_ns`); [] when the document has none."""
    section = document.get(kind)
    if not isinstance(section, Mapping):
        return []
    where = kind
    if method == "differential":
        differential = document.get("differential")
        holder = differential.get(kind) if isinstance(differential, Mapping) else None
        where = f"differential.{kind}"
    else:
        holder = section
    if not isinstance(holder, Mapping) or "model_rounds_ns" not in holder:
        return []
    if method == "differential" and "observed_rounds_ns" not in section:
        return []  # nothing to pair them with
    model, observed = holder.get("model_rounds_ns"), section.get("observed_rounds_ns")
    if not isinstance(model, list) or not isinstance(observed, list) or len(model) != len(observed):
        raise WeftError(f"{where}.model_rounds_ns and {kind}.observed_rounds_ns must be lists of one value per round")
    return [100.0 * (read_number(m, f"{where}.model_rounds_ns", signed=True)
                     - read_number(o, f"{kind}.observed_rounds_ns", positive=True)) / o
            for m, o in zip(model, observed)]


def round_error_notes(document: Mapping[str, Any]) -> tuple[str, ...]:
    """A note per quantity and method: the median and the range of its
    per-round errors."""
    notes = []
    for kind in KINDS:
        for method, what in (("trace points", "model"), ("differential", "differential sum")):
            errors = sorted(round_errors(document, kind, method))
            if errors:
                half = len(errors) // 2
                middle = errors[half] if len(errors) % 2 else 0.5 * (errors[half - 1] + errors[half])
                notes.append(f"{kind}, each round's {what} against its own observation: median error "
                             f"{middle:+.2f}% (rounds {errors[0]:+.1f}% to {errors[-1]:+.1f}%)")
    return tuple(notes)


def timer_notes(document: Mapping[str, Any]) -> tuple[str, ...]:
    """What the document says of its timer: the overhead each round
    measured beside its components, and how much of a put the serialising
    timer does not see (the caller's timing of one put against what a put
    adds to the running loop)."""
    notes = []
    for kind in KINDS:
        section = document.get(kind)
        if isinstance(section, Mapping) and "timer_overhead_ns" in section:
            value = read_number(section["timer_overhead_ns"], f"{kind}.timer_overhead_ns", positive=True)
            notes.append(f"{kind}: timer overhead {value:.2f} ns as the loop measured it (calibrated beside the "
                         "components, in place of the library's)")
    calls = document.get("injection", {}).get("calls_ns") if isinstance(document.get("injection"), Mapping) else None
    if isinstance(calls, Mapping) and "weft_put_nbi_incremental" in calls and "weft_put_nbi" in calls:
        timed = read_number(calls["weft_put_nbi"], "injection.calls_ns.weft_put_nbi", signed=True)
        running = read_number(calls["weft_put_nbi_incremental"], "injection.calls_ns.weft_put_nbi_incremental",
                          signed=True)
        notes.append(f"timer check: a weft_put_nbi timed by its caller reads {timed:.2f} ns; in the running "
                     f"loop a put costs {running:.2f} ns (two puts per iteration less one): "
                     f"{running - timed:+.2f} ns of a call that a serialising timer does not see")
    return tuple(notes)


def speed_notes(document: Mapping[str, Any]) -> tuple[str, ...]:
    """The share of each round's cycles the injection's figures come from
    (those whose observed chunk ran within 15 % of the median), and of its
    chunks in which no rank waited for a core, when the document gives
    them."""
    section = document.get("injection")
    notes = []
    kept = _shares(section, "cycles_kept_rounds", positive=True)
    if kept:
        notes.append(f"injection: each round's figures from its cycles at the median speed, "
                     f"{100 * min(kept):.0f}–{100 * max(kept):.0f}% of them")
    calm = _shares(section, "chunks_calm_rounds", positive=False)
    if calm:
        watched = section.get("ranks_watched")
        if watched == 0:
            notes.append("injection: the ranks' waits for a core could not be read here, so no "
                         "chunk was left out for them")
        else:
            notes.append(f"injection: chunks in which no rank waited for a core, "
                         f"{100 * min(calm):.0f}–{100 * max(calm):.0f}% (the figures come from those)")
    return tuple(notes)


def _shares(section: Any, name: str, positive: bool) -> list[float]:
    """injection.<name>: one share of 0 to 1 per round ([] when absent)."""
    values = section.get(name) if isinstance(section, Mapping) else None
    if values is None:
        return []
    if not isinstance(values, list) or not values:
        raise WeftError(f"injection.{name} must be a list of one share per round")
    shares = [read_number(value, f"injection.{name}", positive=positive) for value in values]
    if max(shares) > 1:
        raise WeftError(f"injection.{name} are shares of 0 to 1, got {max(shares)!r}")
    return shares


def document_of(data: Any, program: str, path: str, np: int, transport: str) -> dict[str, Any]:
    """The breakdown document of a benchmark's JSON output `data` over
    `path` (transport: the default when the output names none)."""
    if not isinstance(data, dict):
        raise WeftError(f"{program} output is not a JSON object")
    return {
        "benchmark": "breakdown",
        "metadata": results.metadata(transport=str(data.get("transport", transport)), ranks=np),
        "path": path,
        **{key: value for key, value in data.items() if key != "benchmark"},
    }
