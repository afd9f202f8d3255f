"""Toolkit of the weft communication library: command line, benchmark
runner, result files and reports.

The package has four rooms, and imports flow one way, down this list:

    weft.commands   the top-level commands (`weft info`, `topo`, `model`,
                    `resources`, `project`, `report`)
    weft.bench      one module per `weft bench X`, and the measurements the
                    commands run (bench.breakdown)
    weft.models     models and their reference data: the breakdown models
                    and what-ifs, the mlx5 resource model, SimGrid platforms
    weft.core       what every room shares: the build and its programs
                    (runner), result files (results), tables and charts
                    (report)

A module imports from its own room and the rooms below it, never from a
room above (commands -> bench -> models -> core), and always at its top:
no import inside a function, no cycle.  weft.cli, at the top, finds the
commands and benchmarks by name.  WeftError lives here so that every room
can raise it.  python/tests/test_package.py checks these rules and that
every module imports on its own.
"""

__version__ = "0.1.0"


class WeftError(Exception):
    """An error the user can act on: the command line prints its message,
    without a traceback, and exits with a non-zero status."""
