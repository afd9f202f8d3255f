"""The two methods of a measured breakdown side by side (docs/breakdown.md,
"Two methods"): the trace points, which time each component's region and
subtract the timer's own cost, and the differential method, which takes each
component as the difference of the time per operation of two long loops,
one with the component and one without, run in alternating chunks.

A document may hold, beside the trace points' components:

    "differential": {
        "injection": {"components_ns": {NAME: ns}, "halfwidth_ns": {NAME: ns|null},
                      "model_rounds_ns": [...]},
        "latency":   {...}},
    "selfcheck": {"known_ns": f, "differential_ns": f, "timer_ns": f,
                  "resolution_ns": {"differential": f, "timer": f}, ...}

A differential component may cover several of the trace points' (GROUPS):
the comparison adds those up.  A figure is resolved when it is at least its
method's resolution on this machine (the self-check's, or the figure's own
95 % half-width when that is wider); one that is not is "below resolution
(< x ns)", never a negative time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from weft import WeftError
from weft.models.breakdown_document import read_number
from weft.models.breakdown_model import Model, leaf

METHODS = ("trace points", "differential")

# Per path and quantity: each differential component and the trace-point
# components it covers (in the order of the model's equation).
_UCX_GROUPS = {
    "injection": {"HLP_post": ("HLP_post", "busy_post"), "LLP_post": ("LLP_post",),
                  "HLP_tx_prog": ("HLP_tx_prog",), "LLP_prog": ("LLP_prog",), "misc": ("misc",)},
    "latency": {"HLP": ("HLP_post", "HLP_rx_prog"), "LLP": ("LLP_post", "LLP_prog"), "transfer": ("transfer",)},
}
GROUPS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "shm": _UCX_GROUPS, "tcp": _UCX_GROUPS, "tcp-nodes": _UCX_GROUPS,
    "direct": {
        "injection": {"HLP_post": ("HLP_post",), "direct_copy": ("direct_copy",), "LLP_prog": ("LLP_prog",),
                      "HLP_prog": ("HLP_prog",), "misc": ("misc",)},
        "latency": {"HLP": ("HLP_post", "poll_phase"),
                    "memory": ("direct_copy", "signal_add", "transfer", "signal_poll", "payload_read")},
    },
}
# Trace-point components measured by a loop of their own, not by timed
# regions (Misc: the loop with empty calls): the timer's resolution does not
# apply to them, the differential method's does.
LOOP_MEASURED = frozenset({"misc"})

# The level of each differential component (breakdown_model.LEVEL_CATEGORY);
# "transfer" takes the path's.
LEVELS = {"HLP_post": "HLP", "LLP_post": "LLP", "HLP_tx_prog": "HLP", "LLP_prog": "LLP", "misc": "misc",
          "HLP": "HLP", "LLP": "LLP", "direct_copy": "LLP", "HLP_prog": "HLP", "memory": "network"}


@dataclass(frozen=True)
class Figure:
    """One method's figure for one component: ns as measured (it may be
    below 0, a difference or a subtraction), and the resolution it is
    judged by."""

    ns: float
    resolution: float

    @property
    def resolved(self) -> bool:
        return self.ns >= self.resolution

    @property
    def shown(self) -> float:
        """What a model adds: the figure, never below 0."""
        return max(self.ns, 0.0)

    def text(self) -> str:
        if not self.resolved:
            return f"below resolution (< {self.resolution:.2f} ns)"
        return f"{self.ns:.2f}"


@dataclass(frozen=True)
class Row:
    """A component of the comparison: the differential's name, the trace
    points' components it covers, and each method's figure."""

    name: str
    covers: tuple[str, ...]
    points: Figure
    differential: Figure

    @property
    def disagreement(self) -> float:
        """Differential − trace points, in ns."""
        return self.differential.ns - self.points.ns

    @property
    def decided(self) -> bool:
        """Whether the two differ by more than their resolutions allow."""
        return abs(self.disagreement) > max(self.points.resolution, self.differential.resolution)


@dataclass(frozen=True)
class Comparison:
    """One quantity (injection or latency) by both methods."""

    kind: str
    observed: float
    rows: tuple[Row, ...]
    totals: dict[str, float]  # method -> its model's sum (figures below 0 taken as 0)
    chosen: str
    reason: str

    def error(self, method: str) -> float:
        return 100.0 * (self.totals[method] - self.observed) / self.observed


def read_selfcheck(document: Mapping[str, Any]) -> dict[str, float] | None:
    """Each method's resolution in ns from the document's self-check, or
    None without one."""
    check = document.get("selfcheck")
    if check is None:
        return None
    resolution = check.get("resolution_ns") if isinstance(check, Mapping) else None
    if not isinstance(resolution, Mapping):
        raise WeftError("selfcheck.resolution_ns must be an object with 'differential' and 'timer'")
    out = {}
    for method, key in (("differential", "differential"), ("trace points", "timer")):
        value = resolution.get(key)
        # null: the check was too disturbed to bound the method
        out[method] = math.inf if value is None else read_number(value, f"selfcheck.resolution_ns.{key}")
    return out


def read_differential(document: Mapping[str, Any], kind: str) -> dict[str, tuple[float, float]] | None:
    """The differential section of one quantity: name -> (ns, half-width;
    inf when unknown), in the order of GROUPS; None when the document has
    none."""
    section = document.get("differential")
    if section is None:
        return None
    path = document.get("path")
    if not isinstance(section, Mapping) or not isinstance(section.get(kind), Mapping):
        raise WeftError(f"differential.{kind} must be an object")
    groups = GROUPS[path][kind]
    components = section[kind].get("components_ns")
    widths = section[kind].get("halfwidth_ns", {})
    if not isinstance(components, Mapping) or set(components) != set(groups):
        raise WeftError(f"differential.{kind}.components_ns must have exactly {', '.join(groups)}, "
                        f"got {components!r}")
    if not isinstance(widths, Mapping):
        raise WeftError(f"differential.{kind}.halfwidth_ns must be an object")
    out = {}
    for name in groups:
        ns = read_number(components[name], f"differential.{kind}.components_ns.{name}", signed=True)
        width = widths.get(name)
        out[name] = (ns, math.inf if width is None else
                     read_number(width, f"differential.{kind}.halfwidth_ns.{name}"))
    return out


def compare(document: Mapping[str, Any], kind: str, points: Mapping[str, float],
            observed: float) -> Comparison | None:
    """The comparison of one quantity, or None when the document has no
    differential section.  `points` are the trace points' components."""
    differential = read_differential(document, kind)
    if differential is None:
        return None
    resolution = read_selfcheck(document) or {method: 0.0 for method in METHODS}
    rows = []
    for name, covers in GROUPS[document["path"]][kind].items():
        ns, width = differential[name]
        timed = any(c not in LOOP_MEASURED for c in covers)
        rows.append(Row(name, covers,
                        Figure(math.fsum(points[c] for c in covers),
                               resolution["trace points" if timed else "differential"]),
                        Figure(ns, max(resolution["differential"], width))))
    totals = {"trace points": math.fsum(max(points[c], 0.0) for c in points),
              "differential": math.fsum(row.differential.shown for row in rows)}
    chosen, reason = choose(totals, observed)
    return Comparison(kind, observed, tuple(rows), totals, chosen, reason)


