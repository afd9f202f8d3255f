from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from weft import WeftError
from weft.core import runner


def test_openmpi_command_oversubscribes_and_exports_env() -> None:
    mpi = runner.Launcher("openmpi", "mpirun")
    cmd = mpi.command(2, ["/b/weft_bench_rma", "--json", "/tmp/x.json"], {"UCX_TLS": "tcp,self", "A": "1"})
    assert cmd == [
        "mpirun", "-np", "2", "--oversubscribe",
        "-x", "UCX_TLS=tcp,self", "-x", "A=1",
        "/b/weft_bench_rma", "--json", "/tmp/x.json",
    ]


def test_mpich_command_uses_genv() -> None:
    mpi = runner.Launcher("mpich", "mpiexec.mpich")
    cmd = mpi.command(4, ["./prog"], {"UCX_TLS": "tcp,self"})
    assert cmd == ["mpiexec.mpich", "-np", "4", "-genv", "UCX_TLS", "tcp,self", "./prog"]


def test_openmpi_as_root_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.os, "geteuid", lambda: 0)
    assert runner.Launcher("openmpi", "mpirun").environment() == {
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    }
    assert runner.Launcher("mpich", "mpiexec.mpich").environment() == {}
    monkeypatch.setattr(runner.os, "geteuid", lambda: 1000)
    assert runner.Launcher("openmpi", "mpirun").environment() == {}


@pytest.mark.parametrize(
    ("cache_line", "flavor"),
    [
        ("MPI_C_LIB_NAMES:STRING=mpich", "mpich"),
        ("MPI_mpi_LIBRARY:FILEPATH=/usr/lib/x86_64-linux-gnu/libmpi.so", "openmpi"),
    ],
)
def test_flavor_follows_the_build(fake_build: Path, cache_line: str, flavor: str) -> None:
    (fake_build / "CMakeCache.txt").write_text(f"CMAKE_BUILD_TYPE:STRING=Release\n{cache_line}\n")
    assert runner.mpi_flavor(fake_build) == flavor


def test_flavor_override(fake_build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_MPI", "mpich")
    assert runner.mpi_flavor(fake_build) == "mpich"
    monkeypatch.setenv("WEFT_MPI", "lam")
    with pytest.raises(WeftError, match="WEFT_MPI='lam'"):
        runner.mpi_flavor(fake_build)


def test_missing_build_dir_says_run_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(WeftError, match="run `make` first"):
        runner.build_dir()


def test_source_root_is_the_checkout_holding_this_package() -> None:
    package = Path(runner.__file__).resolve().parents[1]
    root = package.parents[1]
    if (root / "CMakeLists.txt").is_file() and package == root / "python" / "weft":
        assert runner.source_root() == root
    else:  # the toolkit is installed: no checkout around it
        assert runner.source_root() is None


def test_build_dir_defaults_to_the_checkouts_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEFT_BUILD_DIR", raising=False)
    (tmp_path / "build").mkdir()
    monkeypatch.setattr(runner, "source_root", lambda: tmp_path)
    assert runner.build_dir() == tmp_path / "build"


def test_an_installed_toolkit_needs_weft_build_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEFT_BUILD_DIR", raising=False)
    monkeypatch.setattr(runner, "source_root", lambda: None)
    with pytest.raises(WeftError, match="no weft build: point WEFT_BUILD_DIR at a weft build"):
        runner.build_dir()


def test_missing_executable_says_run_make(fake_build: Path) -> None:
    with pytest.raises(WeftError, match=r"weft_bench_rma is missing: run `make` first; looked in:\n"
                       r"  \$WEFT_BUILD_DIR: .*/build/libexec/weft/weft_bench_rma\n"):
        runner.executable("weft_bench_rma")


def test_executable_found(fake_build: Path, write_program) -> None:
    program = write_program(fake_build / "libexec" / "weft" / "weft_sysinfo", "print('{}')")
    assert runner.executable("weft_sysinfo") == program


def test_failure_reports_exit_status_and_stderr_tail() -> None:
    source = "import sys\nfor i in range(30): print(f'line {i}', file=sys.stderr)\nsys.exit(3)"
    with pytest.raises(WeftError) as info:
        runner.run_program([sys.executable, "-c", source])
    message = str(info.value)
    assert "exit status 3" in message
    assert "line 29" in message
    assert f"line {29 - runner.STDERR_TAIL_LINES + 1}" in message
    assert f"line {29 - runner.STDERR_TAIL_LINES}\n" not in message


def test_timeout_is_an_error() -> None:
    source = "import sys, time\nprint('waiting', file=sys.stderr, flush=True)\ntime.sleep(30)"
    with pytest.raises(WeftError, match=r"timed out after 0.5 s[\s\S]*waiting"):
        runner.run_program([sys.executable, "-c", source], timeout=0.5)


def test_timeout_stops_what_the_program_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    source = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)"
    )
    with pytest.raises(WeftError, match="timed out"):
        runner.run_program([sys.executable, "-c", source], timeout=1)
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_unknown_program_is_an_error() -> None:
    with pytest.raises(WeftError, match="no such program"):
        runner.run_program(["/nonexistent/weft_program"])


def test_env_is_added_to_the_environment() -> None:
    proc = runner.run_program(
        [sys.executable, "-c", "import os; print(os.environ['WEFT_TEST_VAR'], 'PATH' in os.environ)"],
        env={"WEFT_TEST_VAR": "42"},
    )
    assert proc.stdout.split() == ["42", "True"]


def test_steps_yields_every_item_in_order() -> None:
    assert list(runner.steps(["shm", "tcp"], lambda t: f"over {t}")) == ["shm", "tcp"]
