"""SimGrid SMPI platforms of the hierarchical-communicators paper's machines
(Table 1) and of this machine, and the runs of weft's benchmarks on them.

A platform is one Python description -- a tree of levels, top first, each
with a fan-out and the link a group of that level uses to reach its
siblings (a node's InfiniBand port, a blade's NUMAlink, a socket's QPI, the
ring between the two NUMA halves of a Haswell socket, each core's own link)
-- from which the XML is generated: <results>/smpi-platforms/<name>.xml
(with its .hosts and, for a platform with switches, its .topology.conf),
written again by every `weft project` run under the results directory
(weft.core.results), never into the source tree.  Each group is a nested SimGrid
zone: node zone > socket zones > NUMA zones > cores, the bottom group a
<cluster> of cores with private split-duplex links.  A zone routes between
its children through their uplinks (routing="Full", one zoneRoute per pair
and one to the zone's gateway router), so a message crosses the uplink of
every group it leaves and enters below the common ancestor, and SimGrid's
fluid model shares each uplink among the flows crossing it (contention
where the hardware shares a port or an interconnect).  NTW24E5 adds a zone
per leaf switch (12, 6, 4 and 2 nodes) under a spine.

The numbers: the core level, the per-message overheads (smpi/os,
smpi/or, smpi/ois, piecewise by size), the eager limit, the cost of
entering a collective and of a copy to oneself (charged by
tools/smpi/entry.c), and -- for the simulated copy of this machine only --
per-size latency and bandwidth factors come from `weft project calibrate`,
MPI measured between two cores of this machine
(smpi-calibration-*.json in the results directory); the levels above are vendor or
published figures (below), never measurements of the paper's machines,
which we do not have.  Each platform's `sources` says which is which.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weft import WeftError
from weft.core import results, runner

HOST_SPEED = "1Gf"   # also smpi/host-speed: code between MPI calls is injected 1:1
CALIBRATION = "smpi-calibration"   # smpi-calibration-*.json in the results directory
# Open MPI's shared-memory eager limit, in message bytes: btl_vader_eager_limit
# (4096) less the fragment and match headers.  `weft project calibrate`
# sees 4032-byte messages sent eagerly here and 4048-byte ones by the
# rendezvous protocol (ping-pong 1.2-1.4 us, then 1.7-3.3 us).  A smaller send
# completes without the receiver; SMPI's counterpart is
# smpi/send-is-detached-thresh (sizes below it), and only such a send pays
# smpi/os, only such a receive smpi/or.
EAGER_LIMIT = 4040

# The first letter(s) of a group's name in host and zone names, by level.
TAGS = {"Switch": "sw", "Machine": "n", "Group0": "b", "Package": "s", "NUMANode": "m", "Core": "c"}


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
    node_level: int                   # index of the level whose groups are nodes (-1: one node)
    sources: dict[str, str] = field(default_factory=dict)
    switches: tuple[int, ...] = ()    # nodes under each leaf switch (NTW24E5)
    paper_max: dict[str, float] = field(default_factory=dict)
    switch_uplink: Level | None = None  # a leaf switch's link to the spine
    cfg: dict[str, str] = field(default_factory=dict)   # SMPI settings of the calibration

    @property
    def path(self) -> Path:
        return platform_dir() / f"{self.name}.xml"


@dataclass(frozen=True)
class Calibration:
    """Measured here: one-way MPI latency and large-message bandwidth
    between two cores (the bottom level), the per-message overheads by
    size, the protocol's per-size latency and bandwidth factors, the CPU
    cost of entering a collective, and where they come from.  Piecewise
    figures are [(size, value), ...] from size 0 up: the value of the
    largest size <= the message's."""
    lat_s: float
    bw_Bps: float
    source: str
    send_overhead: tuple[tuple[int, float], ...] = ()    # smpi/os
    recv_overhead: tuple[tuple[int, float], ...] = ()    # smpi/or
    isend_overhead: tuple[tuple[int, float], ...] = ()   # smpi/ois
    eager_limit: int = EAGER_LIMIT
    lat_factor: tuple[tuple[int, float], ...] = ()       # smpi/lat-factor (this machine only)
    bw_factor: tuple[tuple[int, float], ...] = ()        # smpi/bw-factor (this machine only)
    coll_entry_s: tuple[float, float] = (0.0, 0.0)       # MPI_Bcast, MPI_Reduce (tools/smpi/entry.c)
    self_copy: tuple[tuple[int, float], ...] = ()        # MPI_Sendrecv to oneself (tools/smpi/entry.c)


