"""The breakdown measurement: the profile JSON weft_finalize writes, the
breakdown document's format, and the runners over the real programs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import REAL_BUILD_DIR, assert_counted_per_cycle, breakdown_document, real_program
from weft import WeftError
from weft.bench import profcost as bench_profcost
from weft.bench import breakdown as breakdown_run
from weft.core import runner
from weft.models.breakdown_measured import from_measurement

POINTS = ("HLP_post", "LLP_post", "LLP_prog", "LLP_poll", "HLP_tx_prog", "HLP_rx_prog", "busy_post", "direct_copy",
          "HLP_post_tail", "HLP_prog", "signal_add", "signal_poll")

DOCUMENT = breakdown_document(
    "shm",
    injection={"observed_ns": 100.0, "batch": 16,
               "components_ns": {"HLP_post": 10.0, "LLP_post": 50.0, "LLP_prog": 20.0, "HLP_tx_prog": 5.0,
                                 "busy_post": 0.0, "misc": 5.0}},
    latency={"observed_ns": 400.0,
             "components_ns": {"HLP_post": 20.0, "LLP_post": 80.0, "transfer": 200.0, "LLP_prog": 100.0,
                               "HLP_rx_prog": 20.0}},
    points={"HLP_post": {"count": 10, "total_ns": 100.0, "min_ns": 8.0, "median_ns": 10.0, "trimmed_mean_ns": 9.5}})


def test_model_error_is_sum_of_components_against_observed() -> None:
    errors = breakdown_run.model_error(DOCUMENT)
    assert errors["injection"] == pytest.approx(-0.10)
    assert errors["latency"] == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("section", "key", "message"),
    [
        ("injection", "batch", "injection.batch"),
        ("latency", "observed_ns", "latency.observed_ns"),
        ("timer", "overhead_ns", "timer.overhead_ns"),
    ],
)
def test_validate_names_the_missing_field(section: str, key: str, message: str) -> None:
    document = copy.deepcopy(DOCUMENT)
    del document[section][key]
    with pytest.raises(WeftError, match=message):
        breakdown_run.validate(document)


def test_validate_checks_components_and_points() -> None:
    document = copy.deepcopy(DOCUMENT)
    del document["latency"]["components_ns"]["transfer"]
    with pytest.raises(WeftError, match="latency.components_ns.transfer"):
        breakdown_run.validate(document)
    document = copy.deepcopy(DOCUMENT)
    del document["points"]["HLP_post"]["median_ns"]
    with pytest.raises(WeftError, match="points.HLP_post.median_ns"):
        breakdown_run.validate(document)
    assert breakdown_run.validate(copy.deepcopy(DOCUMENT))["path"] == "shm"


def test_measure_rejects_unknown_path_and_rank_count() -> None:
    with pytest.raises(WeftError, match="unknown path 'ib'"):
        breakdown_run.measure("ib")
    with pytest.raises(WeftError, match="2 ranks"):
        breakdown_run.measure("shm", np=4)


NEEDS_COUNTS = pytest.mark.skipif(real_program("tests/prof/test_prof_counts") is None,
                                  reason="no $WEFT_BUILD_DIR/tests/prof/test_prof_counts (build weft with `make`)")
NEEDS_BENCH = pytest.mark.skipif(real_program("weft_bench_breakdown") is None,
                                 reason="no $WEFT_BUILD_DIR/libexec/weft/weft_bench_breakdown (build weft with `make`)")


@NEEDS_COUNTS
def test_profile_written_at_finalize_counts_the_operations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("tests/prof/test_prof_counts")
    n = 500
    # WEFT_SHM=0: the puts go through UCX (LLP_post), not the direct path
    runner.run_mpi(2, [str(program), "--issue", str(n)], timeout=120,
                   env={"WEFT_PROFILE": "1", "WEFT_PROFILE_FILE": str(tmp_path / "profile-%r.json"),
                        "WEFT_SHM": "0"})
    profiles = [json.loads((tmp_path / f"profile-{rank}.json").read_text()) for rank in (0, 1)]
    for rank, profile in enumerate(profiles):
        assert profile["rank"] == rank
        assert profile["timer"]["tsc_ghz"] > 0 and profile["timer"]["overhead_ns"] > 0
        assert set(profile["points"]) == set(POINTS)
        for point in profile["points"].values():
            assert set(point) == set(breakdown_run.POINT_FIELDS)
    # rank 0 issued n puts, rank 1 n active messages, which rank 0 delivered
    for rank in (0, 1):
        assert profiles[rank]["points"]["HLP_post"]["count"] == n
        assert profiles[rank]["points"]["LLP_post"]["count"] == n
        assert profiles[rank]["points"]["HLP_post_tail"]["count"] == n
    assert profiles[0]["points"]["HLP_prog"]["count"] > 0
    assert profiles[0]["points"]["HLP_rx_prog"]["count"] == n
    assert profiles[1]["points"]["HLP_rx_prog"]["count"] == 0
    post = profiles[0]["points"]["LLP_post"]
    # what a short region costs depends on the CPU and its timer: only the
    # order of the statistics holds everywhere (a region shorter than the
    # timer's cost reads 0, never less)
    assert 0 <= post["min_ns"] <= post["median_ns"]
    # each figure is printed to 0.001 ns: the minimum's rounding, n times
    assert post["total_ns"] >= (post["min_ns"] - 0.0005) * n - 0.0005


@NEEDS_COUNTS
def test_profile_with_a_subset_and_a_bad_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("tests/prof/test_prof_counts")
    runner.run_mpi(2, [str(program), "--issue", "50"], timeout=120,
                   env={"WEFT_PROFILE": "LLP_post,direct_copy", "WEFT_PROFILE_FILE": str(tmp_path / "p-%r.json")})
    points = json.loads((tmp_path / "p-0.json").read_text())["points"]
    # the direct path (on by default between ranks of a node) copies
    assert points["direct_copy"]["count"] == 50 and points["LLP_post"]["count"] == 0
    assert points["HLP_post"]["count"] == 0 and points["HLP_post_tail"]["count"] == 0
    with pytest.raises(WeftError, match="unknown point 'LLP_pots'"):
        runner.run_mpi(2, [str(program), "--issue", "5"], timeout=120, env={"WEFT_PROFILE": "LLP_pots"})


@NEEDS_BENCH
def test_measure_shm_tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    steps: list[tuple[str, float, float]] = []
    # 2 chunks of 64 batches of 16 puts per kind of chunk
    document = breakdown_run.measure("shm", iters=2048, lat_iters=200, rounds=1,
                                     progress=lambda *step: steps.append(step))
    assert steps == [("weft_bench_breakdown over shm", 0, 1), ("weft_bench_breakdown over shm", 1, 1)]
    assert document["benchmark"] == "breakdown" and document["path"] == "shm"
    assert document["metadata"]["ranks"] == 2
    assert document["injection"]["batch"] == breakdown_run.DEFAULT_BATCH
    assert document["injection"]["observed_ns"] > 0 and document["latency"]["observed_ns"] > 0
    # every put of the chunks that select LLP_post counted once
    assert_counted_per_cycle(document, "LLP_post", 2048)
    for kind in ("injection", "latency"):
        section = document[kind]
        # the round's own timer calibration, and its model from the figures
        # the document gives (one round: the median round is that round)
        assert section["timer_overhead_ns"] > 0
        assert len(section["model_rounds_ns"]) == len(section["observed_rounds_ns"]) == 1
        assert section["model_rounds_ns"][0] == pytest.approx(sum(section["components_ns"].values()), abs=0.01)
    # the figures come from the cycles at the median speed: at least one
    assert 0 < document["injection"]["cycles_kept_rounds"][0] <= 1
    # a put's cost in the running loop, beside the caller's timing of it (a
    # difference of two loops' medians: its sign is not fixed on a busy machine)
    assert isinstance(document["injection"]["calls_ns"]["weft_put_nbi_incremental"], float)
    assert_both_methods_hold(document)


def assert_both_methods_hold(document: dict) -> None:
    """What holds of a real run on any CPU, at any speed: the self-check
    states a resolution per method, the differential components add up to
    their round's model, and the report has no negative time and no share
    above 100 %."""
    check = document["selfcheck"]
    assert check["known_ns"] > 0 and check["cycles"] > 0
    for value in check["resolution_ns"].values():
        assert value is None or value > 0
    for kind in ("injection", "latency"):
        section = document["differential"][kind]
        assert all(width is None or width >= 0 for width in section["halfwidth_ns"].values())
        round_ = section.get("round", 0)
        assert section["model_rounds_ns"][round_] == pytest.approx(sum(section["components_ns"].values()), abs=0.01)
    breakdown = from_measurement(document)
    assert [c.kind for c in breakdown.comparisons] == ["injection", "latency"]
    for comparison in breakdown.comparisons:
        assert comparison.chosen in ("trace points", "differential")
        assert all(total >= 0 for total in comparison.totals.values())
    for model in breakdown.scenarios["weft"].values():
        assert all(part.ns >= 0 for part, _ in model.leaves())
        assert all(0 <= model.share(component) <= 100 for component in model.components)


@NEEDS_BENCH
def test_measure_direct_tiny_holds_both_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    document = breakdown_run.measure("direct", iters=2048, lat_iters=64, rounds=1)
    assert set(document["differential"]["injection"]["components_ns"]) == {
        "HLP_post", "direct_copy", "LLP_prog", "HLP_prog", "misc"}
    assert_both_methods_hold(document)


@NEEDS_BENCH
def test_profcost_runs_both_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    fields = bench_profcost.measure("direct", 2, rounds=2, iters=5000, timeout=120)
    assert set(fields["ns_per_put"]) == {"prof", "noprof"}
    assert all(len(values) == 2 and min(values) > 0 for values in fields["ns_per_put"].values())
    assert len(fields["ratios"]) == 2 and fields["ratio"] > 0


def test_profcost_fields_take_the_pair_ratios() -> None:
    data = {"ns_per_put": {"prof": [10.0, 20.0, 12.0], "noprof": [9.9, 19.0, 12.0], "check": [20.0, 40.0, 24.0]},
            "time_over_prof": {"noprof": [0.99, 0.95, 1.0], "check": [2.0, 2.0, 2.5]}}
    fields = bench_profcost.fields_of(data, "direct", 1000, check=True)
    assert fields["ratios"] == [0.99, 0.95, 1.0]
    assert fields["ratio"] == 0.99  # median of the rounds' chunk-group ratios, not of the rates
    assert fields["rate_mmsgs"]["prof"] == [100.0, 50.0, 1e3 / 12.0]
    assert fields["check_ratios"] == [0.5, 0.5, 0.4] and fields["check_ratio"] == 0.5


@pytest.mark.parametrize("data", [
    {},
    {"ns_per_put": {"prof": [1.0], "noprof": [1.0]}},
    {"ns_per_put": {"prof": [1.0], "noprof": [1.0, 2.0]}, "time_over_prof": {"noprof": [1.0]}},
    {"ns_per_put": {"prof": [], "noprof": []}, "time_over_prof": {"noprof": []}},
    {"ns_per_put": {"prof": [1.0], "noprof": [1.0]}, "time_over_prof": {"noprof": [0.0]}},
    {"ns_per_put": {"prof": ["x"], "noprof": [1.0]}, "time_over_prof": {"noprof": [1.0]}},
])
def test_profcost_fields_reject_bad_output(data: dict) -> None:
    with pytest.raises(WeftError):
        bench_profcost.fields_of(data, "direct", 1000)
