"""`weft report FILE...`: saved results shown again from the files alone,
by the module that made them (hand-made fixtures under data/, not
measurements)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA
from weft import cli
from weft.commands import report

RMA = DATA / "rma-fixture.json"
FLOOD = DATA / "flood-fixture.json"
BREAKDOWN = DATA / "breakdown_fixture.json"


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_result_is_shown_with_its_tables_and_its_chart_in_the_results_directory(
        results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["report", str(RMA)], capsys)
    assert code == 0
    assert "weft RMA over shm" in out and "shared and noisy" in out
    assert "0.95×" in out        # put rate: weft 28.5 / UCX 30.0
    chart = results_dir / "rma-fixture.png"
    assert chart.stat().st_size > 1000
    assert f"saved {chart}" in out


def test_report_shows_what_the_benchmark_showed(results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same tables as `weft bench rma --last` of the same file."""
    results_dir.mkdir()
    shutil.copy(RMA, results_dir / "rma-latest.json")
    assert cli.main(["bench", "rma", "--last"]) == 0
    shown = capsys.readouterr().out
    code, out, _ = run(["report", str(results_dir / "rma-latest.json")], capsys)
    assert code == 0
    assert out.startswith(shown) and out[len(shown):].startswith("saved ")


def test_charts_go_to_png_dir_and_each_file_by_its_benchmark(tmp_path: Path, results_dir: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    plots = tmp_path / "plots"
    plots.mkdir()
    code, out, _ = run(["report", str(BREAKDOWN), str(FLOOD), str(RMA), "--png", str(plots)], capsys)
    assert code == 0
    assert "weft one-way latency over shm" in out       # the breakdown
    assert "1,000,000 implicit 8-byte puts per rank" in out  # the flood, which has no chart
    assert "weft RMA over shm" in out
    assert sorted(p.name for p in plots.iterdir()) == [
        "breakdown_fixture-bars.png", "breakdown_fixture-split.png", "rma-fixture.png"]
    assert not results_dir.exists()
    assert out.count("saved ") == 2


@pytest.mark.parametrize(("content", "message"), [
    (None, "does not exist"),
    ('{"benchmark": "rma", ', "is not valid JSON"),
    ('{"benchmark": "rma", "runs": []}', "is not a weft result file"),
    ('{"benchmark": "nope", "metadata": {}}', "unknown benchmark 'nope' (weft report shows breakdown, coll, "),
    ('{"metadata": {}}', "unknown benchmark None"),
    ('{"benchmark": "rma", "metadata": {}}', "not a complete rma result"),
])
def test_bad_files_are_clear_errors(content: str | None, message: str, tmp_path: Path, results_dir: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    code, out, err = run(["report", str(RMA), str(bad)], capsys)
    assert code == 1
    assert err.startswith(f"weft: error: {bad}")
    assert message in err
    if message != "not a complete rma result":
        # every file is checked before any is shown
        assert out == "" and not results_dir.exists()


def test_a_png_dir_that_does_not_exist_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # As --plot and --png of the other commands: weft creates no directory a user names.
    code, _, err = run(["report", str(RMA), "--png", str(tmp_path / "missing" / "plots")], capsys)
    assert code == 1
    assert f"--png {tmp_path / 'missing' / 'plots'}: no such directory" in err
    assert not (tmp_path / "missing").exists()


def test_report_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["report"])
    assert "the following arguments are required: FILE" in capsys.readouterr().err


def test_every_benchmark_and_saved_result_has_a_renderer() -> None:
    known = report.renderers()
    for name in cli.BENCHMARKS:
        module = next(m for m in report.PRODUCERS if m.__name__ == f"weft.bench.{name}")
        assert module.BENCHMARK in known and set(module.RENDERERS) <= set(known)
    assert {"breakdown", "smpi-calibration", "coll-validation", "coll-opcost", "coll-smpi", "summa-smpi",
            "hvec-smpi"} <= set(known)


def test_fixtures_are_hand_made() -> None:
    for path in (RMA, FLOOD, BREAKDOWN):
        assert json.loads(path.read_text())["metadata"]["note"].startswith("TEST FIXTURE")
