"""`weft report FILE...`: show saved results again, from the files alone
(results of another day, or measured on another machine).

    weft report rma-latest.json
    weft report coll-smpi-20260101-120000-node1.json latbw-latest.json --png /tmp/plots

A result file names the benchmark that made it (its "benchmark" field,
weft.core.results); the module that made it says how to show it (its
RENDERERS): the tables the benchmark prints after a run, and its PNG
charts, drawn into the results directory (or --png DIR) and named after the
file (rma-latest.json gives rma-latest.png).  Every file is read and
checked before anything is shown.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from weft import WeftError
from weft.bench import coll, dgemm, endpoints, flood, ft, gups, hvec, latbw, profcost, rma, stencil, summa
from weft.commands import model, project
from weft.core import report, results

# The modules that save result files.
PRODUCERS = (rma, ft, latbw, endpoints, dgemm, stencil, profcost, coll, flood, summa, hvec, gups, model, project)


def renderers() -> dict[str, results.Renderer]:
    """How to show each benchmark's files, by the benchmark's name."""
    known: dict[str, results.Renderer] = {}
    for module in PRODUCERS:
        known.update(module.RENDERERS)
    return known


def load(path: Path, known: dict[str, results.Renderer]) -> tuple[dict[str, Any], results.Renderer]:
    """A result file and how to show it; a WeftError names what is wrong
    (missing, not JSON, not a result file, a benchmark weft does not know)."""
    document = results.load(path)
    benchmark = document.get("benchmark")
    if not isinstance(benchmark, str) or benchmark not in known:
        raise WeftError(f"{path}: unknown benchmark {benchmark!r} (weft report shows {', '.join(sorted(known))})")
    return document, known[benchmark]


def show(path: Path, document: dict[str, Any], renderer: results.Renderer, directory: Path) -> list[Path]:
    """Print a document's tables and draw its charts into directory; a
    document its renderer cannot read is a WeftError naming the file."""
    try:
        report.console.print(renderer.render(document))
        return renderer.draw(document, directory / path.stem)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise WeftError(f"{path}: not a complete {document['benchmark']} result ({exc!r})") from None


def command(args: argparse.Namespace) -> None:
    known = renderers()
    loaded = [(path, *load(path, known)) for path in args.files]
    if args.json:
        documents = [document for _, document, _ in loaded]
        report.print_json(documents[0] if len(documents) == 1 else documents)
        return
    if args.png is not None and not args.png.is_dir():
        raise WeftError(f"--png {args.png}: no such directory (create it first)")
    directory = results.ensure_dir(args.png)
    for path, document, renderer in loaded:
        drawn = show(path, document, renderer, directory)
        if drawn:
            report.console.print(f"[dim]{results.saved_note([str(chart) for chart in drawn])}[/dim]")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="show saved result files again: tables and PNG charts",
        description="Render saved result files (JSON written by `weft bench`, `weft project` or `weft model "
        "breakdown`) as the command that made them does: the tables, and the PNG charts drawn into the "
        "results directory or --png DIR.",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="a saved result (JSON)")
    parser.add_argument("--png", type=Path, metavar="DIR",
                        help="an existing directory to draw the charts into (default: the results directory)")
    parser.add_argument("--json", action="store_true",
                        help="print the documents as JSON only (one file: its document; several: a list)")
    parser.set_defaults(func=command)
