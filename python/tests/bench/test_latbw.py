from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import RenderableType

from conftest import REAL_BUILD_DIR, real_program
from weft import WeftError, cli
from weft.bench import latbw as bench_latbw
from weft.core import results, runner


def latency(size: int, put: float, get: float, block: float, nonblock: float) -> list[dict[str, Any]]:
    return [
        {"impl": "weft-put", "size": size, "us": put},
        {"impl": "weft-get", "size": size, "us": get},
        {"impl": "mpi-block", "size": size, "us": block},
        {"impl": "mpi-nonblock", "size": size, "us": nonblock},
    ]


def bandwidth(size: int, weft: float, mpi: float) -> list[dict[str, Any]]:
    return [{"impl": "weft-put-nbi", "size": size, "MBps": weft}, {"impl": "mpi-isend", "size": size, "MBps": mpi}]


@pytest.fixture
def run() -> dict[str, Any]:
    """One transport: one-sided wins at 8 B and 16 B but loses at 32 B (the
    get is slower than the blocking ping-pong); weft reaches 90% of the
    1000 MB/s peak at 64 B, MPI at 128 B.  Points come out of order."""
    return {
        "tls": "shm", "transport": "posix/memory", "peak_MBps": 1000.0, "peak_kind": "memcpy",
        "latency": latency(16, 0.3, 0.4, 0.5, 0.6) + latency(8, 0.2, 0.3, 0.5, 0.5) + latency(32, 0.3, 0.7, 0.6, 0.8),
        "bandwidth": bandwidth(64, 950.0, 500.0) + bandwidth(8, 100.0, 10.0) + bandwidth(128, 990.0, 900.0),
    }


def test_latency_rows_sorted_and_compared(run: dict[str, Any]) -> None:
    rows = bench_latbw.latency_rows(run)
    assert [row.size for row in rows] == [8, 16, 32]
    assert rows[0].values == {"weft-put": 0.2, "weft-get": 0.3, "mpi-block": 0.5, "mpi-nonblock": 0.5}
    assert [row.one_sided_wins for row in rows] == [True, True, False]
    # an equal value still counts as "no slower"
    assert bench_latbw.LatencyRow(8, {"weft-put": 0.5, "weft-get": 0.5, "mpi-block": 0.5,
                                      "mpi-nonblock": 0.9}).one_sided_wins is True
    assert bench_latbw.LatencyRow(8, {"weft-put": 0.5, "mpi-block": 0.5}).one_sided_wins is None


def test_peak_shares_and_crossovers(run: dict[str, Any]) -> None:
    shares = bench_latbw.peak_shares(run)
    assert list(shares) == [8, 64, 128]
    assert shares[8] == {"weft-put-nbi": pytest.approx(0.1), "mpi-isend": pytest.approx(0.01)}
    assert bench_latbw.crossover(shares, "weft-put-nbi") == 64
    assert bench_latbw.crossover(shares, "mpi-isend") == 128
    assert bench_latbw.crossover(shares, "mpi-isend", share=0.95) is None
    assert bench_latbw.verdicts(run) == {"latency": False, "bandwidth": True}


def test_verdicts_when_mpi_is_first_or_nobody_reaches_the_peak(run: dict[str, Any]) -> None:
    run["bandwidth"] = bandwidth(8, 100.0, 950.0) + bandwidth(16, 950.0, 950.0)
    run["latency"] = latency(8, 0.2, 0.3, 0.5, 0.5)
    assert bench_latbw.verdicts(run) == {"latency": True, "bandwidth": False}
    run["bandwidth"] = bandwidth(8, 100.0, 50.0)
    assert bench_latbw.verdicts(run)["bandwidth"] is None


def test_malformed_output_is_a_clear_error(run: dict[str, Any]) -> None:
    run["peak_MBps"] = 0
    with pytest.raises(WeftError, match="peak_MBps"):
        bench_latbw.peak_shares(run)
    with pytest.raises(WeftError, match="malformed point"):
        bench_latbw.latency_rows({"latency": [{"impl": "weft-put", "size": "eight", "us": 1.0}]})
    with pytest.raises(WeftError, match="no list of us"):
        bench_latbw.latency_rows({})


def test_report_shows_tables_and_crossovers(run: dict[str, Any],
                                            render_text: Callable[[RenderableType], str]) -> None:
    text = render_text(bench_latbw.run_report(run))
    assert "shm: round-trip latency in µs" in text
    assert "90% of peak reached at: weft put_nbi ≥ 64 B, MPI Isend/Irecv ≥ 128 B" in text
    assert "95%" in text and "50%" in text      # 64 B: weft 950, MPI 500 of 1000 MB/s
    assert text.count("yes") >= 3 and "NO" in text


def test_charts_are_written(run: dict[str, Any], tmp_path: Path) -> None:
    document = {"metadata": {"hostname": "node1"}, "runs": [run, {**run, "tls": "tcp"}]}
    for chart in (bench_latbw.latency_chart, bench_latbw.bandwidth_chart):
        path = chart(document, tmp_path / f"{chart.__name__}.png")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(real_program("weft_bench_latbw") is None,
                    reason="no $WEFT_BUILD_DIR/libexec/weft/weft_bench_latbw (build weft with `make`)")
def test_real_binary_tiny_sizes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    output = tmp_path / "latbw.json"
    program = real_program("weft_bench_latbw")
    assert program is not None
    runner.run_mpi(2, [str(program), "--json", str(output), "--max-lat", "64", "--max-bw", "4096", "--iters", "50"],
                   timeout=120)
    data = json.loads(output.read_text())
    run = {"tls": "shm", **data}
    assert data["benchmark"] == "latbw" and data["peak_kind"] == "memcpy" and data["peak_MBps"] > 0
    assert [row.size for row in bench_latbw.latency_rows(run)] == [8, 16, 32, 64]
    assert all(set(row.values) == set(bench_latbw.LATENCY_IMPLS) and min(row.values.values()) > 0
               for row in bench_latbw.latency_rows(run))
    shares = bench_latbw.peak_shares(run)
    assert list(shares) == [8 << k for k in range(10)]
    assert all(set(values) == set(bench_latbw.BANDWIDTH_IMPLS) for values in shares.values())


@pytest.mark.skipif(real_program("weft_bench_latbw") is None,
                    reason="no $WEFT_BUILD_DIR/libexec/weft/weft_bench_latbw (build weft with `make`)")
def test_real_binary_rejects_bad_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("weft_bench_latbw")
    assert program is not None
    mpi = runner.launcher()
    proc = subprocess.run(mpi.command(2, [str(program), "--json", "x", "--max-bw", "4"], {}),
                          env={**os.environ, **mpi.environment()},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "usage: mpirun -np 2 weft_bench_latbw" in proc.stderr


def test_cli_lists_latbw(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bench", "latbw", "--help"])
    assert "--tls" in capsys.readouterr().out
    assert results.latest_path("latbw").name == "latbw-latest.json"