# SMPI sends an envelope of 16 bytes with every message (tag, source,
# communicator): the network carries size + 16.
ENVELOPE = 16
# A protocol factor never goes below this (a latency factor of 0 would
# make the wire free; noise between neighbouring sizes can ask for it).
MIN_FACTOR = 0.05
# The environment variables tools/smpi/entry.c reads; in a platform's cfg
# they are carried under these pseudo-keys, which smpi.run() moves to the
# environment.
COLL_ENTRY_KEY = "weft/coll-entry"
SELF_COPY_KEY = "weft/self-copy"
ENTRY_ENV = {COLL_ENTRY_KEY: "WEFT_SMPI_COLL_ENTRY", SELF_COPY_KEY: "WEFT_SMPI_SELF_COPY"}


def _piecewise(points: tuple[tuple[int, float], ...]) -> str:
    """SMPI's piecewise syntax THRESHOLD:SECONDS:PER_BYTE;..., constant per
    piece.  SMPI applies a piece to the sizes above its threshold, so the
    value measured at size S starts at threshold S - 1."""
    return ";".join(f"{max(size - 1, 0)}:{seconds:.6g}:0" for size, seconds in points) or "0:0:0"


def _factors(points: tuple[tuple[int, float], ...]) -> str:
    """SMPI's factor syntax THRESHOLD:FACTOR;...  SMPI looks a factor up by
    the bytes on the wire, size + ENVELOPE, above the threshold: the factor
    measured at size S starts at threshold S + ENVELOPE - 1."""
    return ";".join(f"{size + ENVELOPE - 1 if size else 0}:{factor:.6g}" for size, factor in points) or "0:1"


def smpi_config(cal: Calibration) -> dict[str, str]:
    """The --cfg settings of a calibration that hold on every platform: the
    overheads, the eager limit (a smaller send completes without the
    receiver and starts moving at once, smpi/async-small-thresh), and no
    injected computation but the collective entry and the copies to
    oneself (tools/smpi/entry.c, whose sub-microsecond charges
    smpi/cpu-threshold 0 keeps): the code
    between MPI calls takes no simulated time (measured on this shared
    machine it would be noise), so a simulation is deterministic.
    Factors of 1: the links carry the calibrated figures themselves; the
    per-size protocol factors are this machine's (protocol_config)."""
    return {"smpi/simulate-computation": "no", "smpi/os": _piecewise(cal.send_overhead),
            "smpi/or": _piecewise(cal.recv_overhead), "smpi/ois": _piecewise(cal.isend_overhead),
            "smpi/send-is-detached-thresh": str(cal.eager_limit),
            "smpi/async-small-thresh": str(cal.eager_limit), "smpi/cpu-threshold": "0",
            "smpi/bw-factor": "0:1", "smpi/lat-factor": "0:1",
            COLL_ENTRY_KEY: f"{cal.coll_entry_s[0]:.6g},{cal.coll_entry_s[1]:.6g}",
            SELF_COPY_KEY: ",".join(f"{size}:{seconds:.6g}" for size, seconds in cal.self_copy)}


def protocol_config(cal: Calibration) -> dict[str, str]:
    """smpi_config plus the per-size latency and bandwidth factors of this
    machine's shared-memory transport (its rendezvous switch, its copies).
    SimGrid applies a factor to every link of a platform, so only the
    simulated copy of this machine takes them: on the projection platforms
    they would also multiply the vendor figures of the upper levels."""
    return {**smpi_config(cal), "smpi/bw-factor": _factors(cal.bw_factor),
            "smpi/lat-factor": _factors(cal.lat_factor)}


def protocol_factors(sizes: list[int], wire_s: list[float], lat_s: float, bw_Bps: float,
                     eager_limit: int) -> tuple[tuple[tuple[int, float], ...], tuple[tuple[int, float], ...]]:
    """(lat_factor, bw_factor) pieces that make the simulated wire time of
    a message, lat_s * lat_factor + (size + ENVELOPE) / (bw_Bps * bw_factor),
    equal the measured wire_s at every calibrated size (pure).

    From each size to the next on the same side of the eager limit the
    measured times are joined by a line: its slope gives the bandwidth
    factor (at most 1: the link's bandwidth is the best flood measured, no
    size moves data faster), its value at the size the latency factor.  A piece whose next
    size is on the other side (or the last one) keeps the previous piece's
    bandwidth factor.  A factor that would fall below MIN_FACTOR (noise
    between neighbouring sizes) is held there and the other one set so that
    the time at the size is still met."""
    lat_pieces: list[tuple[int, float]] = []
    bw_pieces: list[tuple[int, float]] = []
    bwf = 1.0
    for i, (size, wire) in enumerate(zip(sizes, wire_s)):
        nxt = i + 1 < len(sizes) and (sizes[i + 1] < eager_limit) == (size < eager_limit)
        if nxt and wire_s[i + 1] > wire:
            bwf = min(max((sizes[i + 1] - size) / (wire_s[i + 1] - wire) / bw_Bps, MIN_FACTOR), 1.0)
        latf = (wire - (size + ENVELOPE) / (bw_Bps * bwf)) / lat_s
        if latf < MIN_FACTOR:
            latf = MIN_FACTOR
            bwf = (size + ENVELOPE) / max(wire - lat_s * latf, 1e-12) / bw_Bps
        lat_pieces.append((0 if i == 0 else size, latf))
        bw_pieces.append((0 if i == 0 else size, bwf))
    return tuple(lat_pieces), tuple(bw_pieces)


