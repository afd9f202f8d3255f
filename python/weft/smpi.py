"""SimGrid SMPI platforms of the hierarchical-communicators paper's machines
(Table 1) and the runs of weft's benchmarks on them.

A platform is a tree of levels, top first, each with a fan-out and the link
a group of that level uses to reach its siblings: the network (a node's
InfiniBand port), the memory interconnect (QPI, NUMAlink), the ring between
the two NUMA halves of a Haswell socket, and at the bottom each core's own
link.  The XML is one zone of SimGrid clusters, one cluster per bottom group
(the cores that share an L3/NUMA node, each with a private split-duplex
link); a message between two clusters crosses the uplink of every group it
leaves and enters below their common ancestor, so the uplinks are shared
(contention) exactly where the hardware shares them.  SimGrid's fluid
model shares each link's bandwidth among the flows crossing it.

Where the numbers come from is part of each platform (`sources`): the
bottom level is calibrated from MPI ping-pong measured on this machine
(bench/results/latbw-*.json, Open MPI ob1/vader between two cores); the
others are vendor or published figures scaled to that calibration, never
measurements of the paper's machines, which we do not have.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weft import WeftError, results, runner
from weft.runner import REPO_ROOT

PLATFORM_DIR = REPO_ROOT / "bench" / "smpi" / "platforms"
HOST_SPEED = "1Gf"   # also smpi/host-speed: code between MPI calls is injected 1:1


@dataclass(frozen=True)
class Level:
    name: str          # hwloc-like name of the groups of this level
    fanout: int        # groups of this level in one group of the level above
    lat_s: float       # one-way latency added by the level's uplink
    bw_Bps: float      # bandwidth of one group's uplink (each direction)


@dataclass(frozen=True)
class Platform:
    name: str
    cores: int
    levels: tuple[Level, ...]         # top first; the last one is the cores
    synthetic: str                    # hwloc synthetic node (WEFT_TOPO_SYNTHETIC)
    node_level: int                   # index of the level whose groups are nodes
    sources: dict[str, str] = field(default_factory=dict)
    switches: tuple[int, ...] = ()    # nodes under each leaf switch (NTW24E5)
    paper_max: dict[str, float] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return PLATFORM_DIR / f"{self.name}.xml"


@dataclass(frozen=True)
class Calibration:
    """Measured here: one-way MPI latency and large-message bandwidth
    between two cores (the intra-NUMA level), and where they come from."""
    lat_s: float
    bw_Bps: float
    source: str


def calibration() -> Calibration:
    """From the last `weft bench latbw` run over shared memory."""
    document = results.load_latest("latbw")
    for run in document.get("runs", []):
        if run.get("tls") != "shm":
            continue
        lat = [p["us"] for p in run["latency"] if p["impl"] == "mpi-block" and p["size"] == 8]
        bw = [p["MBps"] for p in run["bandwidth"] if p["impl"] == "mpi-isend" and p["size"] == 1 << 20]
        if lat and bw:
            meta = document["metadata"]
            return Calibration(lat[0] / 2 * 1e-6, bw[0] * 1e6,
                               f"weft bench latbw of {meta['date']} on {meta['hostname']} "
                               f"(MPI ping-pong 8 B: {lat[0]:.3f} us round trip; "
                               f"MPI_Isend flood 1 MiB: {bw[0]:.0f} MB/s)")
    raise WeftError("no shm run with MPI latency and bandwidth in the latbw results: "
                    "run `weft bench latbw` first")


# Vendor and published figures for the levels we cannot measure here, as
# multiples of the measured intra-socket level or absolute values.
IB_FDR_LAT_S = 1.3e-6      # Mellanox FDR InfiniBand MPI latency (Connect-IB datasheet, ~1 us + switch)
IB_FDR_BW_BPS = 6.0e9      # FDR 4x: 56 Gb/s signalling, ~6 GB/s MPI bandwidth
SWITCH_LAT_S = 0.2e-6      # one more InfiniBand switch hop (SX6036: 170-200 ns port to port)
QPI_LAT_FACTOR = 1.8       # remote-socket vs local MPI latency on 2-socket Xeon E5 (typical 1.5-2x)
QPI_BW_FACTOR = 0.8        # remote-socket MPI copy bandwidth vs local
COD_LAT_FACTOR = 1.3       # other NUMA half of a Cluster-on-Die Haswell socket
NUMALINK5_LAT_S = 1.0e-6   # SGI UV 1000 (NUMAlink 5): ~1 us remote-blade MPI latency
NUMALINK5_BW_BPS = 3.0e9   # NUMAlink 5: 7.5 GB/s bidirectional per link; MPI ~3 GB/s
NUMALINK6_LAT_S = 0.6e-6   # SGI UV 2000 (NUMAlink 6): ~0.5-0.7 us
NUMALINK6_BW_BPS = 5.0e9   # NUMAlink 6: 6.7 GB/s per direction; MPI ~5 GB/s


def platforms(cal: Calibration) -> list[Platform]:
    """Table 1's machines with the calibration of this machine."""
    core = cal.lat_s / 2, cal.bw_Bps          # private link: a message crosses two
    qpi = Level("Package", 2, cal.lat_s * (QPI_LAT_FACTOR - 1) / 2, cal.bw_Bps * QPI_BW_FACTOR)
    cod = Level("NUMANode", 2, cal.lat_s * (COD_LAT_FACTOR - 1) / 2, cal.bw_Bps)
    ib = lambda n: Level("Machine", n, IB_FDR_LAT_S / 2, IB_FDR_BW_BPS)  # noqa: E731
    src_core = f"core level: {cal.source}"
    src_node = (f"socket/NUMA levels: remote-socket latency x{QPI_LAT_FACTOR}, bandwidth "
                f"x{QPI_BW_FACTOR}; other NUMA half of a socket latency x{COD_LAT_FACTOR} "
                "(typical Xeon E5 figures, not measured)")
    src_ib = (f"network: FDR InfiniBand {IB_FDR_LAT_S * 1e6:.1f} us, {IB_FDR_BW_BPS / 1e9:.0f} GB/s "
              "per node port (vendor figures)")
    haswell = "pack:2 l3:2 [numa] core:6 pu:1"
    blade = lambda n, lat, bw: Level("Group0", n, lat / 2, bw)  # noqa: E731
    return [
        Platform("NTW10E5", 240, (ib(10), qpi, cod, Level("Core", 6, *core)), haswell, 0,
                 {"core": src_core, "node": src_node, "network": src_ib},
                 paper_max={"bcast": 21, "reduce": 39}),
        Platform("SMP20E7", 160, (blade(10, NUMALINK5_LAT_S, NUMALINK5_BW_BPS), qpi,
                                  Level("Core", 8, *core)),
                 "group:10 pack:2 [numa] l3:1 core:8 pu:1", -1,
                 {"core": src_core, "node": src_node,
                  "blades": f"NUMAlink 5 between blades: {NUMALINK5_LAT_S * 1e6:.1f} us, "
                            f"{NUMALINK5_BW_BPS / 1e9:.0f} GB/s (vendor figures)"},
                 paper_max={"bcast": 11, "reduce": 11}),
        Platform("SMP12E5", 96, (blade(6, NUMALINK6_LAT_S, NUMALINK6_BW_BPS), qpi,
                                 Level("Core", 8, *core)),
                 "group:6 pack:2 [numa] l3:1 core:8 pu:1", -1,
                 {"core": src_core, "node": src_node,
                  "blades": f"NUMAlink 6 between blades: {NUMALINK6_LAT_S * 1e6:.1f} us, "
                            f"{NUMALINK6_BW_BPS / 1e9:.0f} GB/s (vendor figures)"},
                 paper_max={"bcast": 22, "reduce": 8}),
        Platform("NTW24E5", 576, (ib(24), qpi, cod, Level("Core", 6, *core)), haswell, 0,
                 {"core": src_core, "node": src_node, "network": src_ib,
                  "switches": f"4 leaf switches of 12, 6, 4, 2 nodes (§7.4), "
                              f"{SWITCH_LAT_S * 1e6:.1f} us per extra hop (vendor figure)"},
                 switches=(12, 6, 4, 2)),
    ]


