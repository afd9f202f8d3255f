"""Result files: where they go, what they hold, reading them back.

Results go to results_dir():

* $WEFT_RESULTS_DIR when it is set;
* else, when the toolkit runs against a build ($WEFT_BUILD_DIR set, or the
  build/ of the checkout it runs from exists), <build>/results;
* else the user's data directory, $XDG_DATA_HOME/weft/results
  (~/.local/share/weft/results without it).

Never into the source tree or the installed package: a measurement leaves a
checkout's `git status` clean.  The directory is created on the first write.

A result file is one JSON document:

    {"benchmark": "rma",
     "metadata": {"weft_version": "0.1.0", "toolkit_version": "0.1.0",
                  "git": {"commit": "acafa45", "dirty": false},
                  "date": "2026-11-22T07:30:15+00:00", "hostname": "node1",
                  "cores": 2, "transport": "shm", "ranks": 2},
     ...the benchmark's own fields...}

saved as <benchmark>-<YYYYmmdd-HHMMSS>-<host>.json, and copied to
<benchmark>-latest.json so that reports can always find the last run.  The
git commit and dirtiness are those of the checkout the toolkit runs from;
both are null when it runs from elsewhere (an installed toolkit).
`weft report FILE` renders a saved document again (weft.commands.report).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import RenderableType

from weft import WeftError, __version__
from weft.core import report, runner


def results_dir() -> Path:
    """Where results go (see the module's description); not created here."""
    configured = os.environ.get("WEFT_RESULTS_DIR")
    if configured:
        return Path(configured)
    build = os.environ.get("WEFT_BUILD_DIR")
    if build:
        return Path(build) / "results"
    root = runner.source_root()
    if root is not None and (root / "build").is_dir():
        return root / "build" / "results"
    # The XDG base directory rules: unset, empty or relative means the default.
    data = os.environ.get("XDG_DATA_HOME", "")
    home = Path(data) if os.path.isabs(data) else Path.home() / ".local" / "share"
    return home / "weft" / "results"


def ensure_dir(directory: Path | None = None) -> Path:
    """directory (by default results_dir()), created if it does not exist
    yet; a WeftError says why it cannot be."""
    home = results_dir()
    target = directory or home
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        hint = " (set WEFT_RESULTS_DIR to a writable directory)" if home in (target, *target.parents) else ""
        raise WeftError(f"cannot create the directory {target}: {exc.strerror or exc}{hint}") from None
    return target


def check_output_file(path: Path, option: str) -> Path:
    """path, a file the user asked a chart to be drawn into, if it can be
    written: its directory must exist (weft creates only its own results
    directory, never a directory a user named, where a typo would leave a
    stray tree), and must not be a directory itself.  Checked before any
    measurement runs."""
    directory = path.resolve().parent
    if path.is_dir():
        raise WeftError(f"{option} {path}: is a directory; give a file name such as {path / 'chart.png'}")
    if not directory.is_dir():
        raise WeftError(f"{option} {path}: the directory {directory} does not exist (create it first)")
    if not os.access(directory, os.W_OK):
        raise WeftError(f"{option} {path}: the directory {directory} is not writable")
    return path


def git_state(repo: Path | None = None) -> dict[str, Any]:
    """Short commit and whether tracked files differ from it, of repo (by
    default the checkout the toolkit runs from); both None outside a git
    checkout."""
    unknown = {"commit": None, "dirty": None}
    repo = repo or runner.source_root()
    if repo is None:
        return unknown

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no") != ""
    except (OSError, subprocess.CalledProcessError):
        return unknown
    return {"commit": commit, "dirty": dirty}


def library_version() -> str | None:
    """The version of the weft whose programs the toolkit runs, as its
    build or installation records it (runner.build_info); None unknown."""
    try:
        version = runner.build_info(runner.home().path).get("version")
    except WeftError:
        return None
    return str(version) if version else None


def metadata(
    *, transport: str, ranks: int, now: datetime | None = None, repo: Path | None = None
) -> dict[str, Any]:
    """Where and when a measurement was taken, and on which code."""
    moment = now or datetime.now(timezone.utc)
    return {
        "weft_version": library_version(),
        "toolkit_version": __version__,
        "git": git_state(repo),
        "date": moment.isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "cores": os.cpu_count(),
        "transport": transport,
        "ranks": ranks,
    }


def latest_path(benchmark: str, directory: Path | None = None) -> Path:
    return (directory or results_dir()) / f"{benchmark}-latest.json"


def load_latest(benchmark: str, directory: Path | None = None) -> dict[str, Any]:
    """The last saved results of a benchmark (what `weft bench X --last` shows)."""
    path = latest_path(benchmark, directory)
    if not path.exists():
        raise WeftError(f"no saved results ({path}): run `weft bench {benchmark}` first")
    return load(path)


def save(
    benchmark: str,
    fields: dict[str, Any],
    *,
    transport: str,
    ranks: int,
    directory: Path | None = None,
    now: datetime | None = None,
) -> Path:
    """Write a result file and refresh <benchmark>-latest.json; returns the
    dated file's path."""
    meta = metadata(transport=transport, ranks=ranks, now=now)
    document = {"benchmark": benchmark, "metadata": meta, **fields}
    moment = datetime.fromisoformat(meta["date"])
    host = meta["hostname"].split(".")[0]
    target = ensure_dir(directory)
    path = target / f"{benchmark}-{moment:%Y%m%d-%H%M%S}-{host}.json"
    text = report.to_json(document) + "\n"
    for written in (path, latest_path(benchmark, target)):
        try:
            written.write_text(text)
        except OSError as exc:
            raise WeftError(f"cannot write {written}: {exc.strerror or exc}") from None
    return path


def read_json(path: Path) -> Any:
    """A JSON file's content; a missing or malformed file is a WeftError."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise WeftError(f"{path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise WeftError(f"{path} is not valid JSON: {exc}") from None


def load(path: Path) -> dict[str, Any]:
    """Read a result file back."""
    document = read_json(path)
    if not isinstance(document, dict) or "metadata" not in document:
        raise WeftError(f"{path} is not a weft result file (no metadata)")
    return document


Chart = Callable[[dict[str, Any], Path], Path]


@dataclass(frozen=True)
class Renderer:
    """How a saved document is shown: render(document) makes its tables,
    and each chart of `charts` draws a PNG named <the file's stem><suffix>
    (what a benchmark command shows after measuring, and `weft report`)."""

    render: Callable[[dict[str, Any]], RenderableType]
    charts: Mapping[str, Chart] = field(default_factory=dict)

    def draw(self, document: dict[str, Any], stem: Path) -> list[Path]:
        """Every chart of the document, beside stem (a path without suffix)."""
        return [chart(document, stem.with_name(stem.name + suffix)) for suffix, chart in self.charts.items()]


def saved_note(paths: list[str]) -> str:
    """"saved A", "saved A and B", "saved A, B and C"."""
    return "saved " + (paths[0] if len(paths) == 1 else ", ".join(paths[:-1]) + " and " + paths[-1])


def measure_or_load(
    benchmark: str,
    measure: Callable[[], Path] | None,
    render: Callable[[dict[str, Any]], RenderableType],
    charts: Mapping[str, Chart] | None = None,
    *,
    json_only: bool = False,
) -> dict[str, Any]:
    """What a benchmark command shows: measure() saves a new result file,
    None (--last) takes the last saved one of `benchmark`.  The document is
    printed as JSON (json_only; where it was saved goes to standard error)
    or rendered; beside a new file each chart draws <its stem><suffix> for
    every suffix of `charts`, and the files saved are named.  Returns the
    document."""
    path = None if measure is None else measure()
    document = load_latest(benchmark) if path is None else load(path)
    if json_only:
        report.print_json(document)
        if path is not None:
            print(saved_note([str(path)]), file=sys.stderr)
        return document
    report.console.print(render(document))
    if path is not None:
        drawn = Renderer(render, charts or {}).draw(document, path.with_suffix(""))
        report.console.print(f"[dim]{saved_note([str(path), *(chart.name for chart in drawn)])}[/dim]")
    return document
