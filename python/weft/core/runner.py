"""Finding weft's build and running its programs, directly or under MPI.

Every failure a user can fix (no build, no launcher, a program that fails or
hangs) is raised as a WeftError whose message says what to do, and, for a
failed program, ends with the tail of its standard error.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from weft import WeftError

# python/weft/core/runner.py in a checkout of weft: the repository's root.
_PACKAGE = Path(__file__).resolve().parents[1]

STDERR_TAIL_LINES = 20
STOP_GRACE_SECONDS = 5

Flavor = Literal["openmpi", "mpich"]
T = TypeVar("T")


def source_root() -> Path | None:
    """The checkout of weft the toolkit runs from (its python/weft is this
    package), None when the toolkit is installed elsewhere."""
    root = _PACKAGE.parents[1]
    if _PACKAGE == root / "python" / "weft" and (root / "CMakeLists.txt").is_file():
        return root
    return None


def build_dir() -> Path:
    """The CMake build directory: $WEFT_BUILD_DIR, else build/ in the
    checkout the toolkit runs from."""
    configured = os.environ.get("WEFT_BUILD_DIR")
    root = source_root()
    if not configured and root is None:
        raise WeftError("no weft build: point WEFT_BUILD_DIR at a weft build (or an installed weft's prefix)")
    path = Path(configured) if configured else root / "build"
    if not path.is_dir():
        raise WeftError(
            f"build directory {path} does not exist: run `make` first "
            "(or point WEFT_BUILD_DIR at a weft build)"
        )
    return path


# Where the build puts the programs the toolkit runs: the same place,
# relative to the prefix, as an installed weft (CMake's LIBEXECDIR/weft).
LIBEXEC = Path("libexec") / "weft"


def executable(name: str) -> Path:
    """A program the toolkit runs, by name (e.g. "weft_bench_rma"), from the
    build's libexec/weft/; a name with a slash is a path in the build (a
    test program)."""
    path = build_dir() / (name if "/" in name else LIBEXEC / name)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise WeftError(f"{path} is missing: run `make` first")
    return path


@dataclass(frozen=True)
class Launcher:
    """How to start ranks with one MPI implementation."""

    flavor: Flavor
    program: str

    def command(self, nranks: int, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        """The launcher command line that runs argv on nranks ranks, each
        with the variables of env set."""
        cmd = [self.program, "-np", str(nranks)]
        if self.flavor == "openmpi":
            # The machine may have fewer cores than ranks.
            cmd.append("--oversubscribe")
            for key, value in env.items():
                cmd += ["-x", f"{key}={value}"]
        else:
            for key, value in env.items():
                cmd += ["-genv", key, value]
        return cmd + list(argv)

    def environment(self) -> dict[str, str]:
        """Variables the launcher itself needs in its environment."""
        if self.flavor == "openmpi" and os.geteuid() == 0:
            return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        return {}


LAUNCHER_PROGRAMS: dict[Flavor, str] = {"openmpi": "mpirun", "mpich": "mpiexec.mpich"}


def mpi_flavor(build: Path) -> Flavor:
    """The MPI implementation weft was built with: $WEFT_MPI if set, else
    what CMake found (MPICH's libraries are named libmpich)."""
    chosen = os.environ.get("WEFT_MPI")
    if chosen is not None:
        if chosen not in LAUNCHER_PROGRAMS:
            raise WeftError(f"WEFT_MPI={chosen!r}: expected one of {', '.join(LAUNCHER_PROGRAMS)}")
        return chosen  # type: ignore[return-value]
    cache = build / "CMakeCache.txt"
    if cache.is_file():
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("MPI_") and "mpich" in line.lower():
                return "mpich"
    return "openmpi"


def launcher() -> Launcher:
    """The launcher matching the build's MPI, checked to be installed."""
    flavor = mpi_flavor(build_dir())
    program = LAUNCHER_PROGRAMS[flavor]
    if shutil.which(program) is None:
        raise WeftError(f"`{program}` is not on PATH: run `make setup` to install {flavor}")
    return Launcher(flavor, program)


def run_program(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run a program with its output captured; env adds to the inherited
    environment. Raises WeftError if it cannot start, fails or times out."""
    name = Path(argv[0]).name
    try:
        # Its own session, so that stopping it also stops what it started
        # (the ranks under a launcher).
        proc = subprocess.Popen(
            list(argv),
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise WeftError(f"cannot run {argv[0]}: no such program") from None
    with proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            stderr = proc.communicate()[1]
            raise WeftError(f"{name} timed out after {timeout:g} s{_tail(stderr)}") from None
        except BaseException:
            _stop(proc)
            raise
    if proc.returncode != 0:
        raise WeftError(
            f"{name} failed with exit status {proc.returncode}\n"
            f"  command: {shlex.join(argv)}{_tail(stderr)}"
        )
    return subprocess.CompletedProcess(list(argv), proc.returncode, stdout, stderr)


def _stop(proc: subprocess.Popen[str]) -> None:
    """Stop a program and everything in its process group: politely first,
    so that a launcher can stop its ranks, then by force whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(STOP_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_mpi(
    nranks: int,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run argv on nranks ranks of this machine; env is set on every rank."""
    mpi = launcher()
    return run_program(mpi.command(nranks, argv, env or {}), env=mpi.environment(), timeout=timeout)


def _tail(stderr: str | None) -> str:
    """The last lines of a program's standard error, indented for a message."""
    lines = (stderr or "").rstrip().splitlines()[-STDERR_TAIL_LINES:]
    if not lines:
        return ""
    return "\n  stderr (last lines):\n" + "\n".join(f"    {line}" for line in lines)


def steps(items: Sequence[T], describe: Callable[[T], str]) -> Iterator[T]:
    """Yield items one by one under a progress bar on standard error, each
    step labelled by describe(item). The bar disappears when done."""
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    console = Console(stderr=True)
    # Off a terminal (logs, pipes) the bar would only leave blank lines.
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("", total=len(items))
        for item in items:
            progress.update(task, description=describe(item))
            yield item
            progress.advance(task)
