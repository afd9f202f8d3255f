"""`weft model`: where the nanoseconds of a small message go, and what
making a component faster would buy (Breaking Band §4-§7).

    weft model breakdown --path shm|tcp|tcp-nodes|direct   measure weft, then model
    weft model breakdown --from FILE.json           a saved measurement
    weft model breakdown --preset tx2-cx4           the paper's system, modelled
    weft model whatif [--preset tx2-cx4 | --from FILE.json]

The equations are in weft.models.breakdown_model (the models of a
measurement: weft.models.breakdown_measured), the speedups in
weft.models.whatif, the measurement in weft.bench.breakdown; this module
renders them: model vs observed with the error, Table-1-like percentage
tables, stacked bars (Figs. 8, 10, 12, 13), the CPU / I/O / network split
(Fig. 15) and the what-if curves (Fig. 17).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from rich.console import Console, Group, RenderableType
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from weft import WeftError
from weft.bench import breakdown as breakdown_run
from weft.core import report, results, runner
from weft.models import breakdown_methods, whatif
from weft.models.breakdown_measured import from_measurement
from weft.models.breakdown_model import CATEGORIES, KINDS, PATHS, PRESETS, Breakdown, Component, Model, preset, preset_data

BENCHMARK = "breakdown"
# weft's goal: the model within 10 % of the observation (the paper: 5 %).
GOAL_ERROR = 10.0
STRETCH_ERROR = 5.0


# ---------------------------------------------------------------------------
# Tables.

def fmt_ns(value: float) -> str:
    return f"{value:.2f}"


def fmt_error(error: float | None) -> Text:
    if error is None:
        return Text(report.MISSING, style="dim")
    style = "bold green" if abs(error) <= STRETCH_ERROR else "yellow" if abs(error) <= GOAL_ERROR else "bold red"
    return Text(f"{error:+.2f}%", style=style)


def label(breakdown: Breakdown) -> str:
    return f"{breakdown.name} ({breakdown.source})"


def validation_table(breakdown: Breakdown) -> RenderableType:
    """Each model's total against its observation."""
    rows = []
    for scenario, models in breakdown.scenarios.items():
        for kind, model in models.items():
            rows.append([scenario, kind, fmt_ns(model.total),
                         report.MISSING if model.observed_ns is None else fmt_ns(model.observed_ns),
                         fmt_error(model.error_percent), model.observed_note])
    return report.table(
        f"{label(breakdown)}: model vs observed, ns per message (latency one way)",
        ["scenario", "quantity", Column("model", justify="right"), Column("observed", justify="right"),
         Column("error", justify="right"), "observation"],
        rows,
        caption=f"error = (model − observed) / observed; goal ±{GOAL_ERROR:g}%, stretch ±{STRETCH_ERROR:g}%",
    )


def _component_rows(component: Component, total: float, depth: int, scale: float,
                    resolution: float | None = None, step: float = 0.01) -> Iterator[list[Any]]:
    """A component's row and its parts'.  With a resolution (a measured
    model's, in ns per message), a figure below it reads "below resolution"
    and shares are rounded to `step` percent; without (the preset), every
    figure as it is."""
    scale *= component.count
    if component.count == 1:
        count = ""
    elif component.count < 1:
        count = f"×1/{1 / component.count:.4g}"
    else:
        count = f"×{component.count:.4g}"
    style = "bold" if depth == 0 else "dim" if depth > 1 else ""
    if resolution is None:
        yield [Text("  " * depth + component.title, style=style), fmt_ns(component.ns), count,
               fmt_ns(component.ns * scale), f"{100 * component.ns * scale / total:.2f}%"]
    elif component.ns * scale < resolution:
        below = f"below resolution (< {resolution:.2f} ns)"
        yield [Text("  " * depth + component.title, style=style), below, count, below, ""]
    else:
        yield [Text("  " * depth + component.title, style=style), fmt_ns(component.ns), count,
               fmt_ns(component.ns * scale), breakdown_methods.format_share(100 * component.ns * scale / total, step)]
    for part in component.parts:
        yield from _component_rows(part, total, depth + 1, scale, resolution, step)


