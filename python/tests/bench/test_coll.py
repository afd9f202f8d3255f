"""The pure parts of `weft bench coll` / `weft project coll`: factors, the
SimGrid platforms' shape and sources (their XML: test_smpi.py), the
per-rank node list, and the reports on hand-made results."""

from __future__ import annotations


import pytest
from rich.console import Console

from weft import WeftError
from weft.bench import coll as bench_coll
from weft.models import smpi

CAL = smpi.Calibration(lat_s=0.33e-6, bw_Bps=6.9e9, source="test calibration")


def point(size: int, native: float, hier: float) -> dict[str, float]:
    return {"size": size, "native_s": native, "hier_s": hier}


def test_factors_are_native_over_hierarchical() -> None:
    assert bench_coll.factors([point(8, 4e-6, 1e-6), point(64, 1e-6, 2e-6)]) == {8: 4.0, 64: 0.5}


def test_factors_reject_malformed_points() -> None:
    with pytest.raises(WeftError, match="malformed point"):
        bench_coll.factors([{"size": 8, "native_s": 1e-6}])
    with pytest.raises(WeftError, match="malformed point"):
        bench_coll.factors([point(8, 1e-6, 0.0)])


def test_every_op_has_the_six_tuned_algorithms() -> None:
    for op in bench_coll.OPS:
        assert [number for _, number, _ in bench_coll.ALGORITHMS[op]] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("plat", smpi.platforms(CAL), ids=lambda p: p.name)
def test_platform_matches_table_1(plat: smpi.Platform) -> None:
    cores = 1
    for level in plat.levels:
        cores *= level.fanout
    assert cores == plat.cores
    assert sum(plat.switches) in (0, plat.levels[0].fanout)
    assert len(smpi.hosts(plat)) == plat.cores
    assert all(text for text in plat.sources.values())


def test_node_list_groups_consecutive_hosts_of_a_node() -> None:
    assert smpi._node_list(["n0-c0-0", "n0-c0-1", "n0-c1-0", "n1-c2-0"]) == "n0*3,n1"


def test_slurm_topology_lists_the_leaf_switches() -> None:
    plat = next(p for p in smpi.platforms(CAL) if p.name == "NTW24E5")
    assert smpi.slurm_topology(plat).splitlines() == [
        "SwitchName=leaf0 Nodes=n[0-11]", "SwitchName=leaf1 Nodes=n[12-17]",
        "SwitchName=leaf2 Nodes=n[18-21]", "SwitchName=leaf3 Nodes=n[22-23]"]


def run(platform: str, op: str, algorithm: str, factor: float) -> dict[str, object]:
    return {"op": op, "platform": platform, "config": f"tuned {algorithm}", "algorithm": algorithm,
            "nranks": 96, "points": [point(8, factor * 1e-6, 1e-6), point(1024, 1e-6, 1e-6)]}


def test_smpi_report_flags_a_linear_algorithm_below_one() -> None:
    document = {"platforms": [{"name": "SMP12E5", "cores": 96, "paper_max": {"bcast": 22}}],
                "runs": [run("SMP12E5", "bcast", "linear", 0.5), run("SMP12E5", "bcast", "binomial", 3.0)],
                "validation": [{"op": "bcast", "algorithm": "linear", "size": 8, "impl": "native",
                                "real_s": 1e-6, "sim_s": 1.2e-6, "error": 0.2}]}
    console = Console(record=True, width=200)
    console.print(bench_coll.smpi_report(document))
    text = console.export_text()
    assert "3.00×" in text and "22×" in text and "NO" in text and "+20%" in text
