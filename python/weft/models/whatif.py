"""What-if analysis (Breaking Band §7, Fig. 17): how much faster injection or
latency gets when one component, or a whole level, costs less.

The models' components do not overlap, so reducing a target by r% saves
r% of its time per message and nothing else changes. Speedup is the time
saved divided by the baseline time, in percent:

    speedup(target, r) = r/100 · time(target) / total

A target is any component or part of a model, by name (LLP_post, PIO_copy,
Switch, ...), or a level (HLP, LLP, I/O, network, misc) or category (CPU):
the sum of its leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from weft import WeftError
from weft.models.breakdown_model import CATEGORIES, LEVEL_CATEGORY, LEVELS, Component, Model

# Fig. 17's five evenly spaced reductions, 10 % (1.1× faster) to 90 % (10× faster).
REDUCTIONS = (10.0, 30.0, 50.0, 70.0, 90.0)

# How the level targets are shown (Fig. 17c's "Integrated NIC" is the I/O level).
GROUP_LABELS = {"HLP": "HLP", "LLP": "LLP", "misc": "Misc", "I/O": "I/O",
                "network": "Network", "CPU": "CPU"}


def check_reduction(percent: float) -> float:
    """A reduction in percent, 0 (no change) to 100 (component removed)."""
    if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not math.isfinite(percent) \
            or not 0.0 <= percent <= 100.0:
        raise WeftError(f"a reduction must be a percentage between 0 and 100, got {percent!r}")
    return float(percent)


def parse_reductions(text: str) -> tuple[float, ...]:
    """"10,30,50" -> (10.0, 30.0, 50.0); each between 0 and 100."""
    values = []
    for item in text.split(","):
        try:
            values.append(check_reduction(float(item)))
        except ValueError:
            raise WeftError(f"a reduction must be a number of percent, got {item.strip()!r} in {text!r}") from None
    return tuple(values)


@dataclass(frozen=True)
class Target:
    """What a what-if reduces: its label, Fig. 15 category and time per message in a model."""

    name: str
    label: str
    category: str
    ns: float


def _group_ns(model: Model, name: str) -> float | None:
    if name in LEVELS:
        wanted = {name}
    elif name in CATEGORIES:
        wanted = {level for level, category in LEVEL_CATEGORY.items() if category == name}
    else:
        return None
    return math.fsum(part.ns * scale for part, scale in model.leaves() if part.level in wanted)


def _component_ns(model: Model, component: Component) -> float:
    """Time per message of a component anywhere in the tree (its count times its ancestors')."""
    def walk(node: Component, scale: float) -> float | None:
        scale *= node.count
        if node is component:
            return node.ns * scale
        for part in node.parts:
            found = walk(part, scale)
            if found is not None:
                return found
        return None

    for top in model.components:
        found = walk(top, 1.0)
        if found is not None:
            return found
    raise AssertionError(f"{component.name} is not in {model.title}")


def target(model: Model, name: str) -> Target:
    """Resolve a target name in a model (case-insensitive for components)."""
    group = _group_ns(model, name)
    if group is not None:
        category = name if name in CATEGORIES else LEVEL_CATEGORY[name]
        return Target(name, GROUP_LABELS[name], category, group)
    component = model.find(name)
    if component is None:
        raise WeftError(f"no component {name!r} in {model.title}: choose one of {', '.join(target_names(model))}")
    category = LEVEL_CATEGORY.get(component.level, "mixed")
    return Target(component.name, component.title, category, _component_ns(model, component))


def target_names(model: Model) -> list[str]:
    """Every target of a model: its levels, then its components and their
    parts depth first; a name already listed (the level misc and a
    component Misc that is all of it) is listed once."""
    names = [level for level in model.by_level()]

    def walk(node: Component) -> None:
        if node.name.lower() not in {name.lower() for name in names}:
            names.append(node.name)
        for part in node.parts:
            walk(part)

    for component in model.components:
        walk(component)
    return names


def speedup(model: Model, name: str, reduction: float) -> float:
    """Speedup in percent of the whole when target `name` is reduced by
    `reduction` percent: time saved / baseline time."""
    return check_reduction(reduction) * target(model, name).ns / model.total


def projected_speedup(model: Model, name: str, new_ns: float) -> tuple[float, float]:
    """(reduction %, speedup %) when one occurrence of component `name`
    takes new_ns instead of its current time (e.g. PIO copy 94.25 -> 15 ns)."""
    component = model.find(name)
    if component is None:
        raise WeftError(f"no component {name!r} in {model.title}: choose one of {', '.join(target_names(model))}")
    if isinstance(new_ns, bool) or not isinstance(new_ns, (int, float)) or not math.isfinite(new_ns) \
            or not 0.0 <= new_ns <= component.ns:
        raise WeftError(f"{component.name} takes {component.ns:g} ns: a projected time must be between 0 and that, "
                        f"got {new_ns!r}")
    reduction = 100.0 * (component.ns - new_ns) / component.ns if component.ns else 0.0
    return reduction, speedup(model, name, reduction)


def curves(model: Model, names: Iterable[str] | None = None,
           reductions: Sequence[float] = REDUCTIONS) -> dict[str, tuple[Target, list[float]]]:
    """Speedup curves: target name -> (target, speedup at each reduction)."""
    checked = [check_reduction(r) for r in reductions]
    result = {}
    for name in (target_names(model) if names is None else names):
        resolved = target(model, name)
        result[resolved.name] = (resolved, [r * resolved.ns / model.total for r in checked])
    return result