def eager_overheads(size: int, figures: dict[str, float], lat_s: float, bw_Bps: float) -> dict[str, float]:
    """The figures of an eager size with the send and receive overheads
    fitted into its ping-pong (pure).  The time per MPI_Send of a stream
    also counts waiting for the receiver to hand shared-memory fragments
    back (flow control: beyond a few hundred bytes it exceeds the one-way
    time itself), so both overheads are scaled down, in proportion, until
    one message's os + or leaves the wire at least the latency and the
    size at the full bandwidth."""
    budget = figures["pingpong_s"] - lat_s - (size + ENVELOPE) / bw_Bps
    spent = figures["send_s"] + figures["recv_s"]
    if spent <= budget:
        return figures
    scale = max(budget, 0.0) / spent
    return {**figures, "send_s": figures["send_s"] * scale, "recv_s": figures["recv_s"] * scale}


def parse_calibration(document: dict[str, Any], origin: str = "") -> Calibration:
    """The Calibration of a `weft project calibrate` document (pure: no I/O).

    One-way latency of the wire = 8-byte ping-pong minus the send and
    receive overheads at that size and its bytes on the wire (at least 10
    ns); bandwidth = the best
    MPI_Isend flood of 16 KiB and more; overheads = the measured times in
    MPI_Send / MPI_Recv for the sizes sent eagerly (SMPI charges them to
    eager messages only), fitted into their ping-pong (eager_overheads),
    in MPI_Isend for every size; protocol factors =
    those that give back the ping-pong at every size (protocol_factors),
    the wire's share being the ping-pong minus the overheads SMPI charges
    at that size; collective entry = the time per call of the 8-byte
    broadcast / reduction streams minus the eager send they include (0
    when a document has no such probe); copies to oneself = self_s by
    size (none when the document has none)."""
    try:
        points = sorted(((int(p["size"]), {k: float(p[k]) for k in
                                           ("pingpong_s", "send_s", "isend_s", "recv_s", "flood_Bps")})
                         for p in document["points"]), key=lambda item: item[0])
        limit = int(document.get("eager_limit", EAGER_LIMIT))
        calls = [float(document[key]) for key in ("bcast_call_s", "reduce_call_s") if key in document]
        copies = [(int(p["size"]), float(p["self_s"])) for p in document["points"] if "self_s" in p]
    except (KeyError, TypeError, ValueError) as error:
        raise WeftError(f"malformed calibration {origin}: {error!r}") from None
    eager = [(size, f) for size, f in points if size < limit]
    if not eager or not any(size >= 16384 for size, _ in points):
        raise WeftError(f"calibration {origin} needs sizes below {limit} B and at least one >= 16 KiB")
    if any(v <= 0 for _, f in points for v in f.values()) or any(v <= 0 for v in calls + [t for _, t in copies]):
        raise WeftError(f"calibration {origin} has a non-positive time or bandwidth")
    if len(calls) == 1:
        raise WeftError(f"calibration {origin} has one of bcast_call_s / reduce_call_s without the other")
    if copies and len(copies) != len(points):
        raise WeftError(f"calibration {origin} has self_s at some sizes only")
    small = eager[0][1]
    bw = max(f["flood_Bps"] for size, f in points if size >= 16384)
    lat = max(small["pingpong_s"] - small["send_s"] - small["recv_s"] - (eager[0][0] + ENVELOPE) / bw, 1e-8)

    def pieces(key: str, which: list[tuple[int, dict[str, float]]]) -> tuple[tuple[int, float], ...]:
        return tuple((0 if i == 0 else size, f[key]) for i, (size, f) in enumerate(which))

    eager = [(size, eager_overheads(size, f, lat, bw)) for size, f in eager]
    wire = [f["pingpong_s"] - (f["send_s"] + f["recv_s"] if size < limit else 0.0)
            for size, f in eager + [(size, f) for size, f in points if size >= limit]]
    lat_factor, bw_factor = protocol_factors([size for size, _ in points], wire, lat, bw, limit)
    entry = (max(calls[0] - small["send_s"], 0.0), max(calls[1] - small["send_s"], 0.0)) if calls else (0.0, 0.0)

    meta = document.get("metadata", {})
    source = (f"weft project calibrate of {meta.get('date', '?')} on {meta.get('hostname', '?')} "
              f"({document.get('mpi', 'MPI')[:40]}, 2 ranks: 8 B ping-pong "
              f"{small['pingpong_s'] * 1e6:.3f} us one way, send {small['send_s'] * 1e6:.3f} us, "
              f"receive {small['recv_s'] * 1e6:.3f} us, flood {bw / 1e9:.2f} GB/s"
              + (f", collective entry bcast {entry[0] * 1e6:.3f} us, reduce {entry[1] * 1e6:.3f} us"
                 if calls else "") + ")")
    return Calibration(lat, bw, source, pieces("send_s", eager), pieces("recv_s", eager),
                       pieces("isend_s", points), limit, lat_factor, bw_factor, entry, tuple(sorted(copies)))