def this_machine(cal: Calibration, cores: int = 2) -> Platform:
    """This machine as SMPI sees it: one node of `cores` cores on the
    calibrated level (the validation platform)."""
    return Platform("THIS2", cores, (Level("Core", cores, cal.lat_s / 2, cal.bw_Bps),),
                    f"core:{cores} pu:1", -1, {"core": f"core level: {cal.source}"})


# ---- XML ------------------------------------------------------------------------


def _fmt_bw(bps: float) -> str:
    return f"{bps:.6g}Bps"


def _fmt_lat(seconds: float) -> str:
    return f"{seconds:.6g}s"


def platform_xml(p: Platform) -> str:
    """The SimGrid platform: a cluster per bottom group, named so that each
    host's node is visible (host names are what MPI_Get_processor_name
    returns under SMPI); an uplink per group of every other level; a
    route between every two clusters through the uplinks they leave."""
    fan = [level.fanout for level in p.levels]
    bottom = fan[-1]
    groups = 1
    for f in fan[:-1]:
        groups *= f
    # path of each bottom group: its index at every level above the cores
    paths: list[tuple[int, ...]] = []
    for g in range(groups):
        idx, rest = [], g
        for f in reversed(fan[:-1]):
            idx.append(rest % f)
            rest //= f
        paths.append(tuple(reversed(idx)))
    node_of = (lambda path: path[p.node_level]) if p.node_level >= 0 else (lambda path: 0)  # noqa: E731
    switch_of: dict[int, int] = {}
    for s, count in enumerate(p.switches):
        for _ in range(count):
            switch_of[len(switch_of)] = s
    lines = ['<?xml version="1.0"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             f"<!-- {p.name}: {p.cores} cores, levels "
             + ", ".join(f"{lv.name} x{lv.fanout}" for lv in p.levels) + ".",
             "     Generated by python/weft/smpi.py (weft project coll); sources of the numbers:"]
    lines += [f"       {key}: {text}" for key, text in p.sources.items()]
    lines += ["-->", '<platform version="4.1">',
              f'  <config><prop id="smpi/host-speed" value="{HOST_SPEED}"/></config>',
              '  <zone id="world" routing="Full">']
    for g, path in enumerate(paths):
        node = node_of(path)
        lines.append(f'    <cluster id="c{g}" prefix="n{node}-c{g}-" suffix="" radical="0-{bottom - 1}" '
                     f'speed="{HOST_SPEED}" bw="{_fmt_bw(p.levels[-1].bw_Bps)}" '
                     f'lat="{_fmt_lat(p.levels[-1].lat_s)}" router_id="r{g}"/>')
    # uplinks: one per group of each level above the cores, named by path prefix
    for depth in range(len(fan) - 1):
        level = p.levels[depth]
        for prefix in sorted({path[:depth + 1] for path in paths}):
            name = "u" + "-".join(map(str, prefix))
            lines.append(f'    <link id="{name}" bandwidth="{_fmt_bw(level.bw_Bps)}" '
                         f'latency="{_fmt_lat(level.lat_s)}" sharing_policy="SPLITDUPLEX"/>')
    if p.switches:
        lines.append(f'    <link id="spine" bandwidth="{_fmt_bw(IB_FDR_BW_BPS * 4)}" '
                     f'latency="{_fmt_lat(SWITCH_LAT_S)}" sharing_policy="SHARED"/>')
    for a in range(groups):
        for b in range(a + 1, groups):
            pa, pb = paths[a], paths[b]
            common = next(i for i in range(len(pa)) if pa[i] != pb[i])
            up = [f'<link_ctn id="u{"-".join(map(str, pa[:d + 1]))}" direction="UP"/>'
                  for d in range(len(pa) - 1, common - 1, -1)]
            down = [f'<link_ctn id="u{"-".join(map(str, pb[:d + 1]))}" direction="DOWN"/>'
                    for d in range(common, len(pb))]
            spine = []
            if p.switches and node_of(pa) != node_of(pb) and \
                    switch_of[node_of(pa)] != switch_of[node_of(pb)]:
                spine = ['<link_ctn id="spine"/>']
            lines.append(f'    <zoneRoute src="c{a}" dst="c{b}" gw_src="r{a}" gw_dst="r{b}">'
                         + "".join(up + spine + down) + "</zoneRoute>")
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)


