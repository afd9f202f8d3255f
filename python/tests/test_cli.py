from __future__ import annotations

from pathlib import Path

import pytest

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
    assert err.startswith("weft: error: ") and "run `make` first" in err
    assert "Traceback" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == "weft 0.1.0"