def component_table(model: Model, source: str) -> RenderableType:
    """A Table-1-like breakdown: each component and part, its time per
    occurrence and per message, and its share of the total (of a measured
    model, only those its resolution allows)."""
    if model.resolution:
        step = breakdown_methods.share_step(min(model.resolution.values()), model.total)
        rows = [row for component in model.components
                for row in _component_rows(component, model.total, 0, 1.0,
                                           model.resolution.get(component.name, max(model.resolution.values())),
                                           step)]
    else:
        rows = [row for component in model.components for row in _component_rows(component, model.total, 0, 1.0)]
    rows.append([Text("total", style="bold"), "", "", Text(fmt_ns(model.total), style="bold"), "100.00%"])
    return report.table(
        f"{model.title} — {source}",
        ["component", Column("ns", justify="right"), Column("per msg", justify="right"),
         Column("ns / msg", justify="right"), Column("share", justify="right")],
        rows,
        caption=model.equation,
    )


def split_table(breakdown: Breakdown) -> RenderableType:
    """Fig. 15 (and Fig. 14's HLP / LLP): time per level and per category."""
    rows = []
    for scenario, models in breakdown.scenarios.items():
        for kind, model in models.items():
            levels = model.by_level()
            categories = model.by_category()
            if model.resolution:
                # a measured model: no share finer than its resolution
                step = breakdown_methods.share_step(min(model.resolution.values()), model.total)

                def share(ns: float) -> str:
                    return breakdown_methods.format_share(100 * ns / model.total, step)
            else:
                def share(ns: float) -> str:
                    return f"{100 * ns / model.total:.1f}%"
            cells = [f"{name} {share(ns)}" for name, ns in levels.items()]
            rows.append([scenario, kind, *(f"{fmt_ns(categories[c])} ({share(categories[c])})"
                                           for c in CATEGORIES), ", ".join(cells)])
    return report.table(
        f"{label(breakdown)}: CPU / I/O / network split (Fig. 15), ns per message",
        ["scenario", "quantity", *(Column(c, justify="right") for c in CATEGORIES), "by level"],
        rows,
    )


def points_table(breakdown: Breakdown) -> RenderableType:
    """The trace points a measurement read, timer overhead subtracted."""
    rows = [[name, f"{point['count']:.0f}",
             fmt_ns(point["total_ns"] / point["count"]) if point["count"] else report.MISSING,
             fmt_ns(point["min_ns"]), fmt_ns(point["median_ns"])]
            for name, point in breakdown.points.items()]
    return report.table(f"{label(breakdown)}: trace points, ns per region",
                        ["point", Column("count", justify="right"), Column("mean", justify="right"),
                         Column("min", justify="right"), Column("median", justify="right")], rows)


def methods_table(breakdown: Breakdown, comparison: breakdown_methods.Comparison) -> RenderableType:
    """Both methods side by side for one quantity: each component, each
    method's figure (or "below resolution"), their disagreement, and each
    method's sum against the observation."""
    rows = []
    for row in comparison.rows:
        verdict = ("disagree" if row.decided else
                   "agree within resolution" if row.points.resolved or row.differential.resolved else "neither resolves")
        rows.append([row.name, " + ".join(row.covers), row.points.text(), row.differential.text(),
                     f"{row.disagreement:+.2f}", verdict])
    points, differential = (comparison.totals[method] for method in breakdown_methods.METHODS)
    rows.append([Text("sum", style="bold"), "", fmt_ns(points), fmt_ns(differential),
                 f"{differential - points:+.2f}", ""])
    rows.append([Text("error vs observed", style="bold"), "", fmt_error(comparison.error("trace points")),
                 fmt_error(comparison.error("differential")), "", ""])
    return report.table(
        f"{label(breakdown)}: {comparison.kind} by both methods, ns per message (observed "
        f"{fmt_ns(comparison.observed)})",
        ["component", "trace points it covers", Column("trace points", justify="right"),
         Column("differential", justify="right"), Column("differential − points", justify="right"), "verdict"],
        rows,
        caption=f"the model takes the {comparison.chosen} method: {comparison.reason}",
    )


def breakdown_report(breakdown: Breakdown) -> Group:
    parts: list[RenderableType] = [Text(label(breakdown), style="bold")]
    parts.extend(Text(note, style="dim") for note in breakdown.notes)
    parts.append(validation_table(breakdown))
    parts.extend(methods_table(breakdown, comparison) for comparison in breakdown.comparisons)
    for models in breakdown.scenarios.values():
        parts.extend(component_table(model, breakdown.source) for model in models.values())
    parts.append(split_table(breakdown))
    if breakdown.points:
        parts.append(points_table(breakdown))
    return Group(*parts)


# ---------------------------------------------------------------------------
# Charts.