def choose(totals: Mapping[str, float], observed: float) -> tuple[str, str]:
    """The method whose sum is closer to the observation, and why (a tie
    goes to the trace points, which resolve more components)."""
    errors = {method: abs(totals[method] - observed) / observed for method in METHODS}
    chosen = min(METHODS, key=lambda method: (errors[method], method != "trace points"))
    other = METHODS[1 - METHODS.index(chosen)]
    reason = (f"its sum is within {100 * errors[chosen]:.1f}% of the observation; the {other} method's "
              f"within {100 * errors[other]:.1f}%")
    return chosen, reason


def share_step(resolution: float, total: float) -> float:
    """The finest step a share of `total` may be printed with, in percent:
    the power of ten at or below what `resolution` ns is of the total
    (0.01 % at the finest, 100 % when the resolution is unknown)."""
    if not total > 0:
        return 100.0
    fraction = 100.0 * resolution / total
    if not math.isfinite(fraction):
        return 100.0
    if fraction <= 0.01:
        return 0.01
    return min(10.0 ** math.floor(math.log10(fraction) + 1e-9), 100.0)


def format_share(share: float, step: float) -> str:
    """A share in percent rounded to `step` (a power of ten)."""
    decimals = max(0, -int(math.floor(math.log10(step) + 1e-9)))
    return f"{round(share / step) * step:.{decimals}f}%"


