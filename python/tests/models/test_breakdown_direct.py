"""The direct path's breakdown: its models' arithmetic, the checks of its
document, the commands that render it, and the benchmark run for real with
tiny counts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_BUILD_DIR, assert_counted_per_cycle, breakdown_document, real_program
from weft import WeftError, cli
from weft.bench import breakdown as breakdown_run
from weft.models import breakdown_direct, breakdown_measured, breakdown_model, whatif
from weft.models.breakdown_document import round_errors

DOCUMENT = breakdown_document(
    "direct",
    injection={"observed_ns": 10.0, "batch": 16, "timer_overhead_ns": 15.2,
               "components_ns": {"HLP_post": 4.0, "direct_copy": 1.0, "LLP_prog": 0.5, "HLP_prog": 1.0,
                                 "misc": 2.5}},
    latency={"observed_ns": 150.0, "timer_overhead_ns": 14.4,
             "components_ns": {"HLP_post": 10.0, "direct_copy": 2.0, "signal_add": 40.0, "transfer": 8.0,
                               "poll_phase": 12.0, "signal_poll": 70.0, "payload_read": 1.0},
             "probe": {"raw_observed_ns": 120.0, "raw_store_ns": 1.0, "raw_add_ns": 40.0, "raw_load_ns": 70.0,
                       "raw_read_ns": 1.0, "residual_ns": 8.0, "overlap_ns": 0.0, "transfer_ns": 8.0}},
    points={"signal_poll": {"count": 64, "total_ns": 4480.0, "min_ns": 50.0, "median_ns": 70.0,
                            "trimmed_mean_ns": 69.0}})


@pytest.fixture
def breakdown() -> breakdown_model.Breakdown:
    return breakdown_direct.from_measurement(copy.deepcopy(DOCUMENT))


def test_models_are_the_sums_of_the_components(breakdown: breakdown_model.Breakdown) -> None:
    injection = breakdown.model("injection")
    latency = breakdown.model("latency")
    # 4 + 1 + 0.5 + 1 + 2.5 = 9 against 10 observed
    assert injection.total == pytest.approx(9.0)
    assert injection.error_percent == pytest.approx(-10.0)
    # 10 + 2 + 40 + 8 + 12 + 70 + 1 = 143 against 150
    assert latency.total == pytest.approx(143.0)
    assert latency.error_percent == pytest.approx(100 * (143 - 150) / 150)
    assert [c.name for c in latency.components] == list(breakdown_direct.LATENCY_FIELDS)
    assert [c.name for c in injection.components] == list(breakdown_direct.INJECTION_FIELDS)
    # the same sums as breakdown_run's error of the raw document
    errors = breakdown_run.model_error(DOCUMENT)
    assert errors["injection"] == pytest.approx(-0.10) and errors["latency"] == pytest.approx(-7 / 150)


def test_split_puts_the_cache_line_transfer_in_network(breakdown: breakdown_model.Breakdown) -> None:
    latency = breakdown.model("latency")
    # HLP: HLP_post and the waiter's loop; LLP: the payload's store and
    # read; network: the signal's line between the cores (its add, the
    # load that sees it, the probe's residual)
    assert latency.by_level() == pytest.approx({"HLP": 22.0, "LLP": 3.0, "network": 118.0})
    assert latency.by_category() == pytest.approx({"CPU": 25.0, "I/O": 0.0, "network": 118.0})
    assert breakdown.model("injection").by_category()["network"] == 0


def test_whatif_takes_the_direct_breakdown(breakdown: breakdown_model.Breakdown) -> None:
    latency = breakdown.model("latency")
    assert whatif.speedup(latency, "transfer", 50) == pytest.approx(100 * 4 / 143)
    assert whatif.speedup(latency, "network", 100) == pytest.approx(100 * 118 / 143)
    assert whatif.speedup(breakdown.model("injection"), "direct_copy", 100) == pytest.approx(100 / 9)
    reduction, gain = whatif.projected_speedup(latency, "signal_add", 20.0)
    assert reduction == pytest.approx(50.0) and gain == pytest.approx(100 * 20 / 143)


def test_round_errors_pair_each_round_with_its_own_model() -> None:
    document = copy.deepcopy(DOCUMENT)
    document["injection"]["observed_rounds_ns"] = [10.0, 20.0, 8.0]
    document["injection"]["model_rounds_ns"] = [9.0, 21.0, 8.0]
    assert round_errors(document, "injection") == pytest.approx([-10.0, 5.0, 0.0])
    assert round_errors(document, "latency") == []
    notes = breakdown_direct.from_measurement(document).notes
    assert any("injection, each round's model" in note and "median error +0.00%" in note
               and "-10.0% to +5.0%" in note for note in notes)
    document["injection"]["model_rounds_ns"] = [9.0]
    with pytest.raises(WeftError, match="one value per round"):
        breakdown_direct.from_measurement(document)
    document["injection"]["model_rounds_ns"] = [9.0, 21.0, 8.0]
    document["injection"]["observed_rounds_ns"] = [10.0, 0.0, 8.0]
    with pytest.raises(WeftError, match="injection.observed_rounds_ns must be positive"):
        breakdown_direct.from_measurement(document)


def test_notes_name_each_rounds_calibration_beside_the_librarys() -> None:
    notes = breakdown_direct.from_measurement(copy.deepcopy(DOCUMENT)).notes
    assert "timer: TSC 2.5 GHz, overhead 13.6 ns (the library's, at the first selection)" in notes
    assert any(note.startswith("injection: timer overhead 15.20 ns") for note in notes)
    assert any(note.startswith("latency: timer overhead 14.40 ns") for note in notes)
    # a document from before the benchmark calibrated in every round
    document = copy.deepcopy(DOCUMENT)
    del document["injection"]["timer_overhead_ns"], document["latency"]["timer_overhead_ns"]
    assert not any("timer overhead" in note for note in breakdown_direct.from_measurement(document).notes)


def test_the_measured_reader_dispatches_direct_documents() -> None:
    breakdown = breakdown_measured.from_measurement(copy.deepcopy(DOCUMENT))
    assert breakdown.name == "weft-direct"
    assert breakdown.model("latency").find("signal_poll") is not None
    assert "direct" in breakdown_model.PATHS


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["latency"]["components_ns"].pop("poll_phase"), "lacks components poll_phase"),
        (lambda d: d["injection"]["components_ns"].update(LLP_post=1.0), "unknown components LLP_post"),
        (lambda d: d["latency"]["components_ns"].update(transfer=-20.0), "latency.components_ns.transfer"),
        (lambda d: d["latency"].pop("probe"), "no 'probe' object"),
        (lambda d: d["latency"]["probe"].pop("raw_load_ns"), "latency.probe.raw_load_ns"),
        (lambda d: d["latency"]["probe"].update(raw_store_ns=-14.0), "latency.probe.raw_store_ns"),
        (lambda d: d["injection"].update(observed_ns=0), "injection.observed_ns"),
        (lambda d: d.update(path="shm"), "not a direct-path breakdown"),
        (lambda d: d.pop("timer"), "no 'timer' object"),
        (lambda d: d["latency"].update(timer_overhead_ns=0), "latency.timer_overhead_ns must be positive"),
        (lambda d: d["injection"].update(timer_overhead_ns="14"), "injection.timer_overhead_ns must be a finite number"),
        (lambda d: d["points"]["signal_poll"].pop("count"), "points.signal_poll.count"),
        (lambda d: d["points"]["signal_poll"].update(total_ns=-1000.0), "points.signal_poll.total_ns"),
        (lambda d: d["points"]["signal_poll"].update(median_ns=-14.0), "points.signal_poll.median_ns"),
    ],
)
def test_malformed_documents_are_named(edit: Any, message: str) -> None:
    document = copy.deepcopy(DOCUMENT)
    edit(document)
    with pytest.raises(WeftError, match=message):
        breakdown_direct.from_measurement(document)


def test_a_component_within_the_timer_jitter_is_accepted_and_counts_zero() -> None:
    document = copy.deepcopy(DOCUMENT)
    document["latency"]["components_ns"]["payload_read"] = -0.4
    document["latency"]["probe"]["raw_store_ns"] = -0.8
    document["points"]["signal_poll"].update(total_ns=-100.0, min_ns=-1.6)  # 64 samples, 13.6 ns each
    latency = breakdown_direct.from_measurement(document).model("latency")
    # never a negative time: the model adds 0 for it
    assert latency.find("payload_read").ns == 0.0
    assert all(component.ns >= 0 for component in latency.components)


def test_measure_rejects_other_rank_counts() -> None:
    with pytest.raises(WeftError, match="2 ranks"):
        breakdown_run.measure("direct", np=3)


def test_commands_render_a_saved_direct_breakdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("COLUMNS", "200")
    saved = tmp_path / "breakdown-direct.json"
    saved.write_text(json.dumps(DOCUMENT))
    assert cli.main(["model", "breakdown", "--from", str(saved), "--path", "direct"]) == 0
    out = capsys.readouterr().out
    assert "weft-direct" in out and "signal_poll" in out and "-4.67%" in out
    assert (tmp_path / "breakdown-direct-bars.png").stat().st_size > 0
    assert cli.main(["model", "whatif", "--from", str(saved), "--target", "transfer"]) == 0
    assert "transfer" in capsys.readouterr().out
    assert (tmp_path / "breakdown-direct-whatif.png").stat().st_size > 0


@pytest.mark.skipif(real_program(breakdown_run.DIRECT_BENCH) is None,
                    reason=f"no $WEFT_BUILD_DIR/{breakdown_run.DIRECT_BENCH} (build weft with `make`)")
def test_measure_direct_tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    steps: list[tuple[str, float, float]] = []
    document = breakdown_run.measure("direct", iters=2048, lat_iters=64, rounds=1,
                                     progress=lambda *step: steps.append(step))
    assert [done for _, done, _ in steps] == [0, 1]
    assert document["path"] == "direct" and document["metadata"]["ranks"] == 2
    # one chunk kind per point selected alone: each put of its chunks counted once
    for point in ("HLP_post", "direct_copy"):
        assert_counted_per_cycle(document, point, 2048)
    # rank 0 sends and waits once per round trip of the blocks that select them
    assert document["points"]["signal_add"]["count"] == 64
    assert document["points"]["signal_poll"]["count"] == 64
    probe = document["latency"]["probe"]
    assert probe["raw_observed_ns"] > 0 and probe["raw_add_ns"] > 0 and probe["raw_load_ns"] > 0
    assert document["latency"]["observed_ns"] > 0 and document["injection"]["observed_ns"] > 0
    # the timer calibrated in the round, by both sections
    for kind in ("injection", "latency"):
        assert document[kind]["timer_overhead_ns"] > 0
        assert len(document[kind]["timer_overhead_rounds_ns"]) == 1
    assert "timer_overhead_now_ns" not in document["injection"]
    # the timer check and the cycles at the median speed, as over UCX
    assert isinstance(document["injection"]["calls_ns"]["weft_put_nbi_incremental"], float)
    assert 0 < document["injection"]["cycles_kept_rounds"][0] <= 1
    for kind in ("injection", "latency"):
        assert len(round_errors(document, kind)) == 1
    model = breakdown_measured.from_measurement(document)
    assert model.model("latency").total > 0