def calibration() -> Calibration:
    """From the last `weft project calibrate` run; without one, from the
    last `weft bench latbw` over shared memory (no overheads)."""
    path = results.latest_path(CALIBRATION)
    if path.exists():
        return parse_calibration(results.load(path), str(path.name))
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
    raise WeftError("no calibration: run `weft project calibrate` (or `weft bench latbw`) first")


# Vendor and published figures for the levels we cannot measure here, as
# multiples of the measured intra-socket level or absolute values.
IB_FDR_LAT_S = 1.3e-6      # Mellanox FDR InfiniBand MPI latency (Connect-IB datasheet, ~1 us + switch)
IB_FDR_BW_BPS = 6.0e9      # FDR 4x: 56 Gb/s signalling, ~6 GB/s MPI bandwidth
SWITCH_LAT_S = 0.2e-6      # one more InfiniBand switch hop (SX6036: 170-200 ns port to port)
SPINE_LINKS = 4            # FDR links from a leaf switch to the spine (assumed: Table 1 does not say)
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
    src_core = f"core level and per-message overheads: {cal.source}"
    src_node = (f"socket/NUMA levels: remote-socket latency x{QPI_LAT_FACTOR}, bandwidth "
                f"x{QPI_BW_FACTOR}; other NUMA half of a socket latency x{COD_LAT_FACTOR} "
                "(typical Xeon E5 figures, not measured)")
    src_ib = (f"network: FDR InfiniBand {IB_FDR_LAT_S * 1e6:.1f} us, {IB_FDR_BW_BPS / 1e9:.0f} GB/s "
              "per node port (vendor figures)")
    haswell = "pack:2 l3:2 [numa] core:6 pu:1"
    cfg = smpi_config(cal)

    def numalink_smp(name: str, blades: int, version: int, lat: float, bw: float,
                     paper_max: dict[str, float]) -> Platform:
        """An SGI UV of `blades` blades of 2 sockets x 8 cores joined by NUMAlink."""
        levels = (Level("Group0", blades, lat / 2, bw), qpi, Level("Core", 8, *core))
        return Platform(name, blades * 16, levels,
                        f"group:{blades} pack:2 [numa] l3:1 core:8 pu:1", -1,
                        {"core": src_core, "node": src_node,
                         "blades": f"NUMAlink {version} between blades: {lat * 1e6:.1f} us, "
                                   f"{bw / 1e9:.0f} GB/s (vendor figures)"},
                        paper_max=paper_max, cfg=cfg)

    return [
        Platform("NTW10E5", 240, (ib(10), qpi, cod, Level("Core", 6, *core)), haswell, 0,
                 {"core": src_core, "node": src_node, "network": src_ib},
                 paper_max={"bcast": 21, "reduce": 39}, cfg=cfg),
        numalink_smp("SMP20E7", 10, 5, NUMALINK5_LAT_S, NUMALINK5_BW_BPS, {"bcast": 11, "reduce": 11}),
        numalink_smp("SMP12E5", 6, 6, NUMALINK6_LAT_S, NUMALINK6_BW_BPS, {"bcast": 22, "reduce": 8}),
        Platform("NTW24E5", 576, (ib(24), qpi, cod, Level("Core", 6, *core)), haswell, 0,
                 {"core": src_core, "node": src_node, "network": src_ib,
                  "switches": f"4 leaf switches of 12, 6, 4, 2 nodes (§7.4), each with {SPINE_LINKS} FDR "
                              f"links to a spine (assumed), {SWITCH_LAT_S * 1e6:.1f} us per extra hop "
                              "(vendor figure)"},
                 switches=(12, 6, 4, 2),
                 switch_uplink=Level("Switch", 4, SWITCH_LAT_S / 2, IB_FDR_BW_BPS * SPINE_LINKS), cfg=cfg),
    ]


def this_machine(cal: Calibration, cores: int = 2) -> Platform:
    """This machine as SMPI sees it: one node of `cores` cores on the
    calibrated level, with its transport's per-size protocol factors (the
    validation platform)."""
    return Platform(f"THIS{cores}", cores,
                    (Level("Core", cores, cal.lat_s / 2, cal.bw_Bps),),
                    f"core:{cores} pu:1", -1,
                    {"core": f"core level, overheads, protocol factors and collective entry: {cal.source}"},
                    cfg=protocol_config(cal))


# ---- the zone tree ------------------------------------------------------------------


