from __future__ import annotations

from pathlib import Path

import pytest
from rich.table import Column

from weft.core import report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_advantage_of_a_rate_is_weft_over_other() -> None:
    assert report.advantage(28.5, 30.0, lower_is_better=False) == pytest.approx(0.95)


def test_advantage_of_a_latency_is_other_over_weft() -> None:
    assert report.advantage(0.5, 1.5, lower_is_better=True) == pytest.approx(3.0)


@pytest.mark.parametrize(("weft", "other"), [(None, 1.0), (1.0, None), (0.0, 1.0), (1.0, 0.0)])
def test_advantage_is_none_without_both_values(weft: float | None, other: float | None) -> None:
    assert report.advantage(weft, other, lower_is_better=True) is None
    assert report.advantage(weft, other, lower_is_better=False) is None


@pytest.mark.parametrize(
    ("value", "text"), [(0.523, "0.52"), (24.13, "24.1"), (1100.4, "1100"), (8.0, "8.00"), (None, "—")]
)
def test_fmt_number_keeps_about_three_figures(value: float | None, text: str) -> None:
    assert report.fmt_number(value) == text


def test_fmt_unit() -> None:
    assert report.fmt_unit("us") == "µs"
    assert report.fmt_unit("Mmsg/s") == "Mmsg/s"


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [(8, "8 B"), (1000, "1000 B"), (1536, "1536 B"), (4096, "4 KiB"), (1 << 20, "1 MiB"), (3 << 30, "3 GiB")],
)
def test_fmt_size(nbytes: int, text: str) -> None:
    assert report.fmt_size(nbytes) == text


def test_is_latency_by_unit() -> None:
    assert report.is_latency("us")
    assert not report.is_latency("Mmsg/s")


def test_fmt_ratio_colours_by_goal() -> None:
    met = report.fmt_ratio(0.96, goal=0.95)
    missed = report.fmt_ratio(0.94, goal=0.95)
    assert (met.plain, missed.plain) == ("0.96×", "0.94×")
    assert "green" in str(met.style) and "red" in str(missed.style)
    assert report.fmt_ratio(None).plain == "—"


def test_table_holds_title_columns_rows_and_caption(render_text) -> None:
    table = report.table(
        "Latency", ["op", Column("value", justify="right")], [["put", "0.52 µs"], ["get", "0.70 µs"]], "one run"
    )
    text = render_text(table)
    assert table.row_count == 2
    for expected in ("Latency", "op", "value", "put", "0.52 µs", "get", "0.70 µs", "one run"):
        assert expected in text


def test_grouped_bar_chart_writes_a_png_with_gaps(tmp_path: Path) -> None:
    path = report.grouped_bar_chart(
        tmp_path / "ratios.png",
        ["put rate 8 B", "get latency 8 B"],
        {"vs UCX": [0.95, 1.1], "vs MPI RMA": [1.2, None]},
        title="ratios",
        xlabel="advantage",
    )
    assert path == tmp_path / "ratios.png"
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def test_bar_chart_writes_a_png(tmp_path: Path) -> None:
    path = report.bar_chart(tmp_path / "one.png", ["a", "b", "c"], [1.0, None, 0.5], title="t", xlabel="x")
    assert path.read_bytes().startswith(PNG_SIGNATURE)
