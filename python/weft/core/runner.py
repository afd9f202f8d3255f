"""Finding weft's build and running its programs, directly or under MPI.

Every failure a user can fix (no build, no launcher, a program that fails or
hangs) is raised as a WeftError whose message says what to do, and, for a
failed program, ends with the tail of its standard error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

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


# What `cmake --install` records about the build it installs, relative to
# the prefix: the MPI weft was built with, its launcher and weft's version
# (python/CMakeLists.txt writes it).
BUILD_INFO = Path("share") / "weft" / "build.json"


def installed_prefix() -> Path | None:
    """The prefix of the weft installation this package belongs to, when
    `cmake --install` put it there (<prefix>/<libdir>/weft/python/weft),
    else None."""
    if _PACKAGE.parent.name != "python" or _PACKAGE.parents[1].name != "weft":
        return None
    # <libdir> is lib, lib64 or lib/<multiarch>: the prefix is the first
    # directory above it that holds the install's record.
    for prefix in _PACKAGE.parents[3:5]:
        if (prefix / BUILD_INFO).is_file():
            return prefix
    return None


def build_dir() -> Path:
    """The CMake build directory: $WEFT_BUILD_DIR, else build/ in the
    checkout the toolkit runs from.  Only what exists in a build alone
    needs it (its test programs, its libraries); programs are found by
    executable()."""
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


@dataclass(frozen=True)
class Home:
    """A place that holds weft's programs under libexec/weft/: a build tree
    or an installation prefix, and how the toolkit came to look there."""

    path: Path
    origin: str

    @property
    def programs(self) -> Path:
        return self.path / LIBEXEC


def homes() -> list[Home]:
    """Where the toolkit looks for weft's programs, in order: $WEFT_BUILD_DIR
    (a build), $WEFT_PREFIX (an installation), the prefix this package is
    installed under, the build/ of the checkout it runs from.  A variable
    that names a missing directory is an error: a typo must not let
    another build answer silently."""
    found: list[Home] = []
    for variable in ("WEFT_BUILD_DIR", "WEFT_PREFIX"):
        value = os.environ.get(variable)
        if value:
            if not Path(value).is_dir():
                raise WeftError(f"{variable}={value} is not a directory: point it at a weft "
                                f"{'build' if variable == 'WEFT_BUILD_DIR' else 'installation prefix'}")
            found.append(Home(Path(value), f"${variable}"))
    prefix = installed_prefix()
    if prefix is not None:
        found.append(Home(prefix, "the prefix the toolkit is installed under"))
    root = source_root()
    if root is not None:
        found.append(Home(root / "build", "the checkout's build"))
    return found


def home() -> Home:
    """The first place of homes() that has weft's programs; a WeftError
    naming every place looked at when none has."""
    places = homes()
    for place in places:
        if place.programs.is_dir():
            return place
    raise WeftError("no weft programs found" + _looked_at(places, "libexec/weft/"))


def _looked_at(places: Sequence[Home], what: str) -> str:
    """The end of a "not found" message: the places looked at, and how to
    point the toolkit at weft."""
    looked = "".join(f"\n  {place.origin}: {place.path / what}" for place in places) or " (nowhere to look)"
    return (f"; looked in:{looked}\n  build weft (`make`, or `cmake --build build`), or set WEFT_BUILD_DIR "
            "to a build tree or WEFT_PREFIX to an installation prefix")


def executable(name: str) -> Path:
    """A program the toolkit runs, by name (e.g. "weft_bench_rma"), from the
    libexec/weft/ of the first place of homes() that has it; a name with a
    slash is a path in the build (a test program)."""
    if "/" in name:
        path = build_dir() / name
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise WeftError(f"{path} is missing: run `make` first")
        return path
    places = homes()
    for place in places:
        path = place.programs / name
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise WeftError(f"{name} is missing: run `make` first" + _looked_at(places, str(LIBEXEC / name)))


def build_info(place: Path) -> dict[str, Any]:
    """What an installation recorded about its build (BUILD_INFO), or, for
    a build tree, the same read from its CMakeCache.txt: "mpi" (flavour),
    "mpiexec" (the launcher found), "version" (weft's).  Missing keys are
    unknown."""
    recorded = place / BUILD_INFO
    if recorded.is_file():
        try:
            data = json.loads(recorded.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise WeftError(f"{recorded} is unreadable: {exc}") from None
        return data if isinstance(data, dict) else {}
    info: dict[str, Any] = {}
    cache = place / "CMakeCache.txt"
    if cache.is_file():
        mpich = False
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("MPI_") and "mpich" in line.lower():
                mpich = True
            key, _, value = line.partition("=")
            if key.startswith("MPIEXEC_EXECUTABLE:") and value and not value.endswith("-NOTFOUND"):
                info["mpiexec"] = value
            elif key.startswith("CMAKE_PROJECT_VERSION:") and value:
                info["version"] = value
        info["mpi"] = "mpich" if mpich else "openmpi"
    return info


@dataclass(frozen=True)
class Launcher:
    """How to start ranks: with one MPI implementation's own launcher (its
    flags to oversubscribe and to pass variables), or with a template given
    by the user (WEFT_LAUNCHER, --launcher: "srun -n {np}"), whose ranks
    inherit the launcher's environment."""

    flavor: Flavor
    program: str
    template: str | None = None

    def command(self, nranks: int, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        """The launcher command line that runs argv on nranks ranks, each
        with the variables of env set (by environment() for a template)."""
        if self.template is not None:
            return [word.replace("{np}", str(nranks)) for word in shlex.split(self.template)] + list(argv)
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

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """Variables the launcher itself needs in its environment; with a
        template, also the ranks' variables env, which srun and most
        launchers export to the ranks (mpirun needs -x in the template)."""
        needed = dict(env or {}) if self.template is not None else {}
        if self.flavor == "openmpi" and os.geteuid() == 0:
            needed.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        return needed

    def run(self, nranks: int, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """Run argv on nranks ranks with env set on every rank."""
        return run_program(self.command(nranks, argv, env or {}), env=self.environment(env), timeout=timeout)


LAUNCHER_PROGRAMS: dict[Flavor, str] = {"openmpi": "mpirun", "mpich": "mpiexec.mpich"}
# The launcher template of --launcher, which wins over $WEFT_LAUNCHER
# (the command line sets it before running a command).
_launcher_template: str | None = None


def set_launcher_template(template: str | None) -> None:
    """Use this launcher template (None: $WEFT_LAUNCHER, else the default)."""
    global _launcher_template
    _launcher_template = template


def launcher_template() -> str | None:
    """The launcher template chosen (--launcher, else $WEFT_LAUNCHER), None
    for the default launcher; a WeftError if it has no {np}."""
    template, origin = _launcher_template, "--launcher"
    if template is None:
        template, origin = os.environ.get("WEFT_LAUNCHER") or None, "WEFT_LAUNCHER"
    if template is None:
        return None
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise WeftError(f"{origin} {template!r}: {exc}") from None
    if not words or not any("{np}" in word for word in words):
        raise WeftError(f"{origin} {template!r} has no {{np}}, where the number of ranks goes "
                        "(e.g. 'srun -n {np}' or 'mpirun -np {np} --oversubscribe')")
    return template


def mpi_flavor(build: Path) -> Flavor:
    """The MPI implementation weft was built with: $WEFT_MPI if set, else
    what the build or installation at `build` records (build_info)."""
    chosen = os.environ.get("WEFT_MPI")
    if chosen is not None:
        if chosen not in LAUNCHER_PROGRAMS:
            raise WeftError(f"WEFT_MPI={chosen!r}: expected one of {', '.join(LAUNCHER_PROGRAMS)}")
        return chosen  # type: ignore[return-value]
    return "mpich" if build_info(build).get("mpi") == "mpich" else "openmpi"


def default_launcher(flavor: Flavor, recorded: str | None = None) -> Launcher:
    """flavor's launcher: the one the build found (recorded) when it still
    exists, else the implementation's usual name, checked to be on PATH."""
    if recorded and Path(recorded).is_file() and os.access(recorded, os.X_OK):
        return Launcher(flavor, recorded)
    program = LAUNCHER_PROGRAMS[flavor]
    if shutil.which(program) is None:
        raise WeftError(f"`{program}` is not on PATH: install {flavor} (`make setup` on Debian), "
                        "or set WEFT_LAUNCHER (e.g. 'srun -n {np}')")
    return Launcher(flavor, program)


def launcher() -> Launcher:
    """The launcher: the template chosen (launcher_template()), else the
    launcher of the MPI weft was built with."""
    place = home().path
    flavor = mpi_flavor(place)
    template = launcher_template()
    if template is not None:
        return Launcher(flavor, shlex.split(template)[0], template)
    recorded = None if os.environ.get("WEFT_MPI") else build_info(place).get("mpiexec")
    return default_launcher(flavor, recorded)


def ranks_type(least: int = 1, most: int | None = None) -> Callable[[str], int]:
    """An argparse type for a number of ranks from least to most (None: no
    bound): a bad count is refused with a message saying what is needed."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of ranks") from None
        if least == most and value != least:
            raise argparse.ArgumentTypeError(f"{value}: this runs on exactly {least} ranks")
        if value < least:
            raise argparse.ArgumentTypeError(
                f"{value}: at least {least} rank{'s' if least > 1 else ''} needed")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{value}: at most {most} ranks")
        return value

    parse.__name__ = "ranks"
    return parse


def check_ranks(nranks: int, *, least: int = 1, option: str = "--np") -> int:
    """nranks if it is at least `least`, else a WeftError for `option`."""
    if nranks < least:
        need = "at least 1 rank" if least == 1 else f"at least {least} ranks"
        raise WeftError(f"{option} {nranks}: this needs {need}")
    return nranks


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
    check_ranks(nranks)
    return launcher().run(nranks, argv, env=env, timeout=timeout)


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