@dataclass
class Zone:
    """A group of the platform: its id (also the prefix of its hosts'
    names), the uplink to its siblings (None at the top), and either
    child zones or, at the bottom, the cores' private link."""
    id: str
    uplink: Level | None
    children: list[Zone] = field(default_factory=list)
    cores: int = 0
    core_link: Level | None = None
    node: str = ""

    def hosts(self) -> list[tuple[str, str]]:
        """(host, node) of every core below, in rank order."""
        if self.cores:
            return [(f"{self.id}-c{i}", self.node) for i in range(self.cores)]
        return [host for child in self.children for host in child.hosts()]


def zone_tree(p: Platform) -> Zone:
    """The platform's nested groups.  Zones below a node are named from the
    node down (n3-s1-m0), so that every host name starts with its node's
    name; a leaf switch by its own tag (sw2); the top by the platform."""
    levels = list(p.levels)

    def below_node(depth: int, zone_id: str, uplink: Level | None, node: str) -> Zone:
        """The zone of a group whose children are the groups of levels[depth]:
        a cluster when they are the cores."""
        if depth == len(levels) - 1:
            return Zone(zone_id, uplink, cores=levels[depth].fanout, core_link=levels[depth], node=node)
        level = levels[depth]
        tag = TAGS.get(level.name, level.name.lower())
        return Zone(zone_id, uplink, node=node,
                    children=[below_node(depth + 1, f"{zone_id}-{tag}{i}", level, node)
                              for i in range(level.fanout)])

    if p.node_level < 0:
        return below_node(0, "n0", None, "n0")
    node_level = levels[p.node_level]
    nodes = [below_node(p.node_level + 1, f"n{k}", node_level, f"n{k}") for k in range(node_level.fanout)]
    if not p.switches:
        return Zone(p.name, None, children=nodes)
    if sum(p.switches) != len(nodes) or p.switch_uplink is None:
        raise WeftError(f"{p.name}: switches {p.switches} do not hold its {len(nodes)} nodes")
    spine, first = Zone(p.name, None), 0
    for s, count in enumerate(p.switches):
        spine.children.append(Zone(f"sw{s}", p.switch_uplink, children=nodes[first:first + count]))
        first += count
    return spine


def hosts(p: Platform) -> list[tuple[str, str]]:
    """(host, node) of every simulated core, in rank order."""
    return zone_tree(p).hosts()


# ---- XML ------------------------------------------------------------------------


def _fmt_bw(bps: float) -> str:
    return f"{bps:.6g}Bps"


def _fmt_lat(seconds: float) -> str:
    return f"{seconds:.6g}s"


def _link(name: str, level: Level) -> str:
    return (f'<link id="{name}" bandwidth="{_fmt_bw(level.bw_Bps)}" latency="{_fmt_lat(level.lat_s)}" '
            'sharing_policy="SPLITDUPLEX"/>')


def _zone_xml(zone: Zone, indent: str) -> list[str]:
    """A zone and what it holds.  SimGrid wants a zone's child zones first,
    then its links, then its routes; a router cannot sit beside zones, so
    each zone's gateway router has a small zone of its own (<id>-gw)."""
    if zone.cores:
        link = zone.core_link
        assert link is not None
        return [f'{indent}<cluster id="{zone.id}" prefix="{zone.id}-c" suffix="" radical="0-{zone.cores - 1}" '
                f'speed="{HOST_SPEED}" bw="{_fmt_bw(link.bw_Bps)}" lat="{_fmt_lat(link.lat_s)}" '
                f'router_id="{zone.id}-gw"/>']
    lines = [f'{indent}<zone id="{zone.id}" routing="Full">']
    for child in zone.children:
        lines += _zone_xml(child, indent + "  ")
    if zone.uplink is not None:
        lines.append(f'{indent}  <zone id="{zone.id}-gwz" routing="None"><router id="{zone.id}-gw"/></zone>')
    for child in zone.children:
        assert child.uplink is not None
        lines.append(f"{indent}  {_link(child.id + '-up', child.uplink)}")
    gw = lambda z: f"{z.id}-gw"  # noqa: E731
    for a, first in enumerate(zone.children):
        for second in zone.children[a + 1:]:
            lines.append(f'{indent}  <zoneRoute src="{first.id}" dst="{second.id}" gw_src="{gw(first)}" '
                         f'gw_dst="{gw(second)}"><link_ctn id="{first.id}-up" direction="UP"/>'
                         f'<link_ctn id="{second.id}-up" direction="DOWN"/></zoneRoute>')
        if zone.uplink is not None:
            lines.append(f'{indent}  <zoneRoute src="{first.id}" dst="{zone.id}-gwz" gw_src="{gw(first)}" '
                         f'gw_dst="{gw(zone)}"><link_ctn id="{first.id}-up" direction="UP"/></zoneRoute>')
    lines.append(f"{indent}</zone>")
    return lines


