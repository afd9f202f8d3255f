"""The models' arithmetic on hand-made components, and the reading of a
measured breakdown document (python/tests/breakdown_fixture.json is a test
fixture, not a measurement)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from conftest import DATA
from weft import WeftError
from weft.models.breakdown_measured import from_measurement
from weft.models.breakdown_model import (amortised, composite, injection_model, latency_model, leaf, model_error,
                                         pcie_transfer)

FIXTURE = DATA / "breakdown_fixture.json"


@pytest.fixture
def measured() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def test_eq_1_sums_post_progress_and_misc_per_message() -> None:
    model = injection_model(llp_post=leaf("LLP_post", 100, "LLP"), llp_prog=leaf("LLP_prog", 40, "LLP"),
                            misc=leaf("Misc", 10, "misc"), title="eq1")
    assert model.total == 150
    assert model.by_level() == {"LLP": 140, "misc": 10}


def test_eq_2_amortises_progress_over_the_completion_batch() -> None:
    # Post = 10 + 100, Post_prog = 20 + 64/16, Misc = 2
    model = injection_model(hlp_post=leaf("HLP_post", 10, "HLP"), llp_post=leaf("LLP_post", 100, "LLP"),
                            hlp_tx_prog=leaf("HLP_tx_prog", 20, "HLP"),
                            llp_prog=amortised("LLP_prog", 64, "LLP", 16), misc=leaf("Misc", 2, "misc"),
                            title="eq2")
    assert model.total == pytest.approx(136.0)
    assert model.find("LLP_prog").per_message == pytest.approx(4.0)
    assert model.by_category() == pytest.approx({"CPU": 136.0, "I/O": 0.0, "network": 0.0})


def test_a_batch_below_one_message_is_rejected() -> None:
    with pytest.raises(WeftError, match="batch must be at least 1 message, got 0.5"):
        amortised("LLP_prog", 64, "LLP", 0.5)


def test_modelled_transfer_is_two_pcie_plus_network_plus_rc_to_mem() -> None:
    network = composite("Network", (leaf("Wire", 200, "network"), leaf("Switch", 100, "network")))
    transfer = pcie_transfer(leaf("PCIe", 50, "I/O"), network, leaf("RC_to_MEM", 70, "I/O"))
    assert transfer.ns == 2 * 50 + 300 + 70
    model = latency_model(hlp_post=leaf("HLP_post", 1, "HLP"), llp_post=leaf("LLP_post", 2, "LLP"),
                          transfer=transfer, llp_prog=leaf("LLP_prog", 3, "LLP"),
                          hlp_rx_prog=leaf("HLP_rx_prog", 4, "HLP"), title="lat", observed_ns=500)
    assert model.total == 480
    assert model.by_category() == {"CPU": 10, "I/O": 170, "network": 300}
    assert model.error_percent == pytest.approx(-4.0)


def test_the_hlp_comes_in_pairs() -> None:
    with pytest.raises(ValueError):
        injection_model(hlp_post=leaf("HLP_post", 1, "HLP"), llp_post=leaf("LLP_post", 1, "LLP"),
                        llp_prog=leaf("LLP_prog", 1, "LLP"), misc=leaf("Misc", 1, "misc"), title="half")


@pytest.mark.parametrize(("modelled", "observed", "error"), [(105, 100, 5.0), (95, 100, -5.0), (100, 100, 0.0),
                                                             (1, None, None)])
def test_error_is_relative_to_the_observation(modelled: float, observed: float | None, error: float | None) -> None:
    assert model_error(modelled, observed) == (pytest.approx(error) if error is not None else None)


@pytest.mark.parametrize("observed", [0.0, -3.0])
def test_error_needs_a_positive_observation(observed: float) -> None:
    with pytest.raises(WeftError, match="observed time must be positive"):
        model_error(1.0, observed)


def test_measured_document_gives_the_eq_2_and_latency_models(measured: dict[str, Any]) -> None:
    breakdown = from_measurement(measured)
    injection, latency = breakdown.model("injection"), breakdown.model("latency")
    assert injection.total == 8 + 30 + 12 + 20 + 3 + 15
    assert injection.error_percent == pytest.approx(100 * (88 - 95) / 95)
    assert latency.total == 258
    assert latency.error_percent == pytest.approx(100 * (258 - 270) / 270)
    # Over shared memory the transfer goes through the memory system: I/O.
    assert latency.by_category() == {"CPU": 138, "I/O": 120, "network": 0}
    assert breakdown.source == "measured"
    assert breakdown.points["LLP_post"] == {"count": 1000, "total_ns": 30000.0, "min_ns": 25.0, "median_ns": 29.0}


def test_over_tcp_the_transfer_is_network_time(measured: dict[str, Any]) -> None:
    measured["path"] = "tcp"
    assert from_measurement(measured).model("latency").by_category()["network"] == 120


def _set(document: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    *parents, last = dotted.split(".")
    target = changed
    for key in parents:
        target = target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return changed


_DELETE = object()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("benchmark", "rma", "not a breakdown result"),
    ("path", "ib", "unknown path 'ib'"),
    ("injection", _DELETE, "no 'injection' object"),
    ("latency.components_ns", [], "latency has no 'components_ns'"),
    ("injection.components_ns.LLP_post", _DELETE, "lacks components LLP_post"),
    ("latency.components_ns.PCIe", 3.0, "unknown components PCIe"),
    ("injection.components_ns.misc", -100.0, "injection.components_ns.misc must be non-negative"),
    ("injection.components_ns.misc", "fast", "must be a finite number"),
    ("latency.components_ns.transfer", float("nan"), "must be a finite number"),
    ("injection.observed_ns", 0, "injection.observed_ns must be positive"),
    ("injection.batch", _DELETE, "injection.batch must be a finite number"),
    ("injection.batch", True, "injection.batch must be a finite number"),
    ("points", [], "'points' must be an object"),
    ("points.LLP_post.median_ns", _DELETE, "points.LLP_post.median_ns must be a finite number"),
    ("points.HLP_post", 3, "points.HLP_post.count must be a finite number"),
])
def test_malformed_measurements_are_named(measured: dict[str, Any], field: str, value: Any, message: str) -> None:
    with pytest.raises(WeftError, match=message):
        from_measurement(_set(measured, field, value))


def test_a_measurement_must_be_an_object() -> None:
    with pytest.raises(WeftError, match="must be a JSON object"):
        from_measurement([1, 2])


def test_a_point_minimum_below_zero_is_timer_jitter_not_an_error(measured: dict[str, Any]) -> None:
    # the overhead is a median: one sample shorter than it gives a minimum below 0
    jittery = _set(measured, "points.LLP_post.min_ns", -1.6)
    assert from_measurement(jittery).points["LLP_post"]["min_ns"] == -1.6
    # so can the median of a region of a few instructions, within the
    # timer's overhead (10 ns in the fixture), not beyond it
    short = _set(measured, "points.LLP_post.median_ns", -1.6)
    assert from_measurement(short).points["LLP_post"]["median_ns"] == -1.6
    with pytest.raises(WeftError, match=r"points.LLP_post.median_ns must be at least -10 \(the timer overhead "
                                        r"10 ns per sample below 0\), got -10.5"):
        from_measurement(_set(measured, "points.LLP_post.median_ns", -10.5))
    # and the total, by as much per sample
    count = measured["points"]["LLP_post"]["count"]
    below = _set(measured, "points.LLP_post.total_ns", -2.0 * count)
    assert from_measurement(below).points["LLP_post"]["total_ns"] == -2.0 * count
    with pytest.raises(WeftError, match=r"points.LLP_post.total_ns must be at least"):
        from_measurement(_set(measured, "points.LLP_post.total_ns", -10.5 * count))


def test_a_component_below_zero_within_the_timer_overhead_counts_zero(measured: dict[str, Any]) -> None:
    timed = _set(measured, "timer", {"tsc_ghz": 2.5, "overhead_ns": 13.7})
    near_zero = _set(timed, "injection.components_ns.HLP_tx_prog", -0.15)
    injection = from_measurement(near_zero).model("injection")
    # accepted (the timer's jitter), but never a negative time in the model
    assert injection.total == pytest.approx(8 + 30 + 12 + 3 + 15)
    assert injection.find("HLP_tx_prog").ns == 0.0
    with pytest.raises(WeftError, match="HLP_tx_prog must be non-negative, got -20.0 .beyond the timer overhead 13.7 ns"):
        from_measurement(_set(timed, "injection.components_ns.HLP_tx_prog", -20.0))
