"""Benchmark result files under bench/results/.

A result file is one JSON document:

    {"benchmark": "rma",
     "metadata": {"git": {"commit": "acafa45", "dirty": false},
                  "date": "2026-11-22T07:30:15+00:00", "hostname": "node1",
                  "cores": 2, "transport": "shm", "ranks": 2},
     ...the benchmark's own fields...}

saved as <benchmark>-<YYYYmmdd-HHMMSS>-<host>.json, and copied to
<benchmark>-latest.json so that reports can always find the last run.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import RenderableType

from weft import WeftError, report
from weft.runner import REPO_ROOT

RESULTS_DIR = REPO_ROOT / "bench" / "results"


def git_state(repo: Path = REPO_ROOT) -> dict[str, Any]:
    """Short commit and whether tracked files differ from it; commit is
    None outside a git checkout."""
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no") != ""
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": False}
    return {"commit": commit, "dirty": dirty}


def metadata(
    *, transport: str, ranks: int, now: datetime | None = None, repo: Path = REPO_ROOT
) -> dict[str, Any]:
    """Where and when a measurement was taken, and on which code."""
    moment = now or datetime.now(timezone.utc)
    return {
        "git": git_state(repo),
        "date": moment.isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "cores": os.cpu_count(),
        "transport": transport,
        "ranks": ranks,
    }


def latest_path(benchmark: str, directory: Path | None = None) -> Path:
    return (directory or RESULTS_DIR) / f"{benchmark}-latest.json"


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
    target = directory or RESULTS_DIR
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{benchmark}-{moment:%Y%m%d-%H%M%S}-{host}.json"
    text = json.dumps(document, indent=2) + "\n"
    path.write_text(text)
    latest_path(benchmark, target).write_text(text)
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
    printed as JSON (json_only) or rendered; beside a new file each chart
    draws <its stem><suffix> for every suffix of `charts`, and the files
    saved are named.  Returns the document."""
    path = None if measure is None else measure()
    document = load_latest(benchmark) if path is None else load(path)
    if json_only:
        print(json.dumps(document, indent=2))
        return document
    report.console.print(render(document))
    if path is not None:
        names = [str(path), *(chart(document, path.with_name(path.stem + suffix)).name
                              for suffix, chart in (charts or {}).items())]
        saved = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        report.console.print(f"[dim]saved {saved}[/dim]")
    return document
