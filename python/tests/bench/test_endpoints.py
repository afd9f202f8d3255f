from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_BUILD_DIR, real_program
from weft import WeftError, cli
from weft.bench import endpoints as bench_endpoints
from weft.core import report


def entry(policy: str, rate: float, variant: str = "default", contexts: int = 1, **res: Any) -> dict[str, Any]:
    return {"policy": policy, "variant": variant, "rate_median": rate, "rates": [rate],
            "resources": {"ucx_contexts": contexts, "workers": 3, "endpoints": 2, "locks_per_put": 0,
                          "locks_taken": 0, "locks_counted": False, "rss_bytes": 2**20, **res}}


@pytest.fixture
def document() -> dict[str, Any]:
    runs = [
        {"threads": 1, "transport": "posix/memory",
         "results": [entry("procs", 10e6, contexts=1), entry("dedicated", 9.6e6)]},
        {"threads": 2, "transport": "posix/memory",
         "results": [entry("procs", 20e6, contexts=2), entry("dedicated", 18e6),
                     entry("single", 5e6, locks_per_put=1, locks_taken=1000),
                     entry("procs", 4e6, "nobatch", contexts=2), entry("dedicated", 4e6, "nobatch")]},
    ]
    for run in runs:
        for e in run["results"]:
            e["mlx5"] = bench_endpoints.mlx5_resources(e["policy"], run["threads"])
    return {"metadata": {"hostname": "node", "cores": 2}, "runs": runs}


def test_ratios_are_to_procs_of_the_same_run_and_variant(document: dict[str, Any]) -> None:
    rows = bench_endpoints.rows_of(document["runs"][1])
    ratios = {(r.policy, r.variant): r.ratio for r in rows}
    assert ratios[("dedicated", "default")] == pytest.approx(0.9)
    assert ratios[("single", "default")] == pytest.approx(0.25)
    assert ratios[("dedicated", "nobatch")] == pytest.approx(1.0)


def test_goal_needs_the_ratio_and_one_context(document: dict[str, Any]) -> None:
    rows = [r for run in document["runs"] for r in bench_endpoints.rows_of(run)]
    assert bench_endpoints.goal(rows) == {1: True, 2: False}
    document["runs"][0]["results"][1]["resources"]["ucx_contexts"] = 2
    rows = bench_endpoints.rows_of(document["runs"][0])
    assert bench_endpoints.goal(rows) == {1: False}


def test_malformed_output_is_a_clear_error() -> None:
    with pytest.raises(WeftError, match="malformed"):
        bench_endpoints.rows_of({"threads": 1, "results": [{"policy": "procs"}]})


def test_mlx5_model_names_and_absence() -> None:
    assert bench_endpoints.model_policy("procs") == "process"
    assert bench_endpoints.model_policy("paired+caller") == "paired"
    model = bench_endpoints.mlx5_resources("dedicated", 16)
    assert model is not None and {"uars", "uuars", "qps", "cqs", "bytes"} <= set(model)
    assert bench_endpoints.mlx5_resources("no-such-policy", 2) is None


def test_report_and_chart(document: dict[str, Any], tmp_path: Path) -> None:
    with report.console.capture() as capture:
        report.console.print(bench_endpoints.run_report(document))
    text = capture.get()
    assert "dedicated" in text and "0.90×" in text and "T=1: yes, T=2: NO" in text
    assert "1000*" in text  # derived lock count is marked
    png = bench_endpoints.chart(document, tmp_path / "c.png")
    assert png.stat().st_size > 1000


def test_thread_list_parsing() -> None:
    assert bench_endpoints.parse_threads("1,2,16") == [1, 2, 16]
    for bad in ("", "a", "0", "1,300"):
        with pytest.raises(WeftError):
            bench_endpoints.parse_threads(bad)


@pytest.mark.skipif(real_program("weft_bench_endpoints") is None,
                    reason="no $WEFT_BUILD_DIR/libexec/weft/weft_bench_endpoints")
def test_real_binary_short_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    assert cli.main(["bench", "endpoints", "--threads", "2", "--rounds", "1", "--secs", "0.02",
                     "--policies", "procs,dedicated,paired+caller", "--variants", "default,sharedbuf"]) == 0
    document = bench_endpoints.results.load_latest("endpoints", tmp_path)
    rows = bench_endpoints.rows_of(document["runs"][0])
    assert {(r.policy, r.variant) for r in rows} == {
        (p, v) for p in ("procs", "dedicated", "paired+caller") for v in ("default", "sharedbuf")}
    by = {(r.policy, r.variant): r for r in rows}
    assert by[("dedicated", "default")].resources["ucx_contexts"] == 1
    assert by[("procs", "default")].resources["ucx_contexts"] == 2
    assert by[("paired+caller", "default")].resources["locks_counted"] is True
    assert all(r.rate > 0 for r in rows)


def test_cli_lists_endpoints(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    assert "endpoints" in capsys.readouterr().out
