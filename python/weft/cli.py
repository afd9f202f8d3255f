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

from weft import WeftError
from weft.commands import info
from weft.core import runner

# Top-level commands: each name is a module weft.commands.<name> exposing register(subparsers).
COMMANDS: tuple[str, ...] = ("info", "topo", "model", "resources", "advise", "project", "report")
# Benchmarks of `weft bench`: each name is a module weft.bench.<name> exposing register(bench_subparsers).
BENCHMARKS: tuple[str, ...] = ("rma", "ft", "latbw", "endpoints", "dgemm", "stencil", "profcost", "coll", "flood",
                              "summa", "hvec", "gups")


# Commands that start MPI jobs, and so take --launcher: every benchmark,
# `weft topo`, every `weft project` target, `weft model breakdown` and
# `weft advise endpoints` (which runs the endpoint benchmark).
LAUNCHING: tuple[tuple[str, ...], ...] = (("bench", "*"), ("topo",), ("project", "*"), ("model", "breakdown"),
                                          ("advise", "endpoints"))
LAUNCHER_HELP = ("how to start MPI jobs: a command with {np} for the number of ranks, the program and its "
                 "arguments appended, e.g. 'srun -n {np}' (default: $WEFT_LAUNCHER, else the launcher of the "
                 "MPI weft was built with). The ranks inherit the environment: srun exports it; with mpirun, "
                 "add -x VAR for each variable a benchmark sets")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of parser's subcommands, by name (none for a leaf)."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def commands_at(parser: argparse.ArgumentParser, path: Sequence[str]) -> list[argparse.ArgumentParser]:
    """The parsers a path of LAUNCHING names ("*": every subcommand)."""
    if not path:
        return [parser]
    children = subcommands(parser)
    chosen = children.values() if path[0] == "*" else [children[path[0]]]
    return [leaf for child in chosen for leaf in commands_at(child, path[1:])]


class VersionAction(argparse.Action):
    """--version: the toolkit's version and, when it can run weft_sysinfo,
    the library's version and its MPI."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(info.version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="weft",
        description="Toolkit of the weft communication library: system information and benchmarks.",
    )
    parser.add_argument("--version", action=VersionAction,
                        help="print the toolkit's version, and the library's and its MPI when weft is found")
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
    for path in LAUNCHING:
        for command in commands_at(parser, path):
            command.add_argument("--launcher", metavar="TEMPLATE", help=LAUNCHER_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        runner.set_launcher_template(getattr(args, "launcher", None))
        runner.launcher_template()  # a malformed template fails before anything runs
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
