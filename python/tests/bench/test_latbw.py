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
from test_rma import BAD_SIZES
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
    assert (data["iters"], data["warmup"], data["window"]) == (50, 0, 64)
    assert data["latency_sizes"] == [8, 16, 32, 64] and data["bandwidth_sizes"] == [8 << k for k in range(10)]
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
    for args, message in ((["--max-bw", "4"], "--max-bw 4: from 8 to"),
                          (["--sizes", "64M"], "--sizes: '64M' is more than 33554432 bytes"),
                          (["-m", "64:8"], "-m: MIN 64 is more than MAX 8"),
                          (["--warmup", "x"], "--warmup: 'x' is not a count")):
        proc = subprocess.run(mpi.command(2, [str(program), "--json", "x", *args], {}),
                              env={**os.environ, **mpi.environment()},
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0
        assert f"weft_bench_latbw: {message}" in proc.stderr
        assert "usage: mpirun -np 2 weft_bench_latbw" in proc.stderr


@pytest.mark.skipif(real_program("weft_bench_latbw") is None,
                    reason="no $WEFT_BUILD_DIR/libexec/weft/weft_bench_latbw (build weft with `make`)")
def test_real_binary_takes_sizes_and_warmup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    output = tmp_path / "latbw.json"
    program = real_program("weft_bench_latbw")
    assert program is not None
    runner.run_mpi(2, [str(program), "--json", str(output), "--sizes", "8,1K,3", "--warmup", "4", "--iters", "20"],
                   timeout=120)
    data = json.loads(output.read_text())
    run = {"tls": "shm", **data}
    assert data["warmup"] == 4 and data["iters"] == 20
    assert data["latency_sizes"] == data["bandwidth_sizes"] == [8, 1024, 3]
    assert [row.size for row in bench_latbw.latency_rows(run)] == [3, 8, 1024]
    assert list(bench_latbw.peak_shares(run)) == [3, 8, 1024]


def test_cli_lists_latbw(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bench", "latbw", "--help"])
    assert "--tls" in capsys.readouterr().out
    assert results.latest_path("latbw").name == "latbw-latest.json"


@pytest.fixture
def fake_latbw(fake_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_program) -> list[list[str]]:
    """A build with a weft_bench_latbw and a run_mpi that writes its output
    instead of running it; returns the argument lists it was given."""
    write_program(fake_build / "libexec" / "weft" / "weft_bench_latbw", "raise SystemExit(1)")
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "results"))
    calls: list[list[str]] = []

    def run_mpi(nranks: int, argv: list[str], *, env: dict[str, str], timeout: float) -> None:
        calls.append(argv[3:])
        document = {"benchmark": "latbw", "transport": "posix/memory", "peak_MBps": 1000.0,
                    "peak_kind": "memcpy", "iters": 7, "warmup": 3,
                    "latency": latency(8, 0.2, 0.3, 0.5, 0.5), "bandwidth": bandwidth(8, 100.0, 10.0)}
        Path(argv[argv.index("--json") + 1]).write_text(json.dumps(document))

    monkeypatch.setattr(runner, "run_mpi", run_mpi)
    return calls


def test_cli_passes_sizes_iters_and_warmup(fake_latbw: list[list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "latbw", "--sizes", "8,4K,1m", "--iters", "7", "--warmup", "3"]) == 0
    assert fake_latbw == [["--iters", "7", "--warmup", "3", "--sizes", "8,4096,1048576"]]
    assert "per point, at most: 7, untimed before each (--warmup): 3" in capsys.readouterr().out
    assert cli.main(["bench", "latbw", "-m", "4K:32K", "--tls", "both"]) == 0
    assert fake_latbw[1:] == [["--sizes", "4096,8192,16384,32768"]] * 2
    assert cli.main(["bench", "latbw"]) == 0
    assert fake_latbw[3] == []


@pytest.mark.parametrize(("args", "message"), [
    *BAD_SIZES,
    (["--sizes", "8,64M"], "'64M' is more than 32 MiB, the most the benchmark's segment allows"),
    (["-m", "8:1G"], "'1G' is more than 32 MiB"),
    (["--iters", "0"], "0: at least 1"),
])
def test_bad_counts_and_sizes_are_refused(args: list[str], message: str, fake_latbw: list[list[str]],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(["bench", "latbw", *args])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "weft bench latbw: error: argument" in err and message in err
    assert fake_latbw == []
