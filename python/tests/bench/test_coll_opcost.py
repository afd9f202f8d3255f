"""The reduction op's cost in the SMPI projection: the measured points and
their parser, the --op-cost argument, and simulations on a generated
2-core platform where each application of the op must cost exactly the
time of its size (linear between the given sizes), and where a malformed
cost is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from weft import WeftError
from weft.bench import coll as bench_coll
from weft.core import results, runner
from weft.models import smpi

from conftest import REAL_BUILD_DIR, real_program

CAL = smpi.Calibration(lat_s=0.2e-6, bw_Bps=5e9, source="test calibration",
                       send_overhead=((0, 0.15e-6),), recv_overhead=((0, 0.1e-6),),
                       isend_overhead=((0, 0.12e-6),))


def test_op_cost_points_are_sorted_by_size() -> None:
    points = [{"size": 1024, "native_s": 2e-7}, {"size": 8, "native_s": 7e-8}]
    assert bench_coll.op_cost_points(points) == [(8, 7e-8), (1024, 2e-7)]


@pytest.mark.parametrize("points", [
    [],
    [{"size": 8}],
    [{"size": "eight", "native_s": 1e-7}],
    [{"size": 8, "native_s": 0.0}],
    [{"size": 0, "native_s": 1e-7}],
    [{"size": 8, "native_s": 1e-7}, {"size": 8, "native_s": 2e-7}],
])
def test_op_cost_points_reject_malformed_runs(points: list[dict[str, Any]]) -> None:
    with pytest.raises(WeftError):
        bench_coll.op_cost_points(points)


def test_op_cost_argument_lists_size_and_seconds() -> None:
    assert bench_coll.op_cost_arg([(8, 7e-8), (1048576, 9.3e-5)]) == "8:7.000000e-08,1048576:9.300000e-05"


def test_projection_without_a_measured_op_cost_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(bench_coll.results, "latest_path", lambda name: tmp_path / f"{name}-latest.json")
    with pytest.raises(WeftError, match="weft project opcost"):
        bench_coll.op_cost()


needs_smpi = pytest.mark.skipif(real_program(bench_coll.BENCH_SMPI, smpi=True) is None,
                                reason=f"no smpirun or $WEFT_BUILD_DIR/{bench_coll.BENCH_SMPI}")


@pytest.fixture
def two_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> smpi.Platform:
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(runner, "build_dir", lambda: Path(REAL_BUILD_DIR or "."))
    plat = smpi.this_machine(CAL, 2)
    smpi.write_platform(plat)
    return plat


@needs_smpi
def test_each_application_of_the_op_costs_the_time_of_its_size(two_cores: smpi.Platform) -> None:
    """A linear reduce on 2 ranks applies the op once, at the root: the
    charged run takes exactly the op's time more, 1 us at 8 B and, half
    way between the two measured sizes, half way between their times."""
    cost = {"points": [(8, 1e-6), (1048576, 1e-3)], "source": "test"}
    sizes = "8,524288"
    free = bench_coll.measure_smpi(two_cores, "reduce", "linear", "ompi_basic_linear", sizes, 2, 120)
    charged = bench_coll.measure_smpi(two_cores, "reduce", "linear", "ompi_basic_linear", sizes, 2, 120, cost)
    assert charged["op_cost"] == cost and free["op_cost"] is None
    extra = {int(c["size"]): (c["native_s"] - f["native_s"], c["hier_s"] - f["hier_s"])
             for c, f in zip(charged["points"], free["points"])}
    middle = 1e-6 + (1e-3 - 1e-6) * (524288 - 8) / (1048576 - 8)
    assert extra[8] == pytest.approx((1e-6, 1e-6), rel=1e-3)
    assert extra[524288] == pytest.approx((middle, middle), rel=1e-3)


@needs_smpi
def test_bcast_is_never_charged(two_cores: smpi.Platform) -> None:
    cost = {"points": [(8, 1e-3)], "source": "test"}
    run = bench_coll.measure_smpi(two_cores, "bcast", "linear", "flattree", "8", 2, 120, cost)
    assert run["op_cost"] is None and run["points"][0]["native_s"] < 1e-4


@needs_smpi
@pytest.mark.parametrize("bad", ["64:1e-6,8:1e-6", "8:0", "8", "8:1e-6,", "0:1e-6", "8:1e-6;64:2e-6"])
def test_a_malformed_op_cost_is_refused(two_cores: smpi.Platform, tmp_path: Path, bad: str) -> None:
    program = real_program(bench_coll.BENCH_SMPI, smpi=True)
    assert program is not None
    with pytest.raises(WeftError, match="usage"):
        smpi.run(two_cores, program, ["--json", str(tmp_path / "out.json"), "--op", "reduce", "--sizes", "8",
                                      "--op-cost", bad], {}, 60)


@pytest.mark.skipif(real_program(bench_coll.BENCH) is None, reason=f"no $WEFT_BUILD_DIR/{bench_coll.BENCH}")
def test_the_real_build_measures_the_op_and_refuses_a_simulated_cost(tmp_path: Path) -> None:
    program = real_program(bench_coll.BENCH)
    assert program is not None
    output = tmp_path / "opcost.json"
    runner.run_mpi(1, [str(program), "--json", str(output), "--op", "opcost", "--sizes", "8,4096", "--iters", "5"],
                   timeout=120)
    document = json.loads(output.read_text())
    assert document["verified"] is True
    assert [size for size, _ in bench_coll.op_cost_points(document["points"])] == [8, 4096]
    with pytest.raises(WeftError, match="usage"):
        runner.run_mpi(1, [str(program), "--json", str(output), "--op", "reduce", "--op-cost", "8:1e-6"],
                       timeout=120)


def test_a_merge_keeps_the_last_run_of_each_configuration() -> None:
    def run(platform: str, op: str, algorithm: str, tag: str) -> dict[str, Any]:
        return {"platform": platform, "op": op, "algorithm": algorithm, "tag": tag}

    runs = [run("A", "bcast", "chain", "old"), run("A", "reduce", "linear", "free"),
            run("B", "reduce", "linear", "free"), run("A", "reduce", "linear", "charged")]
    assert [(r["platform"], r["op"], r["tag"]) for r in bench_coll.latest_runs(runs)] == [
        ("A", "bcast", "old"), ("A", "reduce", "charged"), ("B", "reduce", "free")]


def test_a_merge_names_each_runs_calibration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs simulated with different calibrations keep their own in the
    merged document (the platforms read whichever was latest)."""
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    paths = []
    for name, calibration, algorithm in (("a.json", "cal-old.json", "binomial"), ("b.json", "cal-new.json", "linear")):
        path = tmp_path / name
        path.write_text(json.dumps({"benchmark": "coll-smpi", "metadata": {}, "mode": "smpi", "calibration": calibration,
                                    "platforms": [{"name": "P", "cores": 4}],
                                    "runs": [{"platform": "P", "op": "bcast", "algorithm": algorithm, "points": []}]}))
        paths.append(path)
    merged = results.load(bench_coll.merge(paths))
    assert [(r["algorithm"], r["calibration"]) for r in merged["runs"]] == [
        ("binomial", "cal-old.json"), ("linear", "cal-new.json")]
    assert merged["calibration"] == "cal-new.json"
    assert merged["calibrations"] == ["cal-new.json", "cal-old.json"]