def _stacked_chart(path: Path, bars: Sequence[tuple[str, Sequence[tuple[str, float]]]], colours: dict[str, Any],
                   *, title: str, size: tuple[float, float]) -> Path:
    """Horizontal 100 % bars, one per label, segments labelled with their
    share, and a legend of the colours; written as a PNG at path."""
    figure = report.new_figure(*size)
    axes = figure.add_subplot()
    for row, (_, segments) in enumerate(bars):
        total = sum(ns for _, ns in segments)
        left = 0.0
        for name, ns in segments:
            width = 100 * ns / total
            axes.barh(row, width, left=left, color=colours[name], edgecolor="white", linewidth=0.5)
            if width >= 4:
                axes.text(left + width / 2, row, f"{width:.1f}", ha="center", va="center", fontsize=7)
            left += width
    axes.set_yticks(range(len(bars)), [name for name, _ in bars])
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of the total")
    axes.set_title(title)
    handles = [Patch(color=colour, label=name) for name, colour in colours.items()]
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), fontsize="small")
    figure.savefig(path, dpi=120)
    return path


def _colours(names: Sequence[str]) -> dict[str, Any]:
    """A distinct colour per name, in order of first appearance."""
    palette = colormaps["tab20"].colors
    return {name: palette[index % len(palette)] for index, name in enumerate(dict.fromkeys(names))}


def segments(model: Model) -> list[tuple[str, float]]:
    """A model's bar segments, ns per message: its top-level components, a
    modelled transfer split into PCIe, Network and RC-to-MEM as in Fig. 13."""
    result = []
    for component in model.components:
        if component.level == "mixed":
            result.extend((part.name, part.per_message * component.count) for part in component.parts)
        else:
            result.append((component.name, component.per_message))
    return result


def stacked_bars_chart(breakdown: Breakdown, path: Path) -> Path:
    """Figs. 8, 10, 12, 13: each model as a 100 % bar of its components."""
    bars = [(f"{scenario}\n{kind}", segments(model))
            for scenario, models in breakdown.scenarios.items() for kind, model in models.items()]
    colours = _colours([name for _, segments in bars for name, _ in segments])
    return _stacked_chart(path, bars, colours, title=f"Breakdown of injection overhead and latency: {label(breakdown)}",
                          size=(10, 2 + 0.8 * len(bars) + 0.25 * len(colours)))


def split_chart(breakdown: Breakdown, path: Path) -> Path:
    """Fig. 15: CPU / I/O / network share of each latency model."""
    bars = [(f"{scenario} latency", [(c, ns) for c, ns in models["latency"].by_category().items() if ns > 0])
            for scenario, models in breakdown.scenarios.items()]
    colours = {"CPU": "tab:blue", "I/O": "tab:orange", "network": "tab:green"}
    return _stacked_chart(path, bars, colours, title=f"CPU / I/O / network split of the latency: {label(breakdown)}",
                          size=(9, 2.2 + 0.7 * len(bars)))


def plot_targets(model: Model, highlights: Sequence[str] = ()) -> list[str]:
    """The targets a what-if plot shows, as in Fig. 17: the levels, the
    top-level components (not one that spans categories, like a modelled
    transfer, nor one that is all of its level) and the highlighted parts."""
    levels = model.by_level()
    chosen = []
    for component in model.components:
        if component.level in levels and abs(levels[component.level] - component.per_message) < 1e-9:
            continue
        chosen.append(component.name)
    return [name for name in whatif.target_names(model)
            if (name in levels or name in chosen or name in highlights)
            and whatif.target(model, name).category != "mixed"]


def targets_in(model: Model, names: Sequence[str]) -> list[str]:
    """The names among `names` that are targets of this model."""
    known = {name.lower() for name in whatif.target_names(model)} | {"cpu"}
    return [name for name in names if name.lower() in known or model.find(name) is not None]


