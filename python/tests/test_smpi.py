"""The SimGrid platforms of `weft project`: the nested zones generated from
each platform's description (nesting, host count and names, routes), the
calibration parser and the SMPI settings it gives, the validation rows, and
one simulation on a small generated platform whose one-way times must be
the sums of the links and overheads of the routes."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from weft import WeftError, bench_coll, project, smpi

from conftest import REAL_BUILD_DIR

CAL = smpi.Calibration(lat_s=0.2e-6, bw_Bps=5e9, source="test calibration",
                       send_overhead=((0, 0.15e-6), (512, 1.0e-6)), recv_overhead=((0, 0.1e-6),),
                       isend_overhead=((0, 0.12e-6),))
PLATFORMS = {p.name: p for p in smpi.platforms(CAL)}


def parse(plat: smpi.Platform) -> ET.Element:
    """The top zone (a one-level machine: its only cluster)."""
    root = ET.fromstring(smpi.platform_xml(plat).split("\n", 2)[2])
    top = root.find("zone")
    top = top if top is not None else root.find("cluster")
    assert top is not None
    return top


def zones(element: ET.Element) -> list[ET.Element]:
    """The child zones of a zone, its gateway's zone left out."""
    return [z for z in element.findall("zone") if not z.get("id", "").endswith("-gwz")]


def cluster_hosts(element: ET.Element) -> list[str]:
    out = []
    for cluster in element.iter("cluster"):
        first, last = map(int, cluster.get("radical", "").split("-"))
        out += [f"{cluster.get('prefix')}{i}{cluster.get('suffix')}" for i in range(first, last + 1)]
    return out


def test_ntw10e5_nests_node_socket_numa_core() -> None:
    top = parse(PLATFORMS["NTW10E5"])
    nodes = zones(top)
    assert [n.get("id") for n in nodes] == [f"n{k}" for k in range(10)]
    for node in nodes:
        sockets = zones(node)
        assert [s.get("id") for s in sockets] == [f"{node.get('id')}-s0", f"{node.get('id')}-s1"]
        for socket in sockets:
            numa = socket.findall("cluster")
            assert [c.get("id") for c in numa] == [f"{socket.get('id')}-m0", f"{socket.get('id')}-m1"]
            assert all(c.get("radical") == "0-5" for c in numa)
    assert len(cluster_hosts(top)) == 240


def test_smp_machines_are_one_node_of_blades() -> None:
    for name, blades, cores in (("SMP20E7", 10, 8), ("SMP12E5", 6, 8)):
        top = parse(PLATFORMS[name])
        assert top.get("id") == "n0"
        assert [b.get("id") for b in zones(top)] == [f"n0-b{i}" for i in range(blades)]
        assert all(len(b.findall("cluster")) == 2 for b in zones(top))
        assert len(cluster_hosts(top)) == blades * 2 * cores


def test_ntw24e5_has_four_leaf_switches_of_12_6_4_2_nodes() -> None:
    top = parse(PLATFORMS["NTW24E5"])
    switches = zones(top)
    assert [len(zones(s)) for s in switches] == [12, 6, 4, 2]
    assert [n.get("id") for s in switches for n in zones(s)] == [f"n{k}" for k in range(24)]
    assert len(cluster_hosts(top)) == 576


@pytest.mark.parametrize("plat", list(PLATFORMS.values()) + [smpi.this_machine(CAL, 4)], ids=lambda p: p.name)
def test_hosts_are_the_xml_hosts_in_rank_order_named_by_node(plat: smpi.Platform) -> None:
    names = [host for host, _ in smpi.hosts(plat)]
    assert names == cluster_hosts(parse(plat))
    assert len(set(names)) == plat.cores
    assert all(host.split("-")[0] == node for host, node in smpi.hosts(plat))


@pytest.mark.parametrize("plat", list(PLATFORMS.values()), ids=lambda p: p.name)
def test_every_zone_routes_each_pair_of_children_and_each_child_to_its_gateway(plat: smpi.Platform) -> None:
    def check(zone: ET.Element, has_uplink: bool) -> None:
        children = zones(zone) + zone.findall("cluster")
        if not children:
            return
        links = {link.get("id") for link in zone.findall("link")}
        assert links == {f"{c.get('id')}-up" for c in children}
        routes = zone.findall("zoneRoute")
        pairs = len(children) * (len(children) - 1) // 2
        assert len(routes) == pairs + (len(children) if has_uplink else 0)
        for route in routes:
            used = [(ctn.get("id"), ctn.get("direction")) for ctn in route.findall("link_ctn")]
            if route.get("dst", "").endswith("-gwz"):
                assert used == [(f"{route.get('src')}-up", "UP")]
            else:
                assert used == [(f"{route.get('src')}-up", "UP"), (f"{route.get('dst')}-up", "DOWN")]
        for child in zones(zone):
            check(child, True)

    check(parse(plat), False)