def slurm_topology(p: Platform) -> str:
    """topology.conf of the platform's switches (NTW24E5), nodes n0, n1, ..."""
    lines, first = [], 0
    for s, count in enumerate(p.switches):
        lines.append(f"SwitchName=leaf{s} Nodes=n[{first}-{first + count - 1}]")
        first += count
    return "\n".join(lines) + "\n"


def write_platform(p: Platform) -> Path:
    PLATFORM_DIR.mkdir(parents=True, exist_ok=True)
    p.path.write_text(platform_xml(p))
    if p.switches:
        p.path.with_suffix(".topology.conf").write_text(slurm_topology(p))
    return p.path


# ---- runs -----------------------------------------------------------------------


def smpirun() -> str:
    program = shutil.which("smpirun")
    if program is None:
        raise WeftError("smpirun is not on PATH: run `make setup` (installs simgrid)")
    return program


def run(p: Platform, program: Path, args: list[str], cfg: dict[str, str], timeout: float) -> None:
    """Run program on every core of platform p under SMPI; the topology
    layer learns each node's inside from WEFT_TOPO_SYNTHETIC and the
    binding rule, its node from the simulated host name."""
    hostfile = p.path.with_suffix(".hosts")
    hosts = []
    fan = [level.fanout for level in p.levels]
    groups = p.cores // fan[-1]
    for g in range(groups):
        path, rest = [], g
        for f in reversed(fan[:-1]):
            path.append(rest % f)
            rest //= f
        path.reverse()
        node = path[p.node_level] if p.node_level >= 0 else 0
        hosts += [f"n{node}-c{g}-{i}" for i in range(fan[-1])]
    hostfile.write_text("\n".join(hosts) + "\n")
    env = {"WEFT_TOPO_SYNTHETIC": p.synthetic, "WEFT_TOPO_BIND": "by-pu",
           # host names are n<node>-c<cluster>-<core>: the node is what comes before "-c"
           "WEFT_TOPO_NODE": _node_list(hosts)}
    if p.switches:
        env["WEFT_TOPO_SLURM_CONF"] = str(p.path.with_suffix(".topology.conf"))
    # Privatisation copies the program per rank into tmpdir: a directory of
    # its own, so that simulations run side by side do not share copies.
    with tempfile.TemporaryDirectory(prefix="weft-smpi-") as tmp:
        argv = [smpirun(), "-np", str(p.cores), "-platform", str(p.path), "-hostfile", str(hostfile),
                f"--cfg=smpi/tmpdir:{tmp}", "--cfg=smpi/display-timing:0", "--cfg=smpi/bw-factor:0:1",
                "--cfg=smpi/lat-factor:0:1", "--log=root.thres:critical",
                *(f"--cfg={key}:{value}" for key, value in cfg.items()), str(program), *args]
        runner.run_program(argv, env=env, timeout=timeout)


def _node_list(hosts: list[str]) -> str:
    """WEFT_TOPO_NODE of the host list: rank r runs on hosts[r]."""
    out: list[tuple[str, int]] = []
    for host in hosts:
        node = host.split("-c")[0]
        if out and out[-1][0] == node:
            out[-1] = (node, out[-1][1] + 1)
        else:
            out.append((node, 1))
    return ",".join(f"{node}*{count}" if count > 1 else node for node, count in out)


def describe(p: Platform) -> dict[str, Any]:
    return {"name": p.name, "cores": p.cores, "synthetic": p.synthetic,
            "levels": [{"name": lv.name, "fanout": lv.fanout, "lat_s": lv.lat_s, "bw_Bps": lv.bw_Bps}
                       for lv in p.levels],
            "switches": list(p.switches), "sources": p.sources, "xml": str(p.path.relative_to(REPO_ROOT))}