def whatif_chart(models: dict[str, Model], reductions: Sequence[float], path: Path, title: str,
                 names: Mapping[str, Sequence[str]] | None = None, highlights: Sequence[str] = ()) -> Path:
    """Fig. 17: one panel per quantity and category, a line per target
    (`names`: the targets of each quantity; default: plot_targets)."""
    panels = []
    for kind, model in models.items():
        chosen = names[kind] if names is not None else plot_targets(model, highlights)
        curves = whatif.curves(model, chosen, reductions)
        for category in CATEGORIES:
            lines = {name: values for name, (target, values) in curves.items() if target.category == category}
            if lines:
                panels.append((f"{kind}: {category}", lines, curves))
    if not panels:
        raise WeftError("nothing to plot: no target falls in a CPU, I/O or network category")
    columns = min(len(panels), 2)
    rows = (len(panels) + columns - 1) // columns
    # A fixed layout: the constrained one doubles the drawing time.
    figure = Figure(figsize=(6 * columns, 4.2 * rows))
    height = 4.2 * rows
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.55 / height, top=1 - 0.75 / height,
                           hspace=0.45, wspace=0.22)
    FigureCanvasAgg(figure)
    for index, (panel_title, lines, curves) in enumerate(panels):
        axes = figure.add_subplot(rows, columns, index + 1)
        for name, values in lines.items():
            axes.plot(reductions, values, marker="o", markersize=3, label=curves[name][0].label)
        axes.set_title(f"({chr(ord('a') + index)}) {panel_title}", fontsize="medium")
        axes.set_xlabel("reduction of the component (%)")
        axes.set_ylabel("speedup (% of the baseline time)")
        axes.set_xticks(list(reductions))
        axes.grid(alpha=0.3)
        axes.legend(fontsize="x-small")
    figure.suptitle(title)
    figure.savefig(path, dpi=120)
    return path


def whatif_table(model: Model, reductions: Sequence[float], source: str,
                 names: Sequence[str] | None = None) -> RenderableType:
    curves = whatif.curves(model, names, reductions)
    rows = [[name, target.category, fmt_ns(target.ns), *(f"{value:.2f}" for value in values),
             "" if target.label == name else target.label]
            for name, (target, values) in curves.items()]
    return report.table(
        f"what-if: speedup of the {model.kind} in % ({model.title}, {fmt_ns(model.total)} ns) — {source}",
        [Column("target", no_wrap=True), "category", Column("ns / msg", justify="right"),
         *(Column(f"−{r:g}%", justify="right", no_wrap=True) for r in reductions), "name"],
        rows,
        caption="speedup = time saved / baseline time; the components do not overlap, so it is linear in the reduction",
    )


def whatif_document(models: dict[str, Model], reductions: Sequence[float], source: str,
                    names: dict[str, list[str]] | None, projections: Sequence[tuple[str, float]]) -> dict[str, Any]:
    """What `weft model whatif --json` prints: for each quantity, each
    target's time and its speedups (in %) at the reductions, and the
    projections asked for (docs/toolkit-json.md)."""
    quantities: dict[str, Any] = {}
    for kind, model in models.items():
        if names is not None and not names[kind]:
            continue
        curves = whatif.curves(model, names and names[kind], reductions)
        quantities[kind] = {
            "title": model.title, "total_ns": model.total,
            "targets": [{"name": name, "category": target.category, "ns": target.ns,
                         "speedups": list(values)} for name, (target, values) in curves.items()],
        }
    projected = []
    for name, new_ns in projections:
        for kind, model in models.items():
            component = model.find(name)
            if component is not None:
                reduction, value = whatif.projected_speedup(model, name, new_ns)
                projected.append({"name": name, "quantity": kind, "ns": component.ns, "new_ns": new_ns,
                                  "reduction": reduction, "speedup": value})
        if not any(p["name"] == name for p in projected):
            known = dict.fromkeys(n for model in models.values() for n in whatif.target_names(model))
            raise WeftError(f"no component {name!r} in the models: choose one of {', '.join(known)}")
    return {"source": source, "reductions": list(reductions), "quantities": quantities, "projections": projected}


def projection_table(models: dict[str, Model], projections: Sequence[tuple[str, float]], source: str) -> RenderableType:
    """Speedups when a component takes a given time, in every model that has it."""
    rows = []
    for name, new_ns in projections:
        holders = {kind: model for kind, model in models.items() if model.find(name) is not None}
        if not holders:
            known = dict.fromkeys(n for model in models.values() for n in whatif.target_names(model))
            raise WeftError(f"no component {name!r} in the models: choose one of {', '.join(known)}")
        for kind, model in holders.items():
            component = model.find(name)
            reduction, value = whatif.projected_speedup(model, name, new_ns)
            rows.append([component.title, kind, f"{fmt_ns(component.ns)} → {fmt_ns(new_ns)}",
                         f"{reduction:.1f}%", f"{value:.2f}%"])
    return report.table(f"projections — {source}", ["component", "quantity", Column("ns", justify="right"),
                                                    Column("reduction", justify="right"),
                                                    Column("speedup", justify="right")], rows)


