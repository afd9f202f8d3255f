from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from weft import WeftError, cli
from weft.bench import dgemm as bench_dgemm
from weft.bench import stencil as bench_stencil
from weft.core import report, results

RES = {"ucx_contexts": 1, "workers": 3, "endpoints": 2, "locks_per_put": 0, "rss_bytes": 2**21}


def dgemm_doc(verified: bool = True) -> dict[str, Any]:
    return {"metadata": {"hostname": "node", "cores": 2},
            "runs": [{"threads": 2, "n": 256, "tile": 32, "results": [
                {"policy": "procs", "verified": True, "gflops_median": 4.0, "resources": RES, "mlx5": None},
                {"policy": "dedicated", "verified": verified, "gflops_median": 3.0, "resources": RES,
                 "mlx5": None}]}]}


def stencil_doc() -> dict[str, Any]:
    def run(ranks: int, threads: int) -> dict[str, Any]:
        return {"ranks": ranks, "threads": threads, "rows": 64, "cols": 32, "iters": 10, "results": [
            {"policy": "process", "verified": True, "msgs_per_s_median": 1000.0, "resources": RES, "mlx5": None},
            {"policy": "single", "verified": True, "msgs_per_s_median": 500.0, "resources": RES, "mlx5": None}]}
    return {"metadata": {"hostname": "node", "cores": 2}, "runs": [run(2, 1), run(1, 2)]}


def test_dgemm_ratio_to_procs_and_report(tmp_path: Path) -> None:
    rows = bench_dgemm.rows_of(dgemm_doc()["runs"][0])
    assert [r["ratio"] for r in rows] == [pytest.approx(1.0), pytest.approx(0.75)]
    with report.console.capture() as capture:
        report.console.print(bench_dgemm.run_report(dgemm_doc(verified=False)))
    assert "0.75×" in capture.get() and "NO" in capture.get()
    assert bench_dgemm.chart(dgemm_doc(), tmp_path / "d.png").stat().st_size > 1000
    with pytest.raises(WeftError, match="malformed"):
        bench_dgemm.rows_of({"threads": 1, "results": [{"policy": "procs"}]})


def test_stencil_splits_and_report(tmp_path: Path) -> None:
    assert bench_stencil.splits(2) == [(2, 1), (1, 2)]
    assert bench_stencil.splits(6) == [(6, 1), (3, 2), (2, 3), (1, 6)]
    with pytest.raises(WeftError):
        bench_stencil.splits(0)
    rows = [r for run in stencil_doc()["runs"] for r in bench_stencil.rows_of(run)]
    assert [(r["split"], r["ratio"]) for r in rows] == [("2×1", 1.0), ("2×1", 0.5), ("1×2", 1.0), ("1×2", 0.5)]
    with report.console.capture() as capture:
        report.console.print(bench_stencil.run_report(stencil_doc()))
    assert "0.50×" in capture.get() and "1×2" in capture.get()
    assert bench_stencil.chart(stencil_doc(), tmp_path / "s.png").stat().st_size > 1000


def test_cli_lists_dgemm_and_stencil(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "dgemm" in out and "stencil" in out


def test_a_saved_dgemm_not_verified_fails_the_command_but_not_its_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    results.latest_path("dgemm").write_text(json.dumps(dgemm_doc(verified=False)))
    assert cli.main(["bench", "dgemm", "--last"]) == 1
    assert "a DGEMM result did not match the serial dgemm" in capsys.readouterr().err
    assert cli.main(["bench", "dgemm", "--last", "--json-only"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["results"][1]["verified"] is False
    results.latest_path("dgemm").write_text(json.dumps(dgemm_doc()))
    assert cli.main(["bench", "dgemm", "--last"]) == 0
