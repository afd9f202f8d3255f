"""The SimGrid platforms of `weft project`: the nested zones generated from
each platform's description (nesting, host count and names, routes), the
calibration parser and the SMPI settings it gives, the validation rows, and
one simulation on a small generated platform whose one-way times must be
the sums of the links and overheads of the routes."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from weft import WeftError
from weft.bench import coll as bench_coll
from weft.commands import project
from weft.models import smpi

from conftest import real_program

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
    assert cal.lat_s == pytest.approx(0.25e-6 - 24 / 6e9)
    assert cal.bw_Bps == 6e9
    assert cal.send_overhead == ((0, 0.15e-6), (512, pytest.approx(1.0e-6 * cal_scale_512())))
    assert cal.recv_overhead == ((0, 0.1e-6), (512, pytest.approx(0.2e-6 * cal_scale_512())))
    assert cal.isend_overhead == ((0, 0.12e-6), (512, 0.3e-6), (4096, 0.5e-6), (65536, 0.2e-6), (1048576, 1e-6))
    assert cal.coll_entry_s == (0.0, 0.0)
    assert "vm" in cal.source and "2026-11-22" in cal.source


def cal_scale_512() -> float:
    """The share of the 512-byte stream overheads that fits in its
    ping-pong (0.9 us) beside the latency and 528 bytes at 6 GB/s."""
    return (0.9e-6 - (0.25e-6 - 24 / 6e9) - 528 / 6e9) / (1.0e-6 + 0.2e-6)


def test_eager_overheads_fit_into_the_ping_pong_and_are_kept_when_they_do() -> None:
    fits = {"pingpong_s": 2e-6, "send_s": 0.3e-6, "recv_s": 0.2e-6}
    assert smpi.eager_overheads(64, fits, 0.2e-6, 1e9) == fits
    late = {"pingpong_s": 1e-6, "send_s": 1.2e-6, "recv_s": 0.4e-6}
    fitted = smpi.eager_overheads(1000 - smpi.ENVELOPE, late, 0.2e-6, 1e10)   # wire: 0.2 + 0.1 us
    assert fitted["send_s"] / fitted["recv_s"] == pytest.approx(3.0)
    assert fitted["send_s"] + fitted["recv_s"] == pytest.approx(0.7e-6)
    assert smpi.eager_overheads(8, {"pingpong_s": 0.1e-6, "send_s": 1e-6, "recv_s": 1e-6}, 0.2e-6, 1e9)["send_s"] == 0


def wire_model(lat_s: float, bw: float, lat_factor: Any, bw_factor: Any, size: int) -> float:
    """The simulated wire time of a message under piecewise factors."""
    pick = lambda pieces: [f for start, f in pieces if start <= size][-1]  # noqa: E731
    return lat_s * pick(lat_factor) + (size + smpi.ENVELOPE) / (bw * pick(bw_factor))


def test_protocol_factors_give_back_the_wire_time_of_every_calibrated_size() -> None:
    sizes = [8, 512, 2048, 4096, 16384, 65536, 1048576]
    wire = [0.2e-6, 0.3e-6, 0.45e-6, 3.0e-6, 5.0e-6, 12e-6, 150e-6]
    lat_factor, bw_factor = smpi.protocol_factors(sizes, wire, 0.2e-6, 8e9, 4000)
    for size, expected in zip(sizes, wire):
        assert wire_model(0.2e-6, 8e9, lat_factor, bw_factor, size) == pytest.approx(expected)
    assert all(f <= 1.0 for _, f in bw_factor)                     # never above the best flood
    assert dict(lat_factor)[4096] > 10                             # the rendezvous switch is latency
    between = wire_model(0.2e-6, 8e9, lat_factor, bw_factor, 40000)
    assert 5.0e-6 < between < 12e-6                                # joined by a line


def test_protocol_factors_hold_a_floor_under_noisy_sizes() -> None:
    """A size measured faster than its smaller neighbour asks for a
    negative latency: held at MIN_FACTOR, the bandwidth still meets it."""
    sizes, wire = [8, 65536, 262144], [0.2e-6, 40e-6, 30e-6]
    lat_factor, bw_factor = smpi.protocol_factors(sizes, wire, 0.2e-6, 8e9, 4000)
    assert dict(lat_factor)[262144] >= smpi.MIN_FACTOR
    assert wire_model(0.2e-6, 8e9, lat_factor, bw_factor, 262144) == pytest.approx(30e-6)


def test_calibration_derives_the_collective_entry_from_the_call_streams() -> None:
    cal = smpi.parse_calibration(calibration_document(bcast_call_s=0.25e-6, reduce_call_s=0.1e-6))
    assert cal.coll_entry_s == (pytest.approx(0.1e-6), 0.0)       # below the send itself: nothing
    assert "collective entry bcast 0.100 us" in cal.source
    assert smpi.smpi_config(cal)[smpi.COLL_ENTRY_KEY] == "1e-07,0"


def test_calibration_takes_the_copies_to_oneself_by_size() -> None:
    document = calibration_document()
    for p in document["points"]:
        p["self_s"] = p["size"] * 1e-10 + 1e-7
    cal = smpi.parse_calibration(document)
    assert cal.self_copy[0] == (8, pytest.approx(1.008e-7)) and len(cal.self_copy) == 5
    assert smpi.smpi_config(cal)[smpi.SELF_COPY_KEY].startswith("8:1.008e-07,512:1.512e-07,")
    assert smpi.smpi_config(smpi.parse_calibration(calibration_document()))[smpi.SELF_COPY_KEY] == ""


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
    lambda d: d.update(bcast_call_s="fast", reduce_call_s=1e-7),
    lambda d: d.update(bcast_call_s=-1e-7, reduce_call_s=1e-7),
    lambda d: d.update(bcast_call_s=1e-7),
    lambda d: d["points"][0].update(self_s=1e-7),
    lambda d: [p.update(self_s=0.0) for p in d["points"]],
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
    assert cfg["smpi/send-is-detached-thresh"] == cfg["smpi/async-small-thresh"] == str(smpi.EAGER_LIMIT)
    assert cfg["smpi/cpu-threshold"] == "0"
    assert all(p.cfg == cfg for p in PLATFORMS.values())


def test_protocol_factors_are_this_machines_only() -> None:
    """The per-size factors shift by the envelope SMPI adds; the projection
    platforms keep factors of 1 (SimGrid would apply them to every link)."""
    cal = smpi.Calibration(0.2e-6, 5e9, "test", lat_factor=((0, 1.0), (4048, 20.0)),
                           bw_factor=((0, 1.0), (4048, 0.5)))
    mine = smpi.this_machine(cal, 2).cfg
    assert mine["smpi/lat-factor"] == f"0:1;{4048 + smpi.ENVELOPE - 1}:20"
    assert mine["smpi/bw-factor"] == f"0:1;{4048 + smpi.ENVELOPE - 1}:0.5"
    assert all(p.cfg["smpi/lat-factor"] == "0:1" and p.cfg["smpi/bw-factor"] == "0:1" for p in smpi.platforms(cal))


def test_run_moves_the_collective_entry_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(smpi, "smpirun", lambda: "smpirun")
    seen: dict[str, Any] = {}
    monkeypatch.setattr(smpi.runner, "run_program", lambda argv, env, timeout: seen.update(argv=argv, env=env))
    cal = smpi.Calibration(0.2e-6, 5e9, "test", coll_entry_s=(1e-7, 2e-7), self_copy=((8, 1e-7), (4096, 4e-7)))
    plat = smpi.this_machine(cal, 2)
    smpi.write_platform(plat)
    smpi.run(plat, Path("prog"), [], {}, 10)
    assert seen["env"]["WEFT_SMPI_COLL_ENTRY"] == "1e-07,2e-07"
    assert seen["env"]["WEFT_SMPI_SELF_COPY"] == "8:1e-07,4096:4e-07"
    assert not any("weft/" in arg for arg in seen["argv"])


def test_platforms_are_written_under_the_results_directory(results_dir: Path) -> None:
    ntw24 = next(p for p in smpi.platforms(CAL) if p.name == "NTW24E5")
    assert smpi.write_platform(ntw24) == results_dir / "smpi-platforms" / "NTW24E5.xml"
    assert ntw24.path.read_text() == smpi.platform_xml(ntw24)
    assert ntw24.path.with_suffix(".topology.conf").read_text() == smpi.slurm_topology(ntw24)
    assert smpi.describe(ntw24)["xml"] == "smpi-platforms/NTW24E5.xml"
    # nothing of it beside the package (the source tree, or the installed package)
    package = Path(smpi.__file__).resolve().parents[1]
    assert not list(package.parent.rglob("NTW24E5.*"))


def test_validation_rows_pair_sizes_and_compute_the_error() -> None:
    real = {"points": [{"size": 8, "native_s": 2e-6, "hier_s": 4e-6}, {"size": 64, "native_s": 1e-6, "hier_s": 1e-6}]}
    sim = {"points": [{"size": 8, "native_s": 3e-6, "hier_s": 2e-6}]}
    rows = bench_coll.validation_rows("bcast", "linear", real, sim, 2)
    assert [(r["impl"], round(r["error"], 6)) for r in rows] == [("native", 0.5), ("hierarchical", -0.5)]
    assert project.error_summary(rows) == {"median_abs": 0.5, "max_abs": 0.5, "count": 2}
    over = bench_coll.validation_rows("bcast", "linear", real, sim, 64)
    assert all(r["oversubscribed"] for r in over) and project.error_summary(over) == {}
    more = bench_coll.validation_rows("reduce", "chain", {"points": [{"size": 8, "native_s": 1e-6, "hier_s": 1e-6}]},
                                      {"points": [{"size": 8, "native_s": 0.9e-6, "hier_s": 1.2e-6}]}, 2)
    by_size = project.error_by(rows + more + over, "size")
    assert list(by_size) == ["8"] and by_size["8"]["count"] == 4
    assert by_size["8"]["median_abs"] == pytest.approx(0.35)
    assert {k: round(v["median_abs"], 6) for k, v in project.error_by(rows + more, "op", "impl").items()} == {
        "bcast/native": 0.5, "bcast/hierarchical": 0.5, "reduce/native": 0.1, "reduce/hierarchical": 0.2}


def test_fastest_launch_keeps_the_smallest_time_of_each_size_and_implementation() -> None:
    launches = [{"points": [{"size": 8, "native_s": 2e-6, "hier_s": 1e-6}, {"size": 64, "native_s": 5e-6, "hier_s": 5e-6}]},
                {"points": [{"size": 64, "native_s": 4e-6, "hier_s": 6e-6}, {"size": 8, "native_s": 3e-6, "hier_s": 0.5e-6}]}]
    assert project.fastest_launch(launches) == [{"size": 8, "native_s": 2e-6, "hier_s": 0.5e-6},
                                                {"size": 64, "native_s": 4e-6, "hier_s": 5e-6}]
    assert launches[0]["points"][0] == {"size": 8, "native_s": 2e-6, "hier_s": 1e-6}     # inputs untouched


def test_fastest_calibration_takes_each_figures_best_over_launches() -> None:
    one, two = calibration_document(bcast_call_s=2e-7, reduce_call_s=3e-7), calibration_document(bcast_call_s=1e-7,
                                                                                                   reduce_call_s=4e-7)
    two["points"][4].update(pingpong_s=100e-6, flood_Bps=3e9, send_s=500e-6)
    one["points"][0].update(recv_s=0.05e-6)
    best = project.fastest_calibration([one, two])
    assert best["points"][4]["pingpong_s"] == 100e-6 and best["points"][4]["flood_Bps"] == 4e9
    assert best["points"][4]["send_s"] == 400e-6 and best["points"][0]["recv_s"] == 0.05e-6
    assert (best["bcast_call_s"], best["reduce_call_s"], best["launches"]) == (1e-7, 3e-7, 2)
    assert two["points"][4]["pingpong_s"] == 100e-6 and one["points"][4]["pingpong_s"] == 300e-6
    assert smpi.parse_calibration(best).lat_s > 0


@pytest.mark.skipif(real_program(project.CALIB_SMPI, smpi=True) is None,
                    reason="no smpirun or $WEFT_BUILD_DIR/libexec/weft/weft_smpi_calib_smpi")
def test_simulated_one_way_times_cross_the_nested_levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2 nodes x 2 sockets x 2 cores; ranks 0-1 share a socket, 0-2 share a
    node, 0-4 do not: the 8-byte one-way time is os + or + the latencies
    of the links crossed, the 1 MiB one adds size / the narrowest link."""
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    core, socket, node = (smpi.Level("Core", 2, 0.1e-6, 8e9), smpi.Level("Package", 2, 0.4e-6, 4e9),
                          smpi.Level("Machine", 2, 2e-6, 1e9))
    cal = smpi.Calibration(0.2e-6, 8e9, "test", ((0, 0.3e-6),), ((0, 0.2e-6),), ((0, 0.1e-6),))
    plat = smpi.Platform("TEST8", 8, (node, socket, core), "pack:2 core:2 pu:1", 0, cfg=smpi.smpi_config(cal))
    smpi.write_platform(plat)
    hosts = [h for h, _ in smpi.hosts(plat)]
    program = real_program(project.CALIB_SMPI, smpi=True)
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