def saved_report(document: dict[str, Any]) -> Group:
    """breakdown_report of a saved breakdown document."""
    return breakdown_report(from_measurement(document))


# How `weft report` shows a saved breakdown: its tables, its bars and its split.
RENDERERS = {BENCHMARK: results.Renderer(saved_report, {
    "-bars.png": lambda document, path: stacked_bars_chart(from_measurement(document), path),
    "-split.png": lambda document, path: split_chart(from_measurement(document), path)})}


# ---------------------------------------------------------------------------
# Commands.

def parse_projection(text: str) -> tuple[str, float]:
    """"PIO_copy=15" -> ("PIO_copy", 15.0)."""
    name, sep, value = text.partition("=")
    try:
        if not sep or not name.strip():
            raise ValueError
        return name.strip(), float(value)
    except ValueError:
        raise WeftError(f"a projection is NAME=NS (e.g. PIO_copy=15), got {text!r}") from None


@contextmanager
def progress_display() -> Iterator[Callable[..., None]]:
    """A rich progress bar on standard error, driven by callback(step) or
    callback(step, done, total)."""
    console = Console(stderr=True)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed:.0f}/{task.total:.0f}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("starting", total=None)

        def update(step: str, done: float | None = None, total: float | None = None) -> None:
            bar.update(task, description=step, completed=done, total=total)

        yield update


def measure(path: str, nranks: int, iters: int | None, rounds: int | None = None) -> Path:
    """Run weft's breakdown probes and benchmarks; returns the saved JSON."""
    options: dict[str, Any] = {"np": nranks}
    if iters is not None:
        options["iters"] = iters
    if rounds is not None:
        options["rounds"] = rounds
    with progress_display() as update:
        document = breakdown_run.measure(path, progress=update, **options)
    from_measurement(document)  # reject a malformed measurement before it is saved
    fields = {key: value for key, value in document.items() if key not in ("benchmark", "metadata")}
    saved = results.save(BENCHMARK, fields, transport=path, ranks=nranks)
    # and breakdown-PATH-latest.json, the last run over this path
    results.latest_path(f"{BENCHMARK}-{path}", saved.parent).write_text(saved.read_text())
    return saved


def breakdown_command(args: argparse.Namespace) -> None:
    if args.preset is not None:
        if args.path is not None:
            raise WeftError("--path selects a measurement of weft; --preset renders the paper's modelled system")
        breakdown = preset(args.preset)
        stem = results.ensure_dir() / f"{BENCHMARK}-{args.preset}"
    else:
        if args.source is None:
            if args.path is None:
                raise WeftError("give --path shm|tcp|tcp-nodes|direct to measure, --from FILE.json or --preset tx2-cx4")
            source = measure(args.path, args.np, args.iters, args.rounds)
        else:
            source = args.source
        document = results.read_json(source)
        breakdown = from_measurement(document)
        if args.path is not None and args.path != document["path"]:
            raise WeftError(f"{source} holds a breakdown over {document['path']}, not --path {args.path}")
        stem = source.with_suffix("")
        if args.json:
            report.print_json(document)
            return
    if args.json:
        report.print_json(preset_data(args.preset))
        return
    report.console.print(breakdown_report(breakdown))
    bars = stacked_bars_chart(breakdown, stem.with_name(stem.name + "-bars.png"))
    split = split_chart(breakdown, stem.with_name(stem.name + "-split.png"))
    report.console.print(f"[dim]saved {bars} and {split.name}[/dim]")


