"""The `weft` command line.

Commands live in their own modules. To add one:

* a top-level command `weft X`: write module weft.commands.X with a function
  register(subparsers) that calls subparsers.add_parser("X", ...) and sets
  func=<callable taking the parsed arguments>, then add "X" to COMMANDS;
* a benchmark `weft bench X`: write module weft.bench.X with the same
  register(bench_subparsers), then add "X" to BENCHMARKS; a benchmark that
  saves results also lists how to show them in its RENDERERS, which
  `weft report` reads (weft.commands.report).

A command reports a problem the user can fix by raising weft.WeftError: the
message is printed without a traceback and weft exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from weft import WeftError, __version__

# Top-level commands: each name is a module weft.commands.<name> exposing register(subparsers).
COMMANDS: tuple[str, ...] = ("info", "topo", "model", "resources", "project", "report")
# Benchmarks of `weft bench`: each name is a module weft.bench.<name> exposing register(bench_subparsers).
BENCHMARKS: tuple[str, ...] = ("rma", "ft", "latbw", "endpoints", "dgemm", "stencil", "profcost", "coll", "flood",
                              "summa", "hvec")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="weft",
        description="Toolkit of the weft communication library: system information and benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"weft {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"weft.commands.{name}").register(commands)

    bench = commands.add_parser(
        "bench",
        help="run a benchmark and compare weft with its peers",
        description="Run one of weft's benchmarks on this machine; results go to the results directory "
        "($WEFT_RESULTS_DIR, else <build>/results, else ~/.local/share/weft/results).",
    )
    benchmarks = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for name in BENCHMARKS:
        importlib.import_module(f"weft.bench.{name}").register(benchmarks)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except WeftError as exc:
        print(f"weft: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("weft: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    # `python -m weft.cli`, the same as the `weft` console script.
    sys.exit(main())