@pytest.mark.skipif(real_program("test_coll_smpi", smpi=True) is None,
                    reason="no smpirun or $WEFT_BUILD_DIR/libexec/weft/test_coll_smpi")
def test_collectives_are_correct_on_a_generated_nested_platform(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The coll correctness test (smpicc build) on 2 nodes x 2 sockets x 2
    cores, the topology layer told the nodes from the nested host names."""
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    plat = smpi.Platform("NESTED8", 8, (smpi.Level("Machine", 2, 1e-6, 6e9), smpi.Level("Package", 2, 0.2e-6, 5e9),
                                        smpi.Level("Core", 2, 0.1e-6, 8e9)),
                         "pack:2 core:2 pu:1", 0, cfg=smpi.smpi_config(CAL))
    smpi.write_platform(plat)
    program = real_program("test_coll_smpi", smpi=True)
    assert program is not None
    smpi.run(plat, program, [], {}, 300)
    assert smpi._node_list([h for h, _ in smpi.hosts(plat)]) == "n0*4,n1*4"


@pytest.mark.skipif(real_program(project.CALIB_SMPI, smpi=True) is None,
                    reason="no smpirun or $WEFT_BUILD_DIR/libexec/weft/weft_smpi_calib_smpi")
def test_simulated_copy_gives_back_the_calibrated_ping_pong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The factors and thresholds as SMPI reads them: on the simulated copy
    of a calibration, the ping-pong of every calibrated size, eager and
    rendezvous, is the measured one."""
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    pingpong = {8: 0.35e-6, 512: 0.7e-6, 2048: 1.0e-6, 4048: 3.5e-6, 16384: 5.3e-6, 65536: 13.5e-6}
    document = calibration_document(points=[
        {"size": size, "pingpong_s": t, "send_s": 0.08e-6, "isend_s": 0.1e-6, "recv_s": 0.12e-6,
         "flood_Bps": 8e9 if size >= 16384 else 1e9} for size, t in pingpong.items()], eager_limit=smpi.EAGER_LIMIT)
    plat = smpi.this_machine(smpi.parse_calibration(document), 2)
    smpi.write_platform(plat)
    output = tmp_path / "calib.json"
    program = real_program(project.CALIB_SMPI, smpi=True)
    assert program is not None
    smpi.run(plat, program, ["--json", str(output), "--sizes", ",".join(map(str, pingpong)), "--reps", "1"], {}, 120)
    simulated = {p["size"]: p["pingpong_s"] for p in json.loads(output.read_text())["points"]}
    assert simulated == {size: pytest.approx(t, rel=0.02) for size, t in pingpong.items()}


@pytest.mark.skipif(real_program(bench_coll.BENCH_SMPI, smpi=True) is None,
                    reason="no smpirun or $WEFT_BUILD_DIR/libexec/weft/weft_bench_coll_smpi")
def test_collective_entry_is_charged_on_every_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/smpi/entry.c: the entry cost adds itself to a 2-rank 8-byte
    broadcast and reduction (native and hierarchical, one level here); the
    copy to oneself is not charged to a reduction, which makes none; a
    malformed value stops the run with a message naming it."""
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    program = real_program(bench_coll.BENCH_SMPI, smpi=True)
    assert program is not None

    def times(entry: tuple[float, float], op: str, copy: tuple[tuple[int, float], ...] = ()) -> tuple[float, float]:
        plat = smpi.this_machine(smpi.Calibration(0.2e-6, 5e9, "test", coll_entry_s=entry, self_copy=copy), 2)
        smpi.write_platform(plat)
        output = tmp_path / f"{op}.json"
        smpi.run(plat, program, ["--json", str(output), "--op", op, "--sizes", "8", "--iters", "2"],
                 {**bench_coll.SMPI_SETUP_CFG}, 120)
        point = json.loads(output.read_text())["points"][0]
        return point["native_s"], point["hier_s"]

    for op, charged in (("bcast", 1e-6), ("reduce", 2e-6)):
        base, more = times((0.0, 0.0), op), times((1e-6, 2e-6), op)
        assert more[0] - base[0] == pytest.approx(charged, rel=0.05)
        assert more[1] - base[1] >= charged * 0.95
    # a copy to oneself is charged where weft makes one; the hierarchical
    # reduction makes none (its leaders reduce their operand straight into
    # their accumulator), so the charge changes neither time
    base, copied = times((0.0, 0.0), "reduce"), times((0.0, 0.0), "reduce", ((4, 1e-6), (16, 3e-6)))
    assert copied == (pytest.approx(base[0]), pytest.approx(base[1]))
    for key, value, name in ((smpi.COLL_ENTRY_KEY, "fast,slow", "WEFT_SMPI_COLL_ENTRY"),
                             (smpi.SELF_COPY_KEY, "8:1e-7,4:2e-7", "WEFT_SMPI_SELF_COPY"),
                             (smpi.SELF_COPY_KEY, "8:-1", "WEFT_SMPI_SELF_COPY")):
        plat = smpi.this_machine(smpi.Calibration(0.2e-6, 5e9, "test"), 2)
        plat.cfg[key] = value
        with pytest.raises(WeftError, match=f"{name}={value}"):
            smpi.run(plat, program, ["--json", str(tmp_path / "x.json"), "--op", "reduce", "--sizes", "8"], {}, 120)


def test_validate_charges_the_op_unless_told_not_to() -> None:
    """`weft project validate` simulates the reductions with the measured op
    cost, as `weft project coll` does; --no-op-cost keeps SMPI's free op."""
    from weft import cli

    parser = cli.build_parser()
    assert parser.parse_args(["project", "validate"]).op_cost is True
    assert parser.parse_args(["project", "validate", "--no-op-cost"]).op_cost is False