def whatif_command(args: argparse.Namespace) -> None:
    reductions = whatif.parse_reductions(args.reductions)
    if args.plot is not None:
        results.check_output_file(args.plot, "--plot")
    if args.source is not None:
        breakdown = from_measurement(results.read_json(args.source))
        default_plot = args.source.with_suffix("").with_name(args.source.stem + "-whatif.png")
    else:
        breakdown = preset(args.preset)
        default_plot = results.results_dir() / f"whatif-{args.preset}.png"
    kinds = KINDS if args.kind == "both" else (args.kind,)
    models = {kind: breakdown.model(kind) for kind in kinds}
    source = label(breakdown)
    names = {kind: targets_in(model, args.target) for kind, model in models.items()} if args.target else None
    if names is not None and not any(names.values()):
        known = dict.fromkeys(n for model in models.values() for n in whatif.target_names(model))
        raise WeftError(f"no component {', '.join(map(repr, args.target))} in the models: "
                        f"choose among {', '.join(known)}")
    projections = [parse_projection(text) for text in args.project]
    if args.json:
        report.print_json(whatif_document(models, reductions, source, names, projections))
        return
    for kind, model in models.items():
        if names is None or names[kind]:
            report.console.print(whatif_table(model, reductions, source, names and names[kind]))
    if projections:
        report.console.print(projection_table(models, projections, source))
    plot = args.plot or default_plot
    if args.plot is None:
        results.ensure_dir(plot.parent)
    whatif_chart(models, reductions, plot, f"What-if speedups: {source}", names, breakdown.highlights)
    report.console.print(f"[dim]saved {plot}[/dim]")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "model",
        help="where the nanoseconds of a small message go, and what-if speedups",
        description="Models of injection overhead and latency (Breaking Band §4-§7) with weft as the high-level "
        "protocol and UCX as the low-level one: breakdowns measured on this machine or the paper's own "
        "(preset tx2-cx4, modelled), and what optimising a component would buy.",
    )
    commands = parser.add_subparsers(dest="model_command", metavar="SUBCOMMAND", required=True)

    breakdown = commands.add_parser(
        "breakdown",
        help="measure or load a breakdown: model vs observed, percentage tables and charts",
        description="Measure weft's breakdown over a path (or read a saved one, or the paper's preset), print "
        "the model against the observation with its error, Table-1-like percentage tables and the "
        "CPU / I/O / network split, and draw stacked bars (Figs. 8, 10, 12, 13) and the split (Fig. 15) as "
        "PNG next to the JSON (the preset's in the results directory).  A measurement checks itself first on a "
        "workload of known cost and states its resolution, measures each component by the trace points and by "
        "differential loops (with and without the component), shows both side by side and models with the one "
        "that closes the sum best; a figure below the resolution is printed as such.",
    )
    breakdown.add_argument("--path", choices=PATHS, help="measure over this path (or check --from's path)")
    source = breakdown.add_mutually_exclusive_group()
    source.add_argument("--from", dest="source", type=Path, metavar="FILE.json", help="a saved breakdown")
    source.add_argument("--preset", choices=sorted(PRESETS), help="the paper's system, modelled")
    breakdown.add_argument("--np", type=runner.ranks_type(2, 2), default=2, help="ranks of the measurement (default: 2)")
    breakdown.add_argument("--iters", type=int, help="iterations of each measurement (default: the benchmark's)")
    breakdown.add_argument("--rounds", type=int, help="rounds of the measurement, each with every figure measured "
                           "side by side (default: 5, 15 over the direct path; the report gives the median round "
                           "and each round's error)")
    breakdown.add_argument("--json", action="store_true",
                           help="print the breakdown document as JSON only (measured, --from's, or the preset's data)")
    breakdown.set_defaults(func=breakdown_command)

    what = commands.add_parser(
        "whatif",
        help="speedup curves for reducing each component by 10 ... 90%% (Fig. 17)",
        description="Speedup of the injection overhead and of the latency when one component, a part of it or "
        "a level (HLP, LLP, I/O, network, misc, CPU) costs less. Speedup = time saved / baseline time. "
        "Prints a table per quantity and draws the curves as PNG.",
    )
    source = what.add_mutually_exclusive_group()
    source.add_argument("--preset", choices=sorted(PRESETS), default="tx2-cx4",
                        help="the paper's system, modelled (default)")
    source.add_argument("--from", dest="source", type=Path, metavar="FILE.json", help="a measured breakdown")
    what.add_argument("--kind", choices=[*KINDS, "both"], default="both", help="quantity (default: both)")
    what.add_argument("--reductions", default=",".join(f"{r:g}" for r in whatif.REDUCTIONS), metavar="R,R,...",
                      help="reductions in percent, 0 to 100 (default: 10,30,50,70,90 as Fig. 17)")
    what.add_argument("--target", action="append", default=[], metavar="NAME",
                      help="only this component, part or level (repeatable; default: all in the table, "
                      "the levels, top-level components and the preset's highlighted parts in the plot)")
    what.add_argument("--project", action="append", default=[], metavar="NAME=NS",
                      help="speedup if component NAME took NS ns per occurrence, e.g. PIO_copy=15 (repeatable)")
    what.add_argument("--plot", type=Path, metavar="FILE.png",
                      help="where to draw the curves, in an existing directory (default: next to --from's JSON, "
                      "or whatif-PRESET.png in the results directory)")
    what.add_argument("--json", action="store_true", help="print the speedups as JSON only, without tables or plot")
    what.set_defaults(func=whatif_command)
