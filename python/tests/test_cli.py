from __future__ import annotations

import json
from pathlib import Path

import pytest

import weft
from weft import cli
from weft.bench import rma as bench_rma
from weft.commands import info


def test_help_lists_commands_and_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "info" in out and "bench" in out

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "--help"])
    assert exit_info.value.code == 0
    assert "rma" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["frobnicate"], ["bench", "nbody"], []])
def test_unknown_or_missing_command_exits_with_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "usage: weft" in capsys.readouterr().err


def test_every_listed_module_registers_its_command() -> None:
    parser = cli.build_parser()
    assert parser.parse_args(["info"]).func is info.command
    assert parser.parse_args(["bench", "rma", "--tls", "tcp"]).func is bench_rma.command
    assert set(cli.COMMANDS) >= {"info"} and set(cli.BENCHMARKS) >= {"rma"}


def test_user_error_exits_1_without_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(tmp_path / "no-build"))
    assert cli.main(["info"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("weft: error: ") and "no-build is not a directory: point it at a weft build" in err
    assert "Traceback" not in err


def test_version_names_the_library_and_its_mpi(fake_build: Path, write_program,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    document = {"weft_version": "9.8.7", "mpi": {"library": "MPICH Version: 4.0.2\nMPICH Release date"}}
    write_program(fake_build / "libexec" / "weft" / "weft_sysinfo", f"print({json.dumps(json.dumps(document))})")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.splitlines() == [
        f"weft toolkit {weft.__version__}", "weft library 9.8.7, MPI: MPICH Version: 4.0.2"]


def test_version_without_the_library_says_so(fake_build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"weft toolkit {weft.__version__}"
    assert lines[1] == "weft library: not found (weft_sysinfo is missing: run `make` first; looked in:)"
