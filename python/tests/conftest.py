"""Shared fixtures: sample documents as the C programs print them, a
throw-away build directory whose programs are small Python scripts, and a
results directory of each test's own (no test writes into a build, the
source tree or the user's data directory).

Saved results a test reads are small hand-made files under data/, never a
measurement."""

from __future__ import annotations

import io
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType

from weft.core import runner

# The build the test run was started with (make check sets it), read before
# any test changes the environment.
REAL_BUILD_DIR = os.environ.get("WEFT_BUILD_DIR")
# Hand-made documents in the shape of saved results.
DATA = Path(__file__).with_name("data")


def real_program(relative: str, *, smpi: bool = False) -> Path | None:
    """A program of that build (relative: its path in the build), None
    without the build, the program or, with smpi, smpirun."""
    if not REAL_BUILD_DIR or (smpi and shutil.which("smpirun") is None):
        return None
    path = Path(REAL_BUILD_DIR) / (relative if "/" in relative else Path("libexec/weft") / relative)
    return path if path.is_file() and os.access(path, os.X_OK) else None

SYSINFO: dict[str, Any] = {
    "weft_version": "0.1.0",
    "ucx": {
        "version": "1.13.1",
        "transports": [
            {"component": "posix", "transport": "posix", "device": "memory"},
            {"component": "sysv", "transport": "sysv", "device": "memory"},
            {"component": "tcp", "transport": "tcp", "device": "lo"},
        ],
    },
    "mpi": {"library": "Open MPI v4.1.4, package: Debian OpenMPI", "standard": "3.1"},
    "hwloc": {
        "version": "2.9.0",
        "summary": "Machine > Package > L3 (260MB) > 2 x (L2 (2MB) > L1d (48KB) > Core > PU)",
        "levels": [
            {"depth": 0, "type": "Machine", "count": 1, "attr": ""},
            {"depth": 1, "type": "Package", "count": 1, "attr": ""},
            {"depth": 2, "type": "L3Cache", "count": 1, "attr": "260MB"},
        ],
        "cores": 2,
        "pus": 2,
        "numa_nodes": 1,
    },
}

# weft and UCX measured everything; MPI RMA lacks get latency and MPI
# two-sided has only ping-pong latency and message rate.
RMA_RESULTS: list[dict[str, Any]] = [
    {"impl": "weft", "op": "put_rate", "size": 8, "value": 28.5, "unit": "Mmsg/s"},
    {"impl": "ucx", "op": "put_rate", "size": 8, "value": 30.0, "unit": "Mmsg/s"},
    {"impl": "mpi-rma", "op": "put_rate", "size": 8, "value": 24.0, "unit": "Mmsg/s"},
    {"impl": "weft", "op": "put_lat", "size": 4096, "value": 1.0, "unit": "us"},
    {"impl": "weft", "op": "put_lat", "size": 8, "value": 0.5, "unit": "us"},
    {"impl": "ucx", "op": "put_lat", "size": 8, "value": 0.52, "unit": "us"},
    {"impl": "mpi-rma", "op": "put_lat", "size": 8, "value": 1.5, "unit": "us"},
    {"impl": "weft", "op": "get_lat", "size": 8, "value": 0.8, "unit": "us"},
    {"impl": "ucx", "op": "get_lat", "size": 8, "value": 0.7, "unit": "us"},
    {"impl": "weft", "op": "pingpong_lat", "size": 8, "value": 0.41, "unit": "us"},
    {"impl": "mpi-2sided", "op": "pingpong_lat", "size": 8, "value": 0.82, "unit": "us"},
    {"impl": "weft", "op": "msg_rate", "size": 8, "value": 10.0, "unit": "Mmsg/s"},
    {"impl": "mpi-2sided", "op": "msg_rate", "size": 8, "value": 8.0, "unit": "Mmsg/s"},
]


def breakdown_document(path: str, injection: dict[str, Any], latency: dict[str, Any],
                       points: dict[str, Any] | None = None) -> dict[str, Any]:
    """A breakdown document (docs/breakdown.md) of node1 over `path`, with
    these injection and latency measurements and trace points."""
    return {"benchmark": "breakdown", "metadata": {"hostname": "node1"}, "path": path,
            "timer": {"tsc_ghz": 2.5, "overhead_ns": 13.6}, "injection": injection, "latency": latency,
            "points": points or {}}


@pytest.fixture(autouse=True)
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where this test's results go (WEFT_RESULTS_DIR), not created."""
    directory = tmp_path / "results"
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(directory))
    return directory


@pytest.fixture
def sysinfo_sample() -> dict[str, Any]:
    return SYSINFO


@pytest.fixture
def rma_run() -> dict[str, Any]:
    return {"tls": "shm", "nranks": 2, "transport": "posix/memory, cma/memory", "results": RMA_RESULTS}


@pytest.fixture
def render_text() -> Callable[[RenderableType], str]:
    """Plain text of a rich renderable, as a wide terminal shows it."""
    def render(renderable: RenderableType) -> str:
        console = Console(record=True, width=220, file=io.StringIO())
        console.print(renderable)
        return console.export_text()

    return render


@pytest.fixture
def fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty build directory with its libexec/weft/ folder, selected by
    WEFT_BUILD_DIR, and the only place the toolkit looks for programs (not
    the checkout's build, an installation or $WEFT_PREFIX)."""
    build = tmp_path / "build"
    (build / "libexec" / "weft").mkdir(parents=True)
    monkeypatch.setenv("WEFT_BUILD_DIR", str(build))
    for variable in ("WEFT_MPI", "WEFT_PREFIX", "WEFT_LAUNCHER"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(runner, "source_root", lambda: None)
    monkeypatch.setattr(runner, "installed_prefix", lambda: None)
    runner.set_launcher_template(None)
    return build


@pytest.fixture
def write_program() -> Callable[[Path, str], Path]:
    """Write an executable Python script at path."""
    def write(path: Path, source: str) -> Path:
        path.write_text(f"#!{sys.executable}\n{source}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    return write


def assert_counted_per_cycle(document: dict, point: str, iters: int) -> None:
    """A breakdown pass runs its planned cycles of `iters` operations, and
    on, up to 4x, while too few chunks were calm (a loaded machine): the
    point counted each operation of every chunk it ran, whatever the load.
    The points come from a pass of their own, whose cycles the rounds'
    `cycles_rounds` do not count: only whole chunks (64 batches, or the
    whole batches of `iters`) are sure."""
    count = document["points"][point]["count"]
    batch = int(document["injection"]["batch"])
    chunk = min(64 * batch, iters // batch * batch)
    assert sum(document["injection"]["cycles_rounds"]) > 0
    assert iters <= count <= 4 * iters and count % chunk == 0, (point, count, chunk)
