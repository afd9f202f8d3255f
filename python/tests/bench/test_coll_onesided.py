"""`weft bench coll --onesided`: the configurations measured, and the rows
that compare the one-sided team collectives with the best MPI algorithm
and the hierarchical (MPI-based) ones, on hand-made results."""

from __future__ import annotations

import pytest
from rich.console import Console

from weft import WeftError
from weft.bench import coll as bench_coll


def point(size: int, native: float, hier: float, onesided: float) -> dict[str, float]:
    return {"size": size, "native_s": native, "hier_s": hier, "onesided_s": onesided,
            "native_min_s": native / 2, "hier_min_s": hier / 2, "onesided_min_s": onesided / 4}


def run(op: str, config: str, points: list[dict[str, float]]) -> dict[str, object]:
    return {"op": op, "config": config, "algorithm": config, "points": points}


RUNS = [
    run("allreduce", "default", [point(8, 1.0e-6, 2.0e-6, 0.4e-6), point(65536, 40e-6, 80e-6, 30e-6)]),
    run("allreduce", "tuned ring", [point(8, 0.8e-6, 1.6e-6, 0.5e-6), point(65536, 50e-6, 60e-6, 30e-6)]),
    run("bcast", "default", [point(8, 0.2e-6, 0.3e-6, 0.3e-6)]),
]


def test_configs_are_the_default_then_every_tuned_algorithm_under_open_mpi() -> None:
    configs = bench_coll.onesided_configs("allreduce", "openmpi")
    assert [c["config"] for c in configs][:2] == ["default", "tuned basic linear"]
    assert len(configs) == 7
    assert configs[4]["env"]["OMPI_MCA_coll_tuned_allreduce_algorithm"] == "4"
    assert [c["config"] for c in bench_coll.onesided_configs("bcast", "mpich")] == ["default"]


def test_rows_compare_within_the_run_of_the_best_mpi_configuration() -> None:
    rows = {(r["op"], r["size"]): r for r in bench_coll.onesided_rows(RUNS)}
    small = rows[("allreduce", 8)]
    # the best native time is tuned ring's (0.8 us): its own run's one-sided time
    assert small["best_mpi"] == "tuned ring"
    assert small["vs_mpi"] == pytest.approx(0.5 / 0.8)
    # the best hierarchical time is again tuned ring's
    assert small["best_hier"] == "tuned ring" and small["vs_hier"] == pytest.approx(0.5 / 1.6)
    assert small["goal"] == 0.5 and small["met"] is False
    large = rows[("allreduce", 65536)]
    assert large["best_mpi"] == "default" and large["best_hier"] == "tuned ring"
    assert large["goal"] == 1.0 and large["met"] is True
    assert rows[("bcast", 8)]["vs_mpi"] == pytest.approx(1.5)


def test_rows_of_the_fastest_batches() -> None:
    rows = {(r["op"], r["size"]): r for r in bench_coll.onesided_rows(RUNS, "min")}
    assert rows[("allreduce", 8)]["vs_mpi"] == pytest.approx((0.5 / 4) / (0.8 / 2))
    assert rows[("allreduce", 8)]["met"] is True


def test_malformed_points_are_reported() -> None:
    bad = [run("bcast", "default", [{"size": 8, "native_s": 1e-6, "hier_s": 1e-6}])]
    with pytest.raises(WeftError, match="malformed one-sided point"):
        bench_coll.onesided_rows(bad)
    zero = [run("bcast", "default", [point(8, 0.0, 1e-6, 1e-6)])]
    with pytest.raises(WeftError, match="non-positive"):
        bench_coll.onesided_rows(zero)


def test_report_renders() -> None:
    console = Console(record=True, width=160)
    console.print(bench_coll.onesided_report({"ranks": 2, "oversubscribed": False, "runs": RUNS}))
    text = console.export_text()
    assert "tuned ring" in text and "÷ WEFT_H" in text