def test_node_list_of_nested_host_names() -> None:
    plat = PLATFORMS["NTW24E5"]
    listed = smpi._node_list([host for host, _ in smpi.hosts(plat)])
    assert listed == ",".join(f"n{k}*24" for k in range(24))


def calibration_document(**changes: Any) -> dict[str, Any]:
    points = [{"size": 8, "pingpong_s": 0.5e-6, "send_s": 0.15e-6, "isend_s": 0.12e-6, "recv_s": 0.1e-6,
               "flood_Bps": 4e7},
              {"size": 512, "pingpong_s": 0.9e-6, "send_s": 1.0e-6, "isend_s": 0.3e-6, "recv_s": 0.2e-6,
               "flood_Bps": 1e9},
              {"size": 4096, "pingpong_s": 4e-6, "send_s": 4e-6, "isend_s": 0.5e-6, "recv_s": 2e-6,
               "flood_Bps": 2e9},
              {"size": 65536, "pingpong_s": 12e-6, "send_s": 15e-6, "isend_s": 0.2e-6, "recv_s": 10e-6,
               "flood_Bps": 6e9},
              {"size": 1048576, "pingpong_s": 300e-6, "send_s": 400e-6, "isend_s": 1e-6, "recv_s": 300e-6,
               "flood_Bps": 4e9}]
    return {"mpi": "Open MPI v4.1.4", "eager_limit": 4096, "points": points,
            "metadata": {"date": "2026-11-22", "hostname": "vm"}, **changes}


def test_calibration_derives_wire_latency_bandwidth_and_eager_overheads() -> None:
    cal = smpi.parse_calibration(calibration_document())
    assert cal.lat_s == pytest.approx(0.25e-6)
    assert cal.bw_Bps == 6e9
    assert cal.send_overhead == ((0, 0.15e-6), (512, 1.0e-6))
    assert cal.recv_overhead == ((0, 0.1e-6), (512, 0.2e-6))
    assert cal.isend_overhead == ((0, 0.12e-6), (512, 0.3e-6))
    assert "vm" in cal.source and "2026-11-22" in cal.source


def test_calibration_keeps_a_floor_under_the_wire_latency() -> None:
    document = calibration_document()
    document["points"][0]["pingpong_s"] = 0.2e-6      # less than the two overheads
    assert smpi.parse_calibration(document).lat_s == 1e-8


@pytest.mark.parametrize("damage", [
    lambda d: d["points"][0].pop("send_s"),
    lambda d: d["points"][1].update(size="big"),
    lambda d: d["points"][2].update(flood_Bps=-1.0),
    lambda d: d.update(points=[p for p in d["points"] if p["size"] < 16384]),
    lambda d: d.update(points=[p for p in d["points"] if p["size"] >= 4096]),
    lambda d: d.pop("points"),
])
def test_calibration_rejects_malformed_documents(damage: Any) -> None:
    document = calibration_document()
    damage(document)
    with pytest.raises(WeftError, match="calibration"):
        smpi.parse_calibration(document, "test.json")


def test_smpi_config_is_piecewise_by_size() -> None:
    cfg = smpi.smpi_config(CAL)
    assert cfg["smpi/os"] == "0:1.5e-07:0;511:1e-06:0"
    assert cfg["smpi/or"] == "0:1e-07:0"
    assert cfg["smpi/send-is-detached-thresh"] == "4096"
    assert all(p.cfg == cfg for p in PLATFORMS.values())


def test_validation_rows_pair_sizes_and_compute_the_error() -> None:
    real = {"points": [{"size": 8, "native_s": 2e-6, "hier_s": 4e-6}, {"size": 64, "native_s": 1e-6, "hier_s": 1e-6}]}
    sim = {"points": [{"size": 8, "native_s": 3e-6, "hier_s": 2e-6}]}
    rows = bench_coll.validation_rows("bcast", "linear", real, sim, 2)
    assert [(r["impl"], round(r["error"], 6)) for r in rows] == [("native", 0.5), ("hierarchical", -0.5)]
    assert project.error_summary(rows) == {"median_abs": 0.5, "max_abs": 0.5, "count": 2}
    over = bench_coll.validation_rows("bcast", "linear", real, sim, 64)
    assert all(r["oversubscribed"] for r in over) and project.error_summary(over) == {}


