"""What-if speedups: linear in the reduction, zero at 0 %, monotonic, and
bad reductions or targets are named."""

from __future__ import annotations

import pytest

from weft import WeftError
from weft.models import breakdown_model, whatif
from weft.models.breakdown_model import composite, injection_model, leaf


@pytest.fixture
def model() -> breakdown_model.Model:
    # total 200: HLP 50 (HLP_post 20 + HLP_tx_prog 30), LLP 140, misc 10
    return injection_model(
        hlp_post=leaf("HLP_post", 20, "HLP"),
        llp_post=composite("LLP_post", (leaf("PIO_copy", 60, "LLP"), leaf("setup", 40, "LLP"))),
        hlp_tx_prog=leaf("HLP_tx_prog", 30, "HLP"),
        llp_prog=leaf("LLP_prog", 40, "LLP"),
        misc=leaf("Misc", 10, "misc"),
        title="hand-made",
    )


def test_speedup_is_time_saved_over_baseline(model: breakdown_model.Model) -> None:
    assert whatif.speedup(model, "HLP", 50) == pytest.approx(100 * 25 / 200)
    assert whatif.speedup(model, "PIO_copy", 100) == pytest.approx(30.0)
    assert whatif.speedup(model, "CPU", 100) == pytest.approx(100.0)
    assert whatif.speedup(model, "llp_post", 10) == pytest.approx(5.0)  # names are case-insensitive


def test_no_reduction_no_speedup(model: breakdown_model.Model) -> None:
    for name in whatif.target_names(model):
        assert whatif.speedup(model, name, 0) == 0


def test_curves_rise_with_the_reduction(model: breakdown_model.Model) -> None:
    for target, values in whatif.curves(model, reductions=[10, 20, 50, 90]).values():
        assert values == sorted(values)
        assert values[0] < values[-1] or target.ns == 0


def test_a_level_is_the_sum_of_its_leaves(model: breakdown_model.Model) -> None:
    assert whatif.target(model, "LLP").ns == 140
    assert whatif.target(model, "HLP").ns == 50
    assert whatif.target_names(model)[:3] == ["HLP", "LLP", "misc"]
    assert "Misc" not in whatif.target_names(model)  # the level misc already is all of it


def test_projection_reports_reduction_and_speedup(model: breakdown_model.Model) -> None:
    assert whatif.projected_speedup(model, "PIO_copy", 15) == pytest.approx((75.0, 22.5))


@pytest.mark.parametrize("reduction", [-10, 100.5, 250, float("nan"), True])
def test_out_of_range_reductions_are_rejected(model: breakdown_model.Model, reduction: float) -> None:
    with pytest.raises(WeftError, match="a reduction must be a percentage between 0 and 100"):
        whatif.speedup(model, "HLP", reduction)


@pytest.mark.parametrize(("text", "message"), [("10,x", "got 'x'"), ("10,120", "got 120.0"), ("", "got ''")])
def test_bad_reduction_lists_are_named(text: str, message: str) -> None:
    with pytest.raises(WeftError, match=message):
        whatif.parse_reductions(text)


def test_reduction_list_parses() -> None:
    assert whatif.parse_reductions("10, 30,90") == (10.0, 30.0, 90.0)


def test_unknown_target_lists_the_known_ones(model: breakdown_model.Model) -> None:
    with pytest.raises(WeftError, match="no component 'Switch' in hand-made: choose one of HLP, LLP, misc"):
        whatif.speedup(model, "Switch", 10)


@pytest.mark.parametrize("new_ns", [-1, 61, float("inf")])
def test_projection_must_be_between_zero_and_the_current_time(model: breakdown_model.Model, new_ns: float) -> None:
    with pytest.raises(WeftError, match="PIO_copy takes 60 ns: a projected time must be between 0 and that"):
        whatif.projected_speedup(model, "PIO_copy", new_ns)