def selfcheck_note(document: Mapping[str, Any]) -> str | None:
    """What the self-check found, in a sentence; None without one."""
    check = document.get("selfcheck")
    resolution = read_selfcheck(document)
    if resolution is None or not isinstance(check, Mapping):
        return None

    def ns(key: str) -> str:
        value = check.get(key)
        return "?" if not isinstance(value, (int, float)) else f"{value:.2f}"

    return (f"self-check on {check.get('workload', 'a dependent chain')} of known cost {ns('known_ns')} ns: "
            f"the differential method reads {ns('differential_ns')} ns, the trace points' timer "
            f"{ns('timer_ns')} ns; resolution on this machine: differential "
            f"{resolution['differential']:.2f} ns, trace points {resolution['trace points']:.2f} ns "
            "(no figure or share finer than that is printed)")


def choose_models(document: Mapping[str, Any], models: Mapping[str, Model], values: Mapping[str, Mapping[str, float]],
                  transfer_level: str) -> tuple[dict[str, Model], tuple[Comparison, ...], tuple[str, ...]]:
    """The models a measured breakdown reports: per quantity, the trace
    points' model (`models`, of the components `values`, never below 0) or the
    differential one, whichever closes the sum best, each with its
    resolution; the comparisons and the notes that say which and why.  A
    document without a differential section keeps the trace points'."""
    resolution = read_selfcheck(document)
    chosen: dict[str, Model] = {}
    comparisons = []
    notes = []
    for kind, model in models.items():
        comparison = compare(document, kind, non_negative(values[kind]), model.observed_ns or 0.0)
        if resolution is not None:
            model = replace(model, resolution={
                c.name: resolution["differential" if c.name.lower() in LOOP_MEASURED else "trace points"]
                for c in model.components})
        if comparison is None:
            chosen[kind] = model
            continue
        comparisons.append(comparison)
        notes.append(f"{kind}: the model takes the {comparison.chosen} method's components: {comparison.reason}")
        if comparison.chosen == "trace points":
            chosen[kind] = model
            continue
        leaves = tuple(leaf(row.name, row.differential.shown,
                            transfer_level if row.name == "transfer" else LEVELS[row.name],
                            label=f"{row.name} (differential: {' + '.join(row.covers)})")
                       for row in comparison.rows)
        chosen[kind] = Model(kind, f"{model.title}, differential", "the differential components' sum: "
                             + " + ".join(row.name for row in comparison.rows) + "  (docs/breakdown.md)",
                             leaves, model.observed_ns, model.observed_note,
                             {row.name: row.differential.resolution for row in comparison.rows})
    note = selfcheck_note(document)
    if note is not None:
        notes.insert(0, note)
    clock = document.get("clock")
    if isinstance(clock, Mapping):
        notes.insert(0, f"timer picked for this CPU: {clock.get('timer', '?')}, its frequency "
                        f"{clock.get('freq_source', '?')}")
    return chosen, tuple(comparisons), tuple(notes)


def non_negative(values: Mapping[str, float]) -> dict[str, float]:
    """Components as a model adds them: a figure below 0 (a region shorter
    than the timer's cost, within its jitter) counts 0."""
    return {name: max(value, 0.0) for name, value in values.items()}
