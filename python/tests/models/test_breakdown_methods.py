"""The breakdown's two methods side by side (weft.models.breakdown_methods)
on documents made up here: which figures are resolved, the disagreement,
the method the model takes and why, no negative time and no share above
100 % in what is printed.  No measurement: the figures are invented, so the
tests hold on any CPU."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import breakdown_document
from weft import WeftError, cli
from weft.models import breakdown_methods as methods
from weft.models.breakdown_measured import from_measurement

# Trace points: injection sums to 40 (observed 50: -20 %), latency to 400
# (observed 410).  Differential: injection telescopes to 49.5, latency to 410.
SHM = breakdown_document(
    "shm",
    injection={"observed_ns": 50.0, "batch": 16,
               "components_ns": {"HLP_post": 6.0, "LLP_post": 20.0, "LLP_prog": 1.0, "HLP_tx_prog": -0.5,
                                 "busy_post": 0.0, "misc": 13.5}},
    latency={"observed_ns": 410.0,
             "components_ns": {"HLP_post": 20.0, "LLP_post": 80.0, "transfer": 200.0, "LLP_prog": 80.0,
                               "HLP_rx_prog": 20.0}},
)
SHM["differential"] = {
    "injection": {"components_ns": {"HLP_post": 12.0, "LLP_post": 22.0, "HLP_tx_prog": 0.5, "LLP_prog": -0.3,
                                    "misc": 15.0},
                  "halfwidth_ns": {"HLP_post": 0.4, "LLP_post": 0.5, "HLP_tx_prog": 0.1, "LLP_prog": 0.2,
                                   "misc": 0.05},
                  "model_rounds_ns": [49.2]},
    "latency": {"components_ns": {"HLP": 45.0, "LLP": 60.0, "transfer": 305.0},
                "halfwidth_ns": {"HLP": 2.0, "LLP": None, "transfer": 3.0},
                "model_rounds_ns": [410.0]},
}
SHM["selfcheck"] = {"workload": "24 dependent multiply-adds", "known_ns": 32.0, "differential_ns": 29.0,
                    "timer_ns": 22.0, "resolution_ns": {"differential": 3.0, "timer": 10.0}}


def _doc(**changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(SHM)
    document.update(changes)
    return document


def test_rows_cover_the_trace_points_and_judge_each_figure_by_its_resolution() -> None:
    comparison = from_measurement(SHM).comparisons[0]
    assert comparison.kind == "injection"
    rows = {row.name: row for row in comparison.rows}
    assert rows["HLP_post"].covers == ("HLP_post", "busy_post")
    # trace points: 6 ns is below the timer's 10 ns; Misc is a loop, judged by the differential's 3 ns
    assert not rows["HLP_post"].points.resolved and rows["misc"].points.resolved
    assert rows["HLP_post"].points.text() == "below resolution (< 10.00 ns)"
    assert rows["HLP_post"].differential.text() == "12.00"
    # a component below 0 by the timer's jitter counts 0 on the trace points' side
    assert rows["HLP_tx_prog"].points.ns == 0.0
    # a negative difference is never printed as a time
    assert rows["LLP_prog"].differential.text() == "below resolution (< 3.00 ns)"
    assert rows["LLP_prog"].differential.shown == 0.0
    assert rows["HLP_post"].disagreement == pytest.approx(6.0)
    assert not rows["HLP_post"].decided  # 6 ns apart, the timer resolves 10
    assert rows["LLP_post"].points.resolved and not rows["LLP_post"].decided


def test_the_model_takes_the_method_that_closes_the_sum_and_says_why() -> None:
    breakdown = from_measurement(SHM)
    injection, latency = breakdown.comparisons
    assert injection.totals == {"trace points": pytest.approx(40.5), "differential": pytest.approx(49.5)}
    assert injection.chosen == "differential"
    assert "within 1.0% of the observation" in injection.reason and "within 19.0%" in injection.reason
    model = breakdown.model("injection")
    assert model.total == pytest.approx(49.5)
    assert [c.name for c in model.components] == ["HLP_post", "LLP_post", "HLP_tx_prog", "LLP_prog", "misc"]
    assert model.resolution["LLP_post"] == 3.0
    # a half-width wider than the self-check's resolution is the figure's
    assert latency.chosen == "differential"
    assert {row.name: row.differential.resolution for row in latency.rows} == {"HLP": 3.0, "LLP": math.inf,
                                                                               "transfer": 3.0}
    assert any("the model takes the differential method's components" in note for note in breakdown.notes)
    assert any(note.startswith("self-check on 24 dependent multiply-adds of known cost 32.00 ns") for note in breakdown.notes)


def test_the_trace_points_stand_when_they_close_the_sum_better() -> None:
    document = _doc()
    document["differential"]["injection"]["components_ns"]["misc"] = 40.0
    breakdown = from_measurement(document)
    assert breakdown.comparisons[0].chosen == "trace points"
    assert breakdown.model("injection").title == "weft injection overhead over shm (Eq. 2)"
    # the trace points' model keeps its parts, every one of them at least 0
    assert all(leaf.ns >= 0 for leaf, _ in breakdown.model("injection").leaves())


def test_a_tie_goes_to_the_trace_points() -> None:
    assert methods.choose({"trace points": 9.0, "differential": 11.0}, 10.0)[0] == "trace points"
    assert methods.choose({"trace points": 8.0, "differential": 11.0}, 10.0)[0] == "differential"


def test_without_a_differential_section_nothing_changes() -> None:
    document = _doc()
    del document["differential"], document["selfcheck"]
    breakdown = from_measurement(document)
    assert breakdown.comparisons == () and breakdown.model("injection").resolution == {}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["differential"]["injection"]["components_ns"].pop("misc"),
     "differential.injection.components_ns must have exactly"),
    (lambda d: d["differential"]["latency"]["components_ns"].update(HLP="x"),
     "differential.latency.components_ns.HLP must be a finite number"),
    (lambda d: d["differential"]["latency"]["halfwidth_ns"].update(HLP=-1.0),
     "differential.latency.halfwidth_ns.HLP must be non-negative"),
    (lambda d: d["differential"].update(latency=[]), "differential.latency must be an object"),
    (lambda d: d["selfcheck"].update(resolution_ns=3.0), "selfcheck.resolution_ns must be an object"),
    (lambda d: d["selfcheck"]["resolution_ns"].update(timer=-2.0), "selfcheck.resolution_ns.timer must be non-negative"),
])
def test_malformed_sections_are_named(edit: Any, message: str) -> None:
    document = _doc()
    edit(document)
    with pytest.raises(WeftError, match=message):
        from_measurement(document)


def test_a_selfcheck_too_disturbed_to_bound_a_method_resolves_nothing_of_it() -> None:
    document = _doc()
    document["selfcheck"]["resolution_ns"]["timer"] = None
    rows = from_measurement(document).comparisons[1].rows
    assert all(not row.points.resolved for row in rows)
    assert rows[0].points.text() == "below resolution (< inf ns)"


@pytest.mark.parametrize(("resolution", "total", "step", "share", "text"), [
    (3.0, 50.0, 1.0, 24.4, "24%"),       # 6 % of the total: whole percent
    (10.0, 20.0, 10.0, 26.0, "30%"),     # 50 %: tens
    (0.0001, 50.0, 0.01, 24.444, "24.44%"),
    (math.inf, 50.0, 100.0, 24.0, "0%"),
    (1.0, 0.0, 100.0, 0.0, "0%"),
])
def test_shares_are_no_finer_than_the_resolution(resolution: float, total: float, step: float, share: float,
                                                 text: str) -> None:
    assert methods.share_step(resolution, total) == pytest.approx(step)
    assert methods.format_share(share, methods.share_step(resolution, total)) == text


def test_the_report_prints_no_negative_time_and_no_share_above_100(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    saved = tmp_path / "breakdown-shm.json"
    saved.write_text(json.dumps(SHM))
    assert cli.main(["model", "breakdown", "--from", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "injection by both methods" in out and "latency by both methods" in out
    assert "below resolution (< 3.00 ns)" in out and "below resolution (< 10.00 ns)" in out
    assert "the model takes the differential method" in out
    # no negative nanoseconds in a component table or a share column, no share above 100 %
    tables = out[out.index("weft injection overhead over shm (Eq. 2), differential"):out.index("CPU / I/O")]
    assert not re.search(r"\s-\d+\.\d+\s", tables)
    shares = [float(value) for value in re.findall(r"(-?\d+(?:\.\d+)?)%", tables)]
    assert shares and all(0 <= value <= 100 for value in shares)