def smpi_program() -> Path | None:
    if not REAL_BUILD_DIR or shutil.which("smpirun") is None:
        return None
    path = Path(REAL_BUILD_DIR) / project.CALIB_SMPI
    return path if path.is_file() and os.access(path, os.X_OK) else None


@pytest.mark.skipif(smpi_program() is None, reason="no smpirun or $WEFT_BUILD_DIR/bench/smpi/weft_smpi_calib_smpi")
def test_simulated_one_way_times_cross_the_nested_levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2 nodes x 2 sockets x 2 cores; ranks 0-1 share a socket, 0-2 share a
    node, 0-4 do not: the 8-byte one-way time is os + or + the latencies
    of the links crossed, the 1 MiB one adds size / the narrowest link."""
    monkeypatch.setattr(smpi, "PLATFORM_DIR", tmp_path)
    core, socket, node = (smpi.Level("Core", 2, 0.1e-6, 8e9), smpi.Level("Package", 2, 0.4e-6, 4e9),
                          smpi.Level("Machine", 2, 2e-6, 1e9))
    cal = smpi.Calibration(0.2e-6, 8e9, "test", ((0, 0.3e-6),), ((0, 0.2e-6),), ((0, 0.1e-6),))
    plat = smpi.Platform("TEST8", 8, (node, socket, core), "pack:2 core:2 pu:1", 0, cfg=smpi.smpi_config(cal))
    smpi.write_platform(plat)
    hosts = [h for h, _ in smpi.hosts(plat)]
    program = smpi_program()
    assert program is not None
    expected = {1: 2 * core.lat_s, 2: 2 * core.lat_s + 2 * socket.lat_s,
                4: 2 * core.lat_s + 2 * socket.lat_s + 2 * node.lat_s}
    for peer, wire in expected.items():
        order = [hosts[0], hosts[peer]] + [h for i, h in enumerate(hosts) if i not in (0, peer)]
        two = smpi.Platform(f"TEST8-{peer}", 8, plat.levels, plat.synthetic, 0, cfg=plat.cfg)
        two.path.write_text(plat.path.read_text())
        monkeypatch.setattr(smpi, "hosts", lambda p, order=order: [(h, h.split("-")[0]) for h in order])
        output = tmp_path / f"calib-{peer}.json"
        smpi.run(two, program, ["--json", str(output), "--sizes", "8,1048576", "--reps", "1"], {}, 120)
        points = {p["size"]: p for p in json.loads(output.read_text())["points"]}
        assert points[8]["pingpong_s"] == pytest.approx(0.3e-6 + 0.2e-6 + wire, rel=0.05)
        narrowest = min(level.bw_Bps for level in plat.levels[{1: 2, 2: 1, 4: 0}[peer]:])
        assert points[1048576]["pingpong_s"] == pytest.approx(wire + (1 << 20) / narrowest, rel=0.05)


def coll_test_program() -> Path | None:
    if not REAL_BUILD_DIR or shutil.which("smpirun") is None:
        return None
    path = Path(REAL_BUILD_DIR) / "bench" / "smpi" / "test_coll_smpi"
    return path if path.is_file() and os.access(path, os.X_OK) else None


@pytest.mark.skipif(coll_test_program() is None, reason="no smpirun or $WEFT_BUILD_DIR/bench/smpi/test_coll_smpi")
def test_collectives_are_correct_on_a_generated_nested_platform(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The coll correctness test (smpicc build) on 2 nodes x 2 sockets x 2
    cores, the topology layer told the nodes from the nested host names."""
    monkeypatch.setattr(smpi, "PLATFORM_DIR", tmp_path)
    plat = smpi.Platform("NESTED8", 8, (smpi.Level("Machine", 2, 1e-6, 6e9), smpi.Level("Package", 2, 0.2e-6, 5e9),
                                        smpi.Level("Core", 2, 0.1e-6, 8e9)),
                         "pack:2 core:2 pu:1", 0, cfg=smpi.smpi_config(CAL))
    smpi.write_platform(plat)
    program = coll_test_program()
    assert program is not None
    smpi.run(plat, program, [], {}, 300)
    assert smpi._node_list([h for h, _ in smpi.hosts(plat)]) == "n0*4,n1*4"
