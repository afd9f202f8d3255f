"""Toolkit of the weft communication library: command line, benchmark
runner, result files and reports."""

__version__ = "0.1.0"


class WeftError(Exception):
    """An error the user can act on: the command line prints its message,
    without a traceback, and exits with a non-zero status."""