def platform_xml(p: Platform) -> str:
    """The SimGrid platform of p: nested zones, one per group of every
    level (see the module's description), hosts named <node>-...-c<i>."""
    lines = ['<?xml version="1.0"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             f"<!-- {p.name}: {p.cores} cores, levels "
             + ", ".join(f"{lv.name} x{lv.fanout}" for lv in p.levels)
             + (f", leaf switches of {', '.join(map(str, p.switches))} nodes" if p.switches else "") + ".",
             "     Generated by weft.models.smpi (weft project); sources of the numbers:"]
    lines += [f"       {key}: {text}" for key, text in p.sources.items()]
    lines += ["-->", '<platform version="4.1">',
              f'  <config><prop id="smpi/host-speed" value="{HOST_SPEED}"/></config>']
    lines += _zone_xml(zone_tree(p), "  ")
    lines += ["</platform>", ""]
    return "\n".join(lines)


def slurm_topology(p: Platform) -> str:
    """topology.conf of the platform's switches (NTW24E5), nodes n0, n1, ..."""
    lines, first = [], 0
    for s, count in enumerate(p.switches):
        lines.append(f"SwitchName=leaf{s} Nodes=n[{first}-{first + count - 1}]")
        first += count
    return "\n".join(lines) + "\n"


def platform_dir() -> Path:
    """Where the generated platform files go: smpi-platforms/ of the
    results directory."""
    return results.results_dir() / "smpi-platforms"


def write_platform(p: Platform) -> Path:
    """Generate p's XML (and its switches' topology.conf) under
    platform_dir(); returns the XML's path."""
    results.ensure_dir(platform_dir())
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
    """Run program on every core of platform p under SMPI, with the
    platform's calibrated settings (p.cfg) and then cfg.  The topology
    layer learns each node's inside from WEFT_TOPO_SYNTHETIC and the
    binding rule, and its node from WEFT_TOPO_NODE: every simulated core is
    a SimGrid host, so MPI_Get_processor_name names the core's host
    (n3-s1-m0-c4), whose first part is the node."""
    hostfile = p.path.with_suffix(".hosts")
    names = [host for host, _ in hosts(p)]
    hostfile.write_text("\n".join(names) + "\n")
    env = {"WEFT_TOPO_SYNTHETIC": p.synthetic, "WEFT_TOPO_BIND": "by-pu", "WEFT_TOPO_NODE": _node_list(names)}
    if p.switches:
        env["WEFT_TOPO_SLURM_CONF"] = str(p.path.with_suffix(".topology.conf"))
    settings = {"smpi/bw-factor": "0:1", "smpi/lat-factor": "0:1", **p.cfg, **cfg}
    for key, variable in ENTRY_ENV.items():
        value = settings.pop(key, "")
        if value:
            env[variable] = value
    # Privatisation copies the program per rank into tmpdir: a directory of
    # its own, so that simulations run side by side do not share copies.
    with tempfile.TemporaryDirectory(prefix="weft-smpi-") as tmp:
        argv = [smpirun(), "-np", str(p.cores), "-platform", str(p.path), "-hostfile", str(hostfile),
                f"--cfg=smpi/tmpdir:{tmp}", "--cfg=smpi/display-timing:0", "--log=root.thres:critical",
                *(f"--cfg={key}:{value}" for key, value in settings.items()), str(program), *args]
        runner.run_program(argv, env=env, timeout=timeout)


def _node_list(hosts: list[str]) -> str:
    """WEFT_TOPO_NODE of the host list: rank r runs on hosts[r], whose
    node is the first part of its name (n3 of n3-s1-m0-c4)."""
    out: list[tuple[str, int]] = []
    for host in hosts:
        node = host.split("-")[0]
        if out and out[-1][0] == node:
            out[-1] = (node, out[-1][1] + 1)
        else:
            out.append((node, 1))
    return ",".join(f"{node}*{count}" if count > 1 else node for node, count in out)


def describe(p: Platform) -> dict[str, Any]:
    return {"name": p.name, "cores": p.cores, "synthetic": p.synthetic,
            "levels": [{"name": lv.name, "fanout": lv.fanout, "lat_s": lv.lat_s, "bw_Bps": lv.bw_Bps}
                       for lv in p.levels],
            "switches": list(p.switches), "sources": p.sources, "smpi_cfg": p.cfg,
            "xml": str(p.path.relative_to(results.results_dir()))}


# ---- NAS FT on the overlap paper's clusters (weft project ft) -----------------------
#
# The machines of Bell et al., "Optimizing bandwidth limited problems using
# one-sided communication and overlap" (2005), appendix and Figure 10.  The
# paper gives their processors and networks, not their figures: the numbers
# below are period-typical figures of those parts (link rate and I/O bus,
# MPI latency and per-message CPU overhead of the MPI each machine ran, a
# one-sided put's overhead as GASNet's), stated as assumptions in each
# platform's sources, never measurements of the machines.  A node's ranks
# share its one network port.  Compute is this machine's measured FFT rate
# scaled to each processor: its peak (clock x double-precision flops per
# cycle) times FT_PAPER_EFFICIENCY, the fraction of peak the paper's own
# figure implies (about 0.5 TFlop/s on 512 Itanium2 processors of 5.6
# GFlop/s: 0.17, communication included).

