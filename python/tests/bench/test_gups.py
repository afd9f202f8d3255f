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
from weft.bench import gups as bench_gups
from weft.core import runner

NO_REAL_GUPS = "no $WEFT_BUILD_DIR/libexec/weft/weft_bench_gups (build weft with `make`)"


def entry(path: str, impl: str, rounds: list[float], rate: float = 0.0, verified: bool = True) -> dict[str, Any]:
    return {"path": path, "impl": impl, "op": "add" if impl == "weft-add" else "xor", "rounds": rounds,
            "error_rate": rate, "verified": verified}


@pytest.fixture
def entries() -> list[dict[str, Any]]:
    """Two cycles on the node and over UCX: the direct xor is weft's fastest
    verified xor on the node; over UCX the atomic xor is weft's figure even
    where the add is faster."""
    return [
        entry("direct", "weft-add", [0.10, 0.12]), entry("direct", "weft-direct-xor", [0.30]),
        entry("direct", "weft-getput", [0.50], rate=0.004), entry("direct", "openshmem-xor", [0.05, 0.07]),
        entry("direct", "mpi-acc", [0.01]), entry("shm", "weft-add", [0.05]), entry("shm", "weft-xor", [0.03]),
        entry("shm", "openshmem-xor", [0.04]),
        entry("direct", "weft-direct-xor", [0.34], rate=0.0), entry("direct", "mpi-acc", [0.03]),
    ]


def test_merge_takes_every_round_and_the_worst_run(entries: list[dict[str, Any]]) -> None:
    rows = bench_gups.merge(entries + [entry("direct", "weft-add", [0.2], rate=0.02, verified=False)])
    by = {(r["path"], r["impl"]): r for r in rows}
    assert by["direct", "weft-direct-xor"]["rounds"] == [0.30, 0.34]
    assert by["direct", "weft-direct-xor"]["gups"] == pytest.approx(0.32)
    assert by["direct", "mpi-acc"]["gups"] == pytest.approx(0.02)
    # one bad run spoils the variant's verdict and sets its error rate
    assert by["direct", "weft-add"]["verified"] is False and by["direct", "weft-add"]["error_rate"] == 0.02
    assert [r["path"] for r in rows][:1] == ["direct"] and rows[-1]["path"] == "shm"


def test_ratios_use_the_fastest_verified_atomic_variant(entries: list[dict[str, Any]]) -> None:
    ratios = {(r["path"], r["peer"]): r for r in bench_gups.ratios(bench_gups.merge(entries))}
    # get + put is faster but not atomic: it is never weft's figure
    assert ratios["direct", "openshmem-xor"]["weft"] == "weft-direct-xor"
    assert ratios["direct", "openshmem-xor"]["ratio"] == pytest.approx(0.32 / 0.06)
    assert ratios["direct", "mpi-acc"]["ratio"] == pytest.approx(16.0)
    assert ratios["direct", "mpi-acc"]["goal"] == 3.0
    assert ratios["shm", "openshmem-xor"]["weft"] == "weft-xor"
    assert ratios["shm", "openshmem-xor"]["ratio"] == pytest.approx(0.75)
    assert ratios["shm", "openshmem-xor"]["goal"] == 1.0


def test_results_without_verification_are_refused() -> None:
    with pytest.raises(WeftError, match="without impl, rounds, error_rate or verified"):
        bench_gups.entries_of({"results": [{"impl": "weft-add", "rounds": [1.0]}]}, "weft_bench_gups")
    with pytest.raises(WeftError, match="wrote no results"):
        bench_gups.entries_of({"results": []}, "weft_bench_gups")


def test_report_and_chart(entries: list[dict[str, Any]], tmp_path: Path,
                          render_text: Callable[[RenderableType], str]) -> None:
    rows = bench_gups.merge(entries)
    document = {"log2_table": 10, "updates_per_rank": 4096, "window": 1024, "ranks": 2, "rows": rows,
                "ratios": bench_gups.ratios(rows)}
    text = render_text(bench_gups.render(document))
    assert "weft direct xor" in text and "5.33x" in text and "0.40%" in text
    assert bench_gups.chart(document, tmp_path / "gups.png").stat().st_size > 0


@pytest.mark.parametrize(("args", "message"), [(["--log2-table", "3"], "outside 4..28"),
                                               (["--window", "0"], "not positive"),
                                               (["--updates", "x"], "'x' is not an integer")])
def test_cli_rejects_bad_arguments(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "gups", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_rejects_an_unknown_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "gups", "--paths", "direct,ib"]) == 1
    assert "--paths: ib: expected direct, shm or both" in capsys.readouterr().err


@pytest.mark.skipif(real_program("weft_bench_gups") is None, reason=NO_REAL_GUPS)
@pytest.mark.parametrize("path", ["direct", "shm"])
def test_real_binary_verifies_a_tiny_table(path: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("weft_bench_gups")
    assert program is not None
    output = tmp_path / "gups.json"
    runner.run_mpi(2, [str(program), "--log2-table", "10", "--window", "8", "--rounds", "1", "--json", str(output)],
                   env=bench_gups.PATH_ENV[path], timeout=120)
    data = json.loads(output.read_text())
    assert (data["log2_table"], data["table_words"], data["updates_per_rank"]) == (10, 2048, 4096)
    impls = {r["impl"]: r for r in data["results"]}
    expected = {"weft-xor", "weft-add", "weft-getput", "mpi-acc", "mpi-fop"} | ({"weft-direct-xor"} if path == "direct" else set())
    assert set(impls) == expected
    # atomics lose no update; get + put may, within HPCC's 1 %
    for impl in expected - {"weft-getput"}:
        assert impls[impl]["errors"] == 0 and impls[impl]["verified"] is True, impls[impl]
    assert impls["weft-getput"]["verified"] is (impls["weft-getput"]["error_rate"] <= 0.01)


@pytest.mark.skipif(real_program("weft_bench_gups") is None, reason=NO_REAL_GUPS)
def test_real_binary_rejects_bad_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("weft_bench_gups")
    assert program is not None
    mpi = runner.launcher()
    for args, message in ((["--log2-table", "40"], "--log2-table 40: from 4 to 28"),
                          (["--rounds", "99"], "--rounds 99: at most 32"),
                          (["--window", "x"], "an unknown option")):
        proc = subprocess.run(mpi.command(2, [str(program), *args], {}), env={**os.environ, **mpi.environment()},
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0
        assert f"weft_bench_gups: {message}" in proc.stderr
        assert "usage: mpirun -np P weft_bench_gups" in proc.stderr
