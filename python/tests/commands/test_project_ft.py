"""`weft project ft`: the message counts and the overlap model of apps/ft
on the overlap paper's clusters, the report and chart of a projection, and
(with a build that has ft_smpi and smpirun) a tiny SMPI projection end to
end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import RenderableType

from conftest import REAL_BUILD_DIR, real_program
from weft import WeftError, cli
from weft.commands import project
from weft.core import results
from weft.models import smpi

RATES = "plane=3e-10,row=2e-10,final=4e-10,evolve=2e-9,init=5e-9,twiddle=2e-8"
ELAN4 = next(fp for fp in smpi.FT_PLATFORMS if fp.name == "Itanium2/Elan4")


def test_messages_are_apps_ft_counts() -> None:
    # Class S (64^3) at 4 ranks: 16 planes and 16 destination rows a rank.
    dims = (64, 64, 64)
    assert smpi.ft_messages(dims, 4, "exchange-mpi")["forward"] == (3, 16 * 16 * 64 * 16)
    assert smpi.ft_messages(dims, 4, "slabs-rma")["inverse"] == (3 * 16, 16 * 64 * 16)
    assert smpi.ft_messages(dims, 4, "pencils-mpi")["forward"] == (3 * 16 * 16, 64 * 16)


def test_units_count_every_fft_of_a_phase() -> None:
    # 3 * 64^2 FFTs of length 64 in a 64^3 transform, over 4 ranks.
    units = smpi.ft_units((64, 64, 64), 4)["forward"]
    assert sum(units[k] for k in smpi.FT_FFT_KINDS) == pytest.approx(3 * 64 * 64 * 5 * 64 * 6 / 4)
    assert units["evolve"] == 0 and smpi.ft_units((64, 64, 64), 4)["inverse"]["evolve"] == 64 ** 3 / 4


def test_model_overlap_and_overheads() -> None:
    cost = project.parse_costs(RATES)
    dims, niter = (512, 256, 256), 20
    times = {alg: smpi.ft_model(ELAN4, dims, niter, 64, alg, cost)["time_s"] for alg in project.FT_ALGS}
    # Overlapping the port's transfer with the FFTs beats computing, then sending.
    assert times["slabs-mpi"] < times["exchange-mpi"]
    assert times["pencils-rma"] <= times["pencils-mpi"] and times["exchange-rma"] <= times["exchange-mpi"]
    # Without a network to hide there is nothing to gain, and what is left
    # of communication is its CPU overhead: a put's is less than a send's
    # and a receive's, which pencils pay for the most messages.
    fast = smpi.FtPlatform(**{**ELAN4.__dict__, "bw_Bps": 1e15, "lat_s": 0.0, "cores_per_node": 1})
    quick = {alg: smpi.ft_model(fast, dims, niter, 4, alg, cost)["time_s"] for alg in project.FT_ALGS}
    assert quick["slabs-mpi"] == pytest.approx(quick["exchange-mpi"], rel=0.05)
    assert quick["pencils-rma"] < quick["pencils-mpi"]


def test_points_respect_grid_and_nodes() -> None:
    myrinet = next(fp for fp in smpi.FT_PLATFORMS if fp.name == "x86/Myrinet")
    points = project.ft_points([myrinet], ["B"], [16, 48, 256], ["exchange-mpi"])
    # 48 does not divide 256; 256 ranks need 128 dual nodes, Millennium has 64.
    assert [p[2] for p in points] == [16]


def test_platform_shares_a_port_per_node() -> None:
    plat = smpi.ft_platform(ELAN4, 16)
    assert [(lv.name, lv.fanout) for lv in plat.levels] == [("Machine", 4), ("Core", 4)]
    assert plat.cfg["smpi/wtime"] == "0" and plat.cfg["smpi/simulate-computation"] == "no"
    with pytest.raises(WeftError, match="not enough"):
        smpi.ft_platform(ELAN4, 8192)


def test_rates_and_profiles_are_checked() -> None:
    with pytest.raises(WeftError, match="unknown kind 'fft'"):
        project.parse_costs("fft=1")
    with pytest.raises(WeftError, match="missing: row"):
        project.parse_costs("plane=1,final=1,evolve=1,init=1,twiddle=1")
    with pytest.raises(WeftError, match="no usable compute profile"):
        project.ft_here_costs({"compute_s": {"plane": 1.0}})
    profile = {"compute_s": {k: 2.0 for k in smpi.FT_KINDS}, "compute_units": {k: 4.0 for k in smpi.FT_KINDS}}
    assert project.ft_here_costs(profile) == {k: 0.5 for k in smpi.FT_KINDS}
    assert project.ft_fft_rate(profile) == 2.0


def test_model_only_projection_report_and_chart(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                render_text: Callable[[RenderableType], str]) -> None:
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    assert cli.main(["project", "ft", "--classes", "B", "--ranks", "16,64", "--platforms", "Itanium2/Elan4",
                     "--rates", RATES, "--smpi-max-messages", "0"]) == 0
    document = results.load_latest(project.FT_PROJECTION, tmp_path)
    assert document["simulated"] and len(document["rows"]) == 2 * len(project.FT_ALGS)
    speedups = project.ft_speedups(document["rows"], "model")
    assert set(speedups) == {("Itanium2/Elan4", "B", 16), ("Itanium2/Elan4", "B", 64)}
    assert all(s["exchange-mpi"] == 1.0 for s in speedups.values())
    text = render_text(project.ft_report(document))
    assert "SIMULATED" in text and "best UPC ≈1.9×" in text
    assert list(tmp_path.glob("ft-projection-*.png"))


@pytest.mark.skipif(real_program("ft_smpi", smpi=True) is None,
                    reason="no $WEFT_BUILD_DIR/libexec/weft/ft_smpi or no smpirun (SimGrid)")
def test_tiny_smpi_projection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    assert cli.main(["project", "ft", "--classes", "S", "--ranks", "4", "--platforms", "Itanium2/Elan4",
                     "--algs", "exchange-mpi,slabs-mpi,slabs-rma", "--rates", RATES, "--timeout", "120"]) == 0
    rows = results.load_latest(project.FT_PROJECTION, tmp_path)["rows"]
    assert [r["algorithm"] for r in rows] == ["exchange-mpi", "slabs-mpi", "slabs-rma"]
    assert all(r["smpi_s"] and r["smpi_s"] > 0 for r in rows), rows
    # The simulated run charges the model's computation: the two agree
    # within the model's simplifications.
    assert all(0.5 < r["model_s"] / r["smpi_s"] < 2.0 for r in rows), rows
