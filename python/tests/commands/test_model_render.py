"""What the charts of `weft model` are made of: Fig. 17's targets and the
segments of the stacked bars."""

from __future__ import annotations

import json

import pytest

from conftest import DATA
from weft.commands import model
from weft.models import breakdown_measured, breakdown_model


@pytest.fixture(scope="module")
def paper() -> breakdown_model.Breakdown:
    return breakdown_model.preset("tx2-cx4")


def test_whatif_plot_shows_the_targets_of_fig_17(paper: breakdown_model.Breakdown) -> None:
    assert model.plot_targets(paper.model("injection"), paper.highlights) == [
        "HLP", "LLP", "misc", "HLP_post", "LLP_post", "PIO_copy", "HLP_tx_prog", "LLP_prog"]
    assert model.plot_targets(paper.model("latency"), paper.highlights) == [
        "HLP", "LLP", "I/O", "network", "HLP_post", "LLP_post", "PIO_copy", "PCIe", "Wire", "Switch",
        "RC_to_MEM", "LLP_prog", "HLP_rx_prog"]


def test_a_component_that_is_its_whole_level_is_plotted_once() -> None:
    document = json.loads((DATA / "breakdown_fixture.json").read_text())
    latency = breakdown_measured.from_measurement(document).model("latency")
    targets = model.plot_targets(latency)
    assert "I/O" in targets and "transfer" not in targets  # the shm transfer is all of I/O


def test_bars_split_a_modelled_transfer_as_fig_13(paper: breakdown_model.Breakdown) -> None:
    segments = dict(model.segments(paper.model("latency")))
    assert list(segments) == ["HLP_post", "LLP_post", "PCIe", "Network", "RC_to_MEM", "LLP_prog", "HLP_rx_prog"]
    assert segments["PCIe"] == pytest.approx(2 * 137.49)
    assert sum(segments.values()) == pytest.approx(1387.02)