FT_PAPER_EFFICIENCY = 0.17
FT_INTRA_LAT_S = 1.0e-6      # MPI between two processors of one 2005 node (assumed)
FT_INTRA_BW_BPS = 1.5e9      # their memory-copy bandwidth (assumed)


@dataclass(frozen=True)
class FtPlatform:
    name: str
    machine: str
    cores_per_node: int
    max_nodes: int
    peak_gflops: float          # one processor's double-precision peak
    lat_s: float                # one-way MPI latency between nodes
    bw_Bps: float               # one node port's bandwidth, each direction
    o_send_s: float             # CPU time of initiating one MPI send (smpi/os, smpi/ois)
    o_recv_s: float             # CPU time of completing one MPI receive (smpi/or)
    o_put_s: float              # CPU time of initiating and completing one put
    eager_limit: int
    coll_selector: str          # SimGrid's collective selection of the MPI it ran
    paper_class: str
    paper: str                  # what the paper reports for it
    sources: str


FT_PLATFORMS = (
    FtPlatform("Opteron/IB", "NERSC Jacquard: dual 2.2 GHz Opteron, Mellanox 4x InfiniBand (PCI-X), MVAPICH 0.9.4",
               2, 320, 4.4, 5.0e-6, 0.85e9, 1.5e-6, 1.5e-6, 0.5e-6, 8192, "mvapich2", "C",
               "best UPC ≈1.9× NAS (§6.1); MPI slabs spent its time in Waitall, pencils crashed",
               "4x SDR InfiniBand behind PCI-X: ~0.85 GB/s, MPI ~5 us one way; MPI overhead 1.5 us per "
               "send and receive, put 0.5 us (assumed period figures)"),
    FtPlatform("Alpha/Elan3", "PSC Lemieux: quad 1 GHz Alpha 21264, Quadrics QsNet1 Elan3 (one rail)",
               4, 750, 2.0, 4.5e-6, 0.30e9, 3.0e-6, 3.0e-6, 1.0e-6, 16384, "mpich", "D",
               "UPC ≈1.8× NAS (the paper's average, §6.1)",
               "QsNet1 Elan3 one rail behind 64-bit/66 MHz PCI: ~0.30 GB/s, MPI ~4.5 us; MPI overhead "
               "3 us per send and receive on the 1 GHz Alpha, put 1 us (assumed period figures)"),
    FtPlatform("Itanium2/Elan4", "LLNL Thunder: quad 1.4 GHz Itanium2, Quadrics QsNet2 Elan4",
               4, 1024, 5.6, 2.0e-6, 0.90e9, 1.0e-6, 1.0e-6, 0.3e-6, 16384, "mpich", "D",
               "best UPC ≈1.9× NAS, MPI competitive (§6.1, §6.2)",
               "QsNet2 Elan4 behind PCI-X: ~0.9 GB/s, MPI ~2 us (Figure 2's order); MPI overhead 1 us "
               "per send and receive (matching on the NIC), put 0.3 us (assumed period figures)"),
    FtPlatform("x86/Myrinet", "UC Berkeley Millennium: dual 3.0 GHz Pentium 4 Xeon, Myrinet 2000 (GM)",
               2, 64, 6.0, 7.0e-6, 0.24e9, 1.5e-6, 1.5e-6, 0.7e-6, 16384, "mpich", "C",
               "UPC ≈1.8× NAS (average), MPI competitive (§6.1, §6.2)",
               "Myrinet 2000 M3S-PCI64B: 2 Gb/s link, ~0.24 GB/s, MPI ~7 us; MPI overhead 1.5 us per "
               "send and receive, put 0.7 us (assumed period figures)"),
)


def ft_speed_factor(fp: FtPlatform, here_fft_flops_per_s: float) -> float:
    """How many times longer a piece of FFT work takes on fp's processor
    than here (pure): this machine's measured rate over the platform's
    peak times FT_PAPER_EFFICIENCY."""
    return here_fft_flops_per_s / (fp.peak_gflops * 1e9 * FT_PAPER_EFFICIENCY)


