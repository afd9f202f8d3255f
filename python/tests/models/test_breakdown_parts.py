"""Components measured as several regions (HLP_post before and after the
UCX call, HLP_tx_prog's callbacks and weft_progress's own code): the
document's *_parts_ns objects, and how the model adds them up."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from conftest import breakdown_document
from weft import WeftError
from weft.bench import breakdown as breakdown_run
from weft.models import breakdown_measured

DOCUMENT = breakdown_document(
    "shm",
    injection={"observed_ns": 40.0, "batch": 16,
               "components_ns": {"HLP_post": 9.0, "LLP_post": 20.0, "LLP_prog": 2.5, "HLP_tx_prog": 1.5,
                                 "busy_post": 0.0, "misc": 5.0},
               "HLP_post_parts_ns": {"entry": 6.5, "tail": 2.5},
               "HLP_tx_prog_parts_ns": {"callbacks": 0.25, "call": 1.25}},
    latency={"observed_ns": 350.0,
             "components_ns": {"HLP_post": 25.0, "LLP_post": 110.0, "transfer": 50.0, "LLP_prog": 150.0,
                               "HLP_rx_prog": 5.0},
             "HLP_post_parts_ns": {"entry": 18.0, "tail": 7.0}})


def test_parts_become_the_components_leaves() -> None:
    breakdown = breakdown_measured.from_measurement(DOCUMENT)
    injection = breakdown.model("injection")
    leaves = {component.name: component.per_message * scale for component, scale in injection.leaves()}
    assert leaves["HLP_post_entry"] == 6.5 and leaves["HLP_post_tail"] == 2.5
    assert leaves["HLP_tx_prog_callbacks"] == 0.25 and leaves["HLP_tx_prog_call"] == 1.25
    hlp_post = injection.find("HLP_post")
    assert hlp_post is not None and hlp_post.per_message == 9.0
    # Eq. 2: the parts add up to the same total as the components
    assert math.isclose(injection.total, 9.0 + 20.0 + 2.5 + 1.5 + 0.0 + 5.0)
    assert math.isclose(injection.error_percent, 100 * (38.0 - 40.0) / 40.0)
    latency = breakdown.model("latency")
    assert {c.name for c, _ in latency.leaves()} >= {"HLP_post_entry", "HLP_post_tail"}
    assert math.isclose(latency.total, 340.0)
    assert math.isclose(breakdown_run.model_error(DOCUMENT)["latency"], (340.0 - 350.0) / 350.0)
    # both parts are weft's own time (the HLP level of Fig. 15's CPU)
    assert math.isclose(latency.by_level()["HLP"], 30.0)


def test_without_parts_a_component_is_one_leaf() -> None:
    document = copy.deepcopy(DOCUMENT)
    del document["injection"]["HLP_post_parts_ns"]
    injection = breakdown_measured.from_measurement(document).model("injection")
    names = [component.name for component, _ in injection.leaves()]
    assert "HLP_post" in names and "HLP_post_entry" not in names
    assert math.isclose(injection.total, 38.0)


@pytest.mark.parametrize(
    ("section", "key", "parts", "message"),
    [
        ("injection", "HLP_post_parts_ns", {"entry": 6.5, "tail": 3.5}, "sum to 10 ns, not injection.components_ns.HLP_post = 9 ns"),
        ("injection", "HLP_post_parts_ns", {"entry": 9.0}, "must have exactly the parts entry, tail"),
        ("injection", "HLP_tx_prog_parts_ns", {"callbacks": 1.5, "call": "x"}, "HLP_tx_prog_parts_ns.call must be a finite number"),
        ("latency", "HLP_post_parts_ns", {"entry": 45.0, "tail": -20.0}, "latency.HLP_post_parts_ns.tail must be non-negative"),
        ("latency", "HLP_post_parts_ns", [18.0, 7.0], "must have exactly the parts"),
    ],
)
def test_bad_parts_are_refused(section: str, key: str, parts: Any, message: str) -> None:
    document = copy.deepcopy(DOCUMENT)
    document[section][key] = parts
    with pytest.raises(WeftError, match=message.replace("(", r"\(").replace(".", r"\.")):
        breakdown_measured.from_measurement(document)
