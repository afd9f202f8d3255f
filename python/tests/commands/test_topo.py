from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from conftest import REAL_BUILD_DIR
from weft import WeftError, cli
from weft.commands import topo

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "team" / "golden"


def load(name: str) -> dict:
    return json.loads((GOLDEN / name).read_text())


def test_ranges_compacts_runs() -> None:
    assert topo.ranges([0, 1, 2, 3, 8]) == "0-3,8"
    assert topo.ranges([0, 4]) == "0,4"
    assert topo.ranges([5]) == "5"
    assert topo.ranges([]) == ""


def test_hierarchy_of_paper_example_5_1() -> None:
    root = topo.hierarchy(load("paper_5_1.json"))
    assert root.roots == [0, 8, 16, 24]
    assert [(m.type, m.index, m.num, m.members) for m in root.children] == [
        ("Machine", k, 4, list(range(8 * k, 8 * k + 8))) for k in range(4)]
    node1 = root.children[1]
    assert node1.roots == [8, 12]
    numa = node1.children[1]
    assert (numa.type, numa.members, numa.roots) == ("NUMANode", [12, 13, 14, 15], [12, 14])
    l2 = numa.children[0]
    assert (l2.type, l2.members, l2.roots) == ("L2Cache", [12, 13], [12, 13])
    assert [(c.type, c.members, c.children) for c in l2.children] == [
        ("Core", [12], []), ("Core", [13], [])]


def test_hierarchy_of_paper_example_5_2_stops_at_bindings() -> None:
    root = topo.hierarchy(load("paper_5_2.json"))
    numa0, numa1 = root.children
    assert numa1.children == [] and numa1.roots is None
    l2_0, l2_1 = numa0.children
    assert [c.members for c in l2_0.children] == [[0], [1]]
    assert l2_1.children == [] and l2_1.members == [2, 3]


def test_tree_lists_every_communicator(render_text) -> None:
    text = render_text(topo.tree(topo.hierarchy(load("paper_5_1.json"))))
    assert "MPI_COMM_WORLD  ranks 0-31  roots {0,8,16,24}" in text
    assert "Machine 3/4  ranks 24-31  roots {24,28}" in text
    assert "NUMANode 1/2  ranks 28-31  roots {28,30}" in text
    assert text.count("Core ") == 32


def test_draw_writes_a_png(tmp_path: Path) -> None:
    path = topo.draw(topo.hierarchy(load("paper_5_2.json")), tmp_path / "t.png", "5.2")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_document_is_a_weft_error() -> None:
    with pytest.raises(WeftError, match="unexpected document"):
        topo.hierarchy({"np": 2, "steps": [{"step": 1, "comms": [{"type": "Core"}]}]})


def test_options_become_settings() -> None:
    args = argparse.Namespace(example="5.1", synthetic=None, xml=None, bind="by-pu", node=None,
                              slurm_conf="/t.conf")
    assert topo.settings_env(args) == {
        "WEFT_TOPO_SYNTHETIC": topo.FIG1,
        "WEFT_TOPO_NODE": "block:node%d:8",
        "WEFT_TOPO_BIND": "by-pu",
        "WEFT_TOPO_SLURM_CONF": "/t.conf",
    }


@pytest.mark.skipif(not REAL_BUILD_DIR, reason="needs a weft build (make check sets WEFT_BUILD_DIR)")
def test_weft_topo_prints_paper_example_5_2(monkeypatch, capsys) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", REAL_BUILD_DIR)
    assert cli.main(["topo", "--example", "5.2"]) == 0
    out = capsys.readouterr().out
    assert "NUMANode 0/2  ranks 0-3  roots {0,2}" in out
    assert "L2Cache 1/2  ranks 2-3" in out


@pytest.mark.skipif(not REAL_BUILD_DIR, reason="needs a weft build (make check sets WEFT_BUILD_DIR)")
def test_weft_topo_reports_bad_settings(monkeypatch, capsys) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", REAL_BUILD_DIR)
    assert cli.main(["topo", "-n", "2", "--synthetic", "pack:2 zz:1"]) == 1
    assert "not a valid hwloc synthetic description" in capsys.readouterr().err
