"""Each round's model against its own observation, and what a breakdown
document says of its timer (the overhead calibrated in every round, the
caller's timing of a put against a put's cost in the running loop)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from conftest import DATA
from weft import WeftError
from weft.bench import breakdown as breakdown_run
from weft.models import breakdown_document, breakdown_measured

# hand-made numbers in the shape of a measurement (not one)
DOCUMENT = json.loads((DATA / "breakdown_fixture.json").read_text())


def with_rounds(**sections: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(DOCUMENT)
    for kind, fields in sections.items():
        document[kind].update(fields)
    return document


def test_each_round_is_paired_with_its_own_model() -> None:
    document = with_rounds(injection={"observed_rounds_ns": [20.0, 40.0, 10.0],
                                      "model_rounds_ns": [18.0, 42.0, 10.0]})
    assert breakdown_document.round_errors(document, "injection") == pytest.approx([-10.0, 5.0, 0.0])
    assert breakdown_document.round_errors(document, "latency") == []
    notes = breakdown_document.round_error_notes(document)
    assert notes == ("injection, each round's model against its own observation: median error +0.00% "
                     "(rounds -10.0% to +5.0%)",)


def test_an_even_count_of_rounds_takes_the_middle_pair() -> None:
    document = with_rounds(latency={"observed_rounds_ns": [100.0, 100.0, 100.0, 100.0],
                                    "model_rounds_ns": [90.0, 98.0, 104.0, 120.0]})
    (note,) = breakdown_document.round_error_notes(document)
    assert "median error +1.00%" in note and "(rounds -10.0% to +20.0%)" in note


@pytest.mark.parametrize("fields, message", [
    ({"observed_rounds_ns": [20.0, 40.0], "model_rounds_ns": [18.0]}, "one value per round"),
    ({"observed_rounds_ns": [20.0], "model_rounds_ns": "18"}, "one value per round"),
    ({"observed_rounds_ns": [0.0], "model_rounds_ns": [18.0]}, "injection.observed_rounds_ns"),
    ({"observed_rounds_ns": [20.0], "model_rounds_ns": ["x"]}, "injection.model_rounds_ns"),
])
def test_bad_rounds_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(WeftError, match=message):
        breakdown_measured.from_measurement(with_rounds(injection=fields))


def test_the_timer_notes_name_the_rounds_overhead_and_what_the_timer_does_not_see() -> None:
    document = with_rounds(injection={"timer_overhead_ns": 13.8,
                                      "calls_ns": {"weft_put_nbi": 14.7, "weft_put_nbi_incremental": 19.1}},
                           latency={"timer_overhead_ns": 17.04})
    notes = breakdown_measured.from_measurement(document).notes
    assert ("injection: timer overhead 13.80 ns as the loop measured it (calibrated beside the components, in place of "
            "the library's)") in notes
    assert any(note.startswith("latency: timer overhead 17.04 ns") for note in notes)
    check = [note for note in notes if note.startswith("timer check")]
    assert check == ["timer check: a weft_put_nbi timed by its caller reads 14.70 ns; in the running loop a put "
                     "costs 19.10 ns (two puts per iteration less one): +4.40 ns of a call that a serialising "
                     "timer does not see"]
    # a document of before these fields has none of these notes
    assert not [note for note in breakdown_measured.from_measurement(DOCUMENT).notes
                if "round" in note or "timer check" in note]


def test_a_bad_round_overhead_is_refused() -> None:
    with pytest.raises(WeftError, match="injection.timer_overhead_ns"):
        breakdown_measured.from_measurement(with_rounds(injection={"timer_overhead_ns": -1.0}))


@pytest.mark.parametrize("rounds", [0, breakdown_run.MAX_ROUNDS + 1])
def test_rounds_out_of_range_are_refused_before_running(rounds: int) -> None:
    with pytest.raises(WeftError, match=f"rounds must be 1 to {breakdown_run.MAX_ROUNDS}, got {rounds}"):
        breakdown_run.measure("shm", rounds=rounds)


def test_the_share_of_cycles_kept_is_a_note() -> None:
    document = with_rounds(injection={"cycles_kept_rounds": [0.636, 0.95, 0.8]})
    assert ("injection: each round's figures from its cycles at the median speed, 64–95% of them"
            in breakdown_measured.from_measurement(document).notes)


@pytest.mark.parametrize("kept, message", [
    ([], "one share per round"),
    ("0.5", "one share per round"),
    ([0.5, 0.0], "injection.cycles_kept_rounds"),
    ([0.5, 1.5], "shares of 0 to 1, got 1.5"),
])
def test_bad_shares_of_cycles_are_refused(kept: Any, message: str) -> None:
    with pytest.raises(WeftError, match=message):
        breakdown_measured.from_measurement(with_rounds(injection={"cycles_kept_rounds": kept}))


def test_the_share_of_calm_chunks_is_a_note() -> None:
    document = with_rounds(injection={"chunks_calm_rounds": [0.54, 0.0, 0.65], "ranks_watched": 2})
    assert ("injection: chunks in which no rank waited for a core, 0–65% (the figures come from those)"
            in breakdown_measured.from_measurement(document).notes)


def test_calm_chunks_that_could_not_be_told_are_said() -> None:
    document = with_rounds(injection={"chunks_calm_rounds": [1.0], "ranks_watched": 0})
    assert any("could not be read here" in note for note in breakdown_measured.from_measurement(document).notes)


@pytest.mark.parametrize("calm, message", [
    ([], "chunks_calm_rounds must be a list of one share per round"),
    ([0.5, -0.1], "injection.chunks_calm_rounds must be non-negative"),
    ([0.5, 2.0], "chunks_calm_rounds are shares of 0 to 1, got 2.0"),
])
def test_bad_shares_of_calm_chunks_are_refused(calm: Any, message: str) -> None:
    with pytest.raises(WeftError, match=message):
        breakdown_measured.from_measurement(with_rounds(injection={"chunks_calm_rounds": calm}))


def test_the_differential_rounds_have_a_note_of_their_own() -> None:
    document = with_rounds(injection={"observed_rounds_ns": [20.0, 40.0, 10.0],
                                      "model_rounds_ns": [18.0, 42.0, 10.0]})
    document["differential"] = {"injection": {"model_rounds_ns": [20.0, 38.0, 11.0]}}
    assert breakdown_document.round_errors(document, "injection", "differential") == pytest.approx([0.0, -5.0, 10.0])
    notes = breakdown_document.round_error_notes(document)
    assert notes[1] == ("injection, each round's differential sum against its own observation: median error "
                        "+0.00% (rounds -5.0% to +10.0%)")
    document["differential"]["injection"]["model_rounds_ns"] = [1.0]
    with pytest.raises(WeftError, match="differential.injection.model_rounds_ns and injection.observed_rounds_ns"):
        breakdown_document.round_errors(document, "injection", "differential")