def ft_platform(fp: FtPlatform, ranks: int) -> Platform:
    """The SMPI platform of fp with enough nodes for ranks: a node's ranks
    share its port (the node's uplink), each rank on a core of its own."""
    per_node = min(fp.cores_per_node, ranks)
    nodes = -(-ranks // per_node)
    if nodes > fp.max_nodes:
        raise WeftError(f"{fp.name} has {fp.max_nodes} nodes of {fp.cores_per_node}, not enough for {ranks} ranks")
    tag = fp.name.replace("/", "-")
    levels = (Level("Machine", nodes, fp.lat_s / 2, fp.bw_Bps),
              Level("Core", per_node, FT_INTRA_LAT_S / 2, FT_INTRA_BW_BPS))
    cfg = {"smpi/simulate-computation": "no", "smpi/wtime": "0", "smpi/cpu-threshold": "0",
           "smpi/os": f"0:{fp.o_send_s:.6g}:0", "smpi/ois": f"0:{fp.o_send_s:.6g}:0",
           "smpi/or": f"0:{fp.o_recv_s:.6g}:0",
           "smpi/send-is-detached-thresh": str(fp.eager_limit),
           "smpi/async-small-thresh": str(fp.eager_limit), "smpi/coll-selector": fp.coll_selector}
    return Platform(f"FT-{tag}-{ranks}", nodes * per_node, levels, f"core:{per_node} pu:1", 0,
                    {"machine": fp.machine, "network": fp.sources,
                     "compute": f"this machine's FFT rate scaled to {fp.peak_gflops} GFlop/s peak "
                                f"x {FT_PAPER_EFFICIENCY}"}, cfg=cfg)


FT_KINDS = ("plane", "row", "final", "evolve", "init", "twiddle")
FT_FFT_KINDS = ("plane", "row", "final")


def _fft_flops(n: int, count: float) -> float:
    return 5.0 * n * math.log2(n) * count


def ft_units(dims: tuple[int, int, int], ranks: int) -> dict[str, dict[str, float]]:
    """Per rank, the units of each kind of one forward and one inverse
    phase, as apps/ft counts them (pure): flops of the FFT kinds, elements
    of the others."""
    nx, ny, nz = dims
    out = {}
    for phase, (np_, na) in (("forward", (nz, ny)), ("inverse", (ny, nz))):
        npl, nal = np_ // ranks, na // ranks
        out[phase] = {"plane": npl * _fft_flops(na, nx), "row": npl * _fft_flops(nx, na),
                      "final": _fft_flops(np_, nal * nx), "evolve": npl * na * nx if phase == "inverse" else 0.0}
    out["setup"] = {"init": nx * ny * nz / ranks, "twiddle": nx * ny * nz / ranks}
    return out


def ft_messages(dims: tuple[int, int, int], ranks: int, alg: str) -> dict[str, tuple[int, int]]:
    """Per rank and phase, (messages to other ranks, bytes of each) as
    apps/ft sends them (pure)."""
    nx, ny, nz = dims
    out = {}
    for phase, (np_, na) in (("forward", (nz, ny)), ("inverse", (ny, nz))):
        npl, nal = np_ // ranks, na // ranks
        grain = alg.split("-")[0]
        if grain == "exchange":
            out[phase] = (ranks - 1, npl * nal * nx * 16)
        elif grain == "slabs":
            out[phase] = ((ranks - 1) * npl, nal * nx * 16)
        else:
            out[phase] = ((ranks - 1) * npl * nal, nx * 16)
    return out


def ft_model(fp: FtPlatform, dims: tuple[int, int, int], niter: int, ranks: int, alg: str,
             cost: dict[str, float]) -> dict[str, float]:
    """The analytic overlap model of one run (pure), seconds: compute from
    cost (seconds per unit on fp, each kind), a node's port carrying the
    bytes its ranks send off the node, every message costing its CPU
    overhead (MPI: send + receive; rma: a put).  exchange: compute, then
    communication.  slabs, pencils: the plane and row FFTs (and the
    evolution) overlap the port's transfer, whichever is longer, plus the
    last message's transfer; the final FFTs follow."""
    per_node = min(fp.cores_per_node, ranks)
    units, msgs = ft_units(dims, ranks), ft_messages(dims, ranks, alg)
    overhead = fp.o_put_s if alg.endswith("-rma") else fp.o_send_s + fp.o_recv_s
    local_bytes = dims[0] * dims[1] * dims[2] * 16 / ranks
    off_node = local_bytes * (ranks - per_node) / ranks * per_node
    wire = off_node / fp.bw_Bps + (fp.lat_s if ranks > per_node else FT_INTRA_LAT_S)
    wire = max(wire, local_bytes * (per_node - 1) / ranks / FT_INTRA_BW_BPS)
    phases = {}
    for phase in ("forward", "inverse"):
        u = units[phase]
        before = sum(u[k] * cost[k] for k in ("plane", "row", "evolve"))
        final = u["final"] * cost["final"]
        count, size = msgs[phase]
        cpu = count * overhead
        if alg.startswith("exchange"):
            phases[phase] = before + cpu + wire + final
        else:
            last = size * per_node / (fp.bw_Bps if ranks > per_node else FT_INTRA_BW_BPS)
            phases[phase] = max(before + cpu, wire) + last + final
    setup = sum(units["setup"][k] * cost[k] for k in ("init", "twiddle"))
    return {"time_s": setup + phases["forward"] + niter * phases["inverse"],
            "forward_s": phases["forward"], "inverse_s": phases["inverse"], "wire_s": wire}
