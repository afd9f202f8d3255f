"""Rendering results: number formats, ratios, rich tables and PNG charts.

Ratios are always oriented as weft's advantage, so that > 1 reads "weft is
better" whatever the unit: for a rate it is weft / other, for a latency
other / weft.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rich import box
from rich.console import Console, RenderableType
from rich.table import Column, Table
from rich.text import Text

# Off a terminal (a pipe, a log file) nothing may be cut: rich would fit
# tables into 80 columns and shorten values with "…", so the console is made
# wide enough for any table there, and tables take their natural width.
LOG_WIDTH = 10_000


def make_console(**options: Any) -> Console:
    """A console that writes whole values when it is not a terminal."""
    made = Console(**options)
    if not made.is_terminal:
        made = Console(width=LOG_WIDTH, **options)
    return made


console = make_console()

MISSING = "—"
TIME_UNITS = {"s": "s", "ms": "ms", "us": "µs", "ns": "ns"}


def is_latency(unit: str) -> bool:
    """Whether a lower value in this unit is better."""
    return unit in TIME_UNITS


def fmt_unit(unit: str) -> str:
    """A unit as people write it (us -> µs)."""
    return TIME_UNITS.get(unit, unit)


def fmt_number(value: float | None) -> str:
    """A measured value to three significant figures or so."""
    if value is None:
        return MISSING
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    return f"{value:.{digits}f}"


def fmt_size(nbytes: int) -> str:
    """A message size in binary units: 8 B, 4 KiB, 1 MiB."""
    units = ("B", "KiB", "MiB", "GiB")
    scale = 0
    while scale < len(units) - 1 and nbytes >= 1024 and nbytes % 1024 == 0:
        nbytes //= 1024
        scale += 1
    return f"{nbytes} {units[scale]}"


def advantage(weft: float | None, other: float | None, *, lower_is_better: bool) -> float | None:
    """weft's advantage over another implementation (> 1: weft is better);
    None when either value is missing or zero."""
    if not weft or not other:
        return None
    return other / weft if lower_is_better else weft / other


def fmt_ratio(ratio: float | None, goal: float = 1.0) -> Text:
    """A ratio as "1.23×", green when it meets the goal, red otherwise."""
    if ratio is None:
        return Text(MISSING, style="dim")
    return Text(f"{ratio:.2f}×", style="bold green" if ratio >= goal else "bold red")


def table(
    title: str,
    columns: Sequence[str | Column],
    rows: Sequence[Sequence[RenderableType]],
    caption: str | None = None,
) -> Table:
    """A table in weft's house style."""
    result = Table(
        *columns,
        title=title,
        caption=caption,
        box=box.SIMPLE_HEAVY,
        title_style="bold",
        title_justify="left",
        header_style="bold cyan",
        caption_justify="left",
    )
    for row in rows:
        result.add_row(*row)
    return result


def new_figure(width: float, height: float) -> Figure:
    """A figure of width x height inches, in constrained layout, drawn off
    screen (Agg) for savefig."""
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def grouped_bar_chart(
    path: Path,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    xlabel: str,
    reference: float | None = 1.0,
) -> Path:
    """Horizontal bars, one group per label and one bar per series in each
    group (None leaves a gap), with a dashed line at the reference value.
    Written as a PNG at path."""
    positions = np.arange(len(groups))
    height = 0.8 / max(len(series), 1)
    figure = new_figure(8, 1.5 + 0.45 * len(groups) * max(len(series), 1) ** 0.5)
    axes = figure.add_subplot()
    for index, (name, values) in enumerate(series.items()):
        offsets = positions + (index - (len(series) - 1) / 2) * height
        axes.barh(offsets, np.array(values, dtype=float), height=height, label=name)
    if reference is not None:
        axes.axvline(reference, color="black", linestyle="--", linewidth=1)
    axes.set_yticks(positions, list(groups))
    axes.invert_yaxis()
    axes.set_xlabel(xlabel)
    axes.set_title(title)
    if len(series) > 1:
        figure.legend(loc="outside lower center", ncols=len(series), fontsize="small")
    axes.grid(axis="x", alpha=0.3)
    figure.savefig(path, dpi=120)
    return path


def bar_chart(
    path: Path,
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    title: str,
    xlabel: str,
    reference: float | None = 1.0,
) -> Path:
    """One bar per label; see grouped_bar_chart."""
    return grouped_bar_chart(
        path, labels, {xlabel: values}, title=title, xlabel=xlabel, reference=reference
    )


def finite(value: Any) -> Any:
    """value with every NaN or infinity (in lists and mappings too) made
    None: JSON has no such numbers, and weft writes null for a value that
    was not measured."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def to_json(document: Any) -> str:
    """document as strict JSON (NaN and infinities as null), indented."""
    return json.dumps(finite(document), indent=2, allow_nan=False)


def print_json(document: Any) -> None:
    """What --json prints: the document alone, on standard output."""
    sys.stdout.write(to_json(document) + "\n")
