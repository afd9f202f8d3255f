"""Where the toolkit finds weft's programs, the launcher setting, the rank
counts it accepts and the version it records."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

import weft
from weft import WeftError
from weft.core import results, runner


def program_in(place: Path, write_program, name: str = "weft_bench_rma") -> Path:
    (place / "libexec" / "weft").mkdir(parents=True, exist_ok=True)
    return write_program(place / "libexec" / "weft" / name, "print('{}')")


def test_build_dir_comes_before_the_prefix_and_the_prefix_before_the_checkout(
        fake_build: Path, tmp_path: Path, write_program, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, checkout = tmp_path / "prefix", tmp_path / "checkout"
    in_prefix = program_in(prefix, write_program)
    in_checkout = program_in(checkout / "build", write_program)
    monkeypatch.setenv("WEFT_PREFIX", str(prefix))
    monkeypatch.setattr(runner, "source_root", lambda: checkout)
    assert runner.executable("weft_bench_rma") == in_prefix  # the build has none
    in_build = program_in(fake_build, write_program)
    assert runner.executable("weft_bench_rma") == in_build
    monkeypatch.delenv("WEFT_BUILD_DIR")
    monkeypatch.delenv("WEFT_PREFIX")
    assert runner.executable("weft_bench_rma") == in_checkout


def test_the_installed_prefix_comes_before_the_checkout(fake_build: Path, tmp_path: Path, write_program,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    installed, checkout = tmp_path / "installed", tmp_path / "checkout"
    in_installed = program_in(installed, write_program)
    program_in(checkout / "build", write_program)
    monkeypatch.delenv("WEFT_BUILD_DIR")
    monkeypatch.setattr(runner, "installed_prefix", lambda: installed)
    monkeypatch.setattr(runner, "source_root", lambda: checkout)
    assert runner.executable("weft_bench_rma") == in_installed


def test_no_program_anywhere_names_every_place(fake_build: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prefix").mkdir()
    monkeypatch.setenv("WEFT_PREFIX", str(tmp_path / "prefix"))
    monkeypatch.setattr(runner, "source_root", lambda: tmp_path / "checkout")
    with pytest.raises(WeftError) as error:
        runner.executable("weft_sysinfo")
    message = str(error.value)
    assert f"$WEFT_BUILD_DIR: {fake_build}/libexec/weft/weft_sysinfo" in message
    assert f"$WEFT_PREFIX: {tmp_path}/prefix/libexec/weft/weft_sysinfo" in message
    assert f"the checkout's build: {tmp_path}/checkout/build/libexec/weft/weft_sysinfo" in message
    assert "WEFT_PREFIX to an installation prefix" in message


def test_a_prefix_that_does_not_exist_is_an_error(fake_build: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_PREFIX", str(tmp_path / "typo"))
    with pytest.raises(WeftError, match=r"WEFT_PREFIX=.*typo is not a directory: point it at a weft installation prefix"):
        runner.executable("weft_sysinfo")


def test_installed_prefix_is_found_from_the_package_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for libdir in ("lib", "lib/x86_64-linux-gnu"):
        prefix = tmp_path / libdir.replace("/", "-")
        package = prefix / libdir / "weft" / "python" / "weft"
        package.mkdir(parents=True)
        (prefix / "share" / "weft").mkdir(parents=True)
        (prefix / "share" / "weft" / "build.json").write_text("{}")
        monkeypatch.setattr(runner, "_PACKAGE", package)
        assert runner.installed_prefix() == prefix
    monkeypatch.setattr(runner, "_PACKAGE", tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "weft")
    assert runner.installed_prefix() is None


def test_an_installation_records_its_mpi_and_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEFT_MPI", raising=False)
    (tmp_path / "share" / "weft").mkdir(parents=True)
    (tmp_path / "share" / "weft" / "build.json").write_text(
        json.dumps({"mpi": "mpich", "mpiexec": "/opt/mpich/bin/mpiexec", "version": "1.2.3"}))
    assert runner.mpi_flavor(tmp_path) == "mpich"
    assert runner.build_info(tmp_path)["version"] == "1.2.3"


def test_a_build_tree_gives_its_launcher_and_version(fake_build: Path) -> None:
    (fake_build / "CMakeCache.txt").write_text(
        "MPIEXEC_EXECUTABLE:FILEPATH=/usr/bin/mpiexec\nCMAKE_PROJECT_VERSION:STATIC=0.4.2\n")
    assert runner.build_info(fake_build) == {"mpiexec": "/usr/bin/mpiexec", "version": "0.4.2", "mpi": "openmpi"}


def test_the_launcher_the_build_found_is_used(fake_build: Path, write_program) -> None:
    mpiexec = write_program(fake_build / "my-mpiexec", "")
    (fake_build / "CMakeCache.txt").write_text(f"MPIEXEC_EXECUTABLE:FILEPATH={mpiexec}\n")
    assert runner.launcher() == runner.Launcher("openmpi", str(mpiexec))


def test_a_launcher_template_takes_np_and_passes_the_environment(fake_build: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_LAUNCHER", "srun -n {np} --mpi=pmix")
    launch = runner.launcher()
    assert launch.command(4, ["/p/prog", "--x"], {"UCX_TLS": "tcp"}) == \
        ["srun", "-n", "4", "--mpi=pmix", "/p/prog", "--x"]
    monkeypatch.setattr(runner.os, "geteuid", lambda: 1000)
    assert launch.environment({"UCX_TLS": "tcp"}) == {"UCX_TLS": "tcp"}
    # --launcher wins over the variable
    runner.set_launcher_template("mpiexec -n {np} -x UCX_TLS")
    try:
        assert runner.launcher().command(2, ["p"], {}) == ["mpiexec", "-n", "2", "-x", "UCX_TLS", "p"]
    finally:
        runner.set_launcher_template(None)


def test_a_launcher_template_runs_the_ranks_with_their_environment(fake_build: Path, tmp_path: Path,
                                                                   write_program) -> None:
    # A launcher that runs its program np times, as srun does, in the environment it was given.
    launcher = write_program(tmp_path / "fake-srun", (
        "import os, subprocess, sys\n"
        "n = int(sys.argv[2])\n"
        "for _ in range(n): subprocess.run(sys.argv[3:], check=True)\n"))
    out = tmp_path / "ranks.txt"
    program = write_program(tmp_path / "prog", (
        "import os, sys\n"
        f"open({str(out)!r}, 'a').write(os.environ['WEFT_SHM'] + ' ' + sys.argv[1] + '\\n')\n"))
    runner.set_launcher_template(f"{launcher} -n {{np}}")
    try:
        runner.run_mpi(3, [str(program), "hello"], env={"WEFT_SHM": "0"})
    finally:
        runner.set_launcher_template(None)
    assert out.read_text().splitlines() == ["0 hello"] * 3


@pytest.mark.parametrize(("template", "message"), [
    ("srun", "has no {np}"),
    ("", None),  # empty: the default launcher
    ("srun -n '{np}", "No closing quotation"),
])
def test_bad_launcher_templates(template: str, message: str | None, fake_build: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_LAUNCHER", template)
    if message is None:
        assert runner.launcher_template() is None
    else:
        with pytest.raises(WeftError, match=message):
            runner.launcher_template()


def test_run_mpi_refuses_no_ranks(fake_build: Path) -> None:
    with pytest.raises(WeftError, match="--np 0: this needs at least 1 rank"):
        runner.run_mpi(0, ["/bin/true"])


@pytest.mark.parametrize(("least", "most", "text", "message"), [
    (1, None, "0", "0: at least 1 rank needed"),
    (1, None, "-3", "-3: at least 1 rank needed"),
    (2, 2, "3", "3: this runs on exactly 2 ranks"),
    (2, None, "1", "1: at least 2 ranks needed"),
    (1, None, "two", "'two' is not a number of ranks"),
])
def test_ranks_type_refuses(least: int, most: int | None, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        runner.ranks_type(least, most)(text)
    assert runner.ranks_type(least, most)(str(least)) == least


def test_metadata_carries_the_library_and_toolkit_versions(fake_build: Path) -> None:
    (fake_build / "CMakeCache.txt").write_text("CMAKE_PROJECT_VERSION:STATIC=0.4.2\n")
    meta = results.metadata(transport="shm", ranks=2)
    assert meta["weft_version"] == "0.4.2"
    assert meta["toolkit_version"] == weft.__version__


def test_metadata_without_weft_has_no_library_version(fake_build: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(tmp_path))  # a directory without libexec/weft
    assert results.metadata(transport="shm", ranks=2)["weft_version"] is None
