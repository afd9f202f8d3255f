"""`weft model breakdown` and `weft model whatif` on the preset, on the test
fixture (python/tests/breakdown_fixture.json, not a measurement) and on bad
input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA
from weft import cli
from weft.commands import model

FIXTURE = DATA / "breakdown_fixture.json"


@pytest.fixture(autouse=True)
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "results"
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(directory))
    monkeypatch.setenv("COLUMNS", "200")
    return directory


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """The fixture copied where the command may write its PNGs."""
    return Path(shutil.copy(FIXTURE, tmp_path / "breakdown-fixture.json"))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_whatif_on_the_preset_prints_the_papers_speedups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "whatif.png"
    code, out, _ = run(["model", "whatif", "--kind", "injection", "--reductions", "20",
                        "--project", "PIO_copy=15", "--plot", str(plot)], capsys)
    assert code == 0
    assert "paper, modelled" in out
    hlp = next(line for line in out.splitlines() if line.strip().startswith("HLP "))
    assert "6.45" in hlp  # 6.447 %, which the paper writes 6.44
    llp = next(line for line in out.splitlines() if line.strip().startswith("LLP "))
    assert "13.31" in llp
    assert "29.91%" in out  # PIO copy 94.25 -> 15 ns
    assert plot.stat().st_size > 0


def test_whatif_from_a_measurement_draws_next_to_it(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["model", "whatif", "--from", str(saved), "--target", "transfer", "--target", "HLP"], capsys)
    assert code == 0
    assert "measured" in out and "transfer" in out
    assert saved.with_name("breakdown-fixture-whatif.png").exists()


def test_breakdown_from_a_measurement_reports_error_and_draws(saved: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["model", "breakdown", "--path", "shm", "--from", str(saved)], capsys)
    assert code == 0
    assert "-7.37%" in out  # injection: 88 modelled vs 95 observed
    assert "-4.44%" in out  # latency: 258 vs 270
    assert "CPU / I/O / network split" in out
    assert "trace points" in out
    assert saved.with_name("breakdown-fixture-bars.png").exists()
    assert saved.with_name("breakdown-fixture-split.png").exists()


def test_breakdown_of_the_preset_is_labelled_modelled(results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["model", "breakdown", "--preset", "tx2-cx4"], capsys)
    assert code == 0
    assert "tx2-cx4 (paper, modelled)" in out
    assert "295.73" in out and "1135.80" in out and "264.97" in out and "1387.02" in out
    assert (results_dir / "breakdown-tx2-cx4-bars.png").exists()
    assert (results_dir / "breakdown-tx2-cx4-split.png").exists()


def test_breakdown_measures_through_breakdown_run_and_saves(results_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[dict[str, Any]] = []

    def measure(path: str, *, np: int = 2, iters: int = 10, progress: Any = None) -> dict[str, Any]:
        calls.append({"path": path, "np": np, "iters": iters})
        progress("calibrating the timer")
        progress("probe", 1, 2)
        progress("done", 2, 2)
        return {**json.loads(FIXTURE.read_text()), "path": path}

    monkeypatch.setattr(model.breakdown_run, "measure", measure)
    code, out, _ = run(["model", "breakdown", "--path", "tcp", "--iters", "7"], capsys)
    assert code == 0
    assert calls == [{"path": "tcp", "np": 2, "iters": 7}]
    document = json.loads((results_dir / "breakdown-latest.json").read_text())
    assert document["benchmark"] == "breakdown" and document["path"] == "tcp"
    assert document["metadata"]["transport"] == "tcp"
    assert "weft one-way latency over tcp" in out
    assert list(results_dir.glob("breakdown-*-bars.png"))


def test_breakdown_without_the_measurement_says_it_is_not_built(fake_build: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["model", "breakdown", "--path", "shm"], capsys)
    assert code == 1
    assert "weft_bench_breakdown is missing: run `make` first" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["model", "breakdown"], "give --path shm|tcp|tcp-nodes"),
    (["model", "breakdown", "--preset", "tx2-cx4", "--path", "shm"], "--preset renders the paper's"),
    (["model", "breakdown", "--from", "{missing}"], "does not exist"),
    (["model", "breakdown", "--from", "{malformed}"], "is not valid JSON"),
    (["model", "breakdown", "--path", "tcp", "--from", "{saved}"], "holds a breakdown over shm, not --path tcp"),
    (["model", "whatif", "--from", "{missing}"], "does not exist"),
    (["model", "whatif", "--reductions", "10,150"], "between 0 and 100, got 150.0"),
    (["model", "whatif", "--reductions", "-5"], "between 0 and 100, got -5.0"),
    (["model", "whatif", "--target", "GPU"], "no component 'GPU'"),
    (["model", "whatif", "--project", "PIO_copy"], "a projection is NAME=NS"),
    (["model", "whatif", "--project", "PIO_copy=200"], "a projected time must be between 0 and that"),
    (["model", "whatif", "--project", "NIC=3"], "no component 'NIC' in the models"),
])
def test_bad_input_is_a_clear_error(argv: list[str], message: str, tmp_path: Path, saved: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    malformed = tmp_path / "malformed.json"
    malformed.write_text('{"benchmark": "breakdown", ')
    names = {"missing": str(tmp_path / "nope.json"), "malformed": str(malformed), "saved": str(saved)}
    code, _, err = run([arg.format(**names) for arg in argv], capsys)
    assert code == 1
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["model", "whatif", "--preset", "bf2"], ["model", "breakdown", "--path", "ib"],
                                  ["model", "whatif", "--kind", "bandwidth"], ["model"]])
def test_unknown_choices_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "usage: weft model" in capsys.readouterr().err


def test_model_is_a_top_level_command() -> None:
    assert "model" in cli.COMMANDS
    assert cli.build_parser().parse_args(["model", "whatif"]).func is model.whatif_command
