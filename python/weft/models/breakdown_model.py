"""Where the nanoseconds of a small message go: the injection-overhead and
latency models of the Breaking Band paper (Zambre et al., ICPP 2019, §4-§6),
with weft as the high-level protocol (HLP) and UCX as the low-level protocol
(LLP).

A model is a sum of non-overlapping components (§7: "the components of our
models are not concurrent"), each a time per occurrence times its
occurrences per message:

    injection overhead (Eq. 1, LLP only)  = LLP_post + LLP_prog + Misc
    injection overhead (Eq. 2)            = Post + Post_prog + Misc
        Post      = HLP_post + LLP_post
        Post_prog = HLP_tx_prog + LLP_prog / batch   (progress amortised
                    over the completions one progress call returns)
    latency (§4.3, §6)                     = HLP_post + LLP_post + transfer
                                             + LLP_prog + HLP_rx_prog
        transfer  = 2·PCIe + Network + RC-to-MEM(xB)   when those are given
                    (preset), one measured value per path otherwise.

A component may be made of parts (LLP_post of its five steps, Fig. 4;
Network of Wire and Switch) so that the what-if analysis can reduce a part
alone. Each leaf has a level (HLP, LLP, I/O, network, misc), and each level
a category of Fig. 15 (CPU, I/O, network).

The preset `tx2-cx4` holds Table 1 and the values the text adds; how each of
the paper's figures follows from them is written next to the code that
computes it and in docs/whatif.md. Preset numbers are the paper's, modelled:
weft does not have that hardware.  They are package data,
weft/models/data/<preset>.json, one JSON object:

    {"name": "tx2-cx4", "system": "...", "source": "...",
     "table_1": {ROW: ns, ...},          every row of the paper's Table 1,
                                         named as the paper names it
     "table_1_totals": {ROW: ns, ...},   its "total of above" rows, which the
                                         model computes from their parts
     "text": {NAME: {"value": number, "where": "§ and what it is"}, ...}}
                                         the values the text adds

The models of a measured breakdown are read by weft.models.breakdown_measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from weft import WeftError

# Levels of the stack and the Fig. 15 category each belongs to. "misc" is
# CPU time outside both protocols' critical path (busy posts, the
# benchmark's own bookkeeping), kept apart as the paper's Misc is.
LEVEL_CATEGORY = {"HLP": "CPU", "LLP": "CPU", "misc": "CPU", "I/O": "I/O", "network": "network"}
LEVELS = tuple(LEVEL_CATEGORY)
CATEGORIES = ("CPU", "I/O", "network")
KINDS = ("injection", "latency")
PATHS = ("shm", "tcp", "tcp-nodes", "direct")  # direct: weft.models.breakdown_direct


@dataclass(frozen=True)
class Component:
    """One term of a model: `ns` per occurrence, `count` occurrences per
    message. A component with parts takes its time from them."""

    name: str
    ns: float
    level: str = ""
    count: float = 1.0
    label: str = ""
    parts: tuple[Component, ...] = ()

    @property
    def per_message(self) -> float:
        return self.ns * self.count

    @property
    def title(self) -> str:
        return self.label or self.name

    def leaves(self, scale: float = 1.0) -> Iterator[tuple[Component, float]]:
        """Each leaf with its per-message multiplier (its count times its
        ancestors' counts)."""
        scale *= self.count
        if not self.parts:
            yield self, scale
        for part in self.parts:
            yield from part.leaves(scale)

    def find(self, name: str) -> Component | None:
        if self.name.lower() == name.lower():
            return self
        for part in self.parts:
            found = part.find(name)
            if found is not None:
                return found
        return None


def leaf(name: str, ns: float, level: str, *, count: float = 1.0, label: str = "") -> Component:
    if level not in LEVEL_CATEGORY:
        raise ValueError(f"unknown level {level!r}")
    return Component(name, ns, level, count, label)


def composite(name: str, parts: tuple[Component, ...], *, count: float = 1.0, label: str = "") -> Component:
    """A component whose time per occurrence is the sum of its parts'."""
    levels = {part.level for part in parts}
    return Component(name, math.fsum(part.per_message for part in parts),
                     levels.pop() if len(levels) == 1 else "mixed", count, label, parts)


@dataclass(frozen=True)
class Model:
    """A model of one quantity (injection overhead or one-way latency) as a
    sum of components, with the observation it explains when there is one."""

    kind: str
    title: str
    equation: str
    components: tuple[Component, ...]
    observed_ns: float | None = None
    observed_note: str = ""
    # A measured model's resolution per top-level component, in ns: a
    # component below it is printed as such (breakdown_methods); empty for
    # the preset.
    resolution: Mapping[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return math.fsum(component.per_message for component in self.components)

    @property
    def error_percent(self) -> float | None:
        return model_error(self.total, self.observed_ns)

    def leaves(self) -> Iterator[tuple[Component, float]]:
        for component in self.components:
            yield from component.leaves()

    def find(self, name: str) -> Component | None:
        for component in self.components:
            found = component.find(name)
            if found is not None:
                return found
        return None

    def share(self, component: Component) -> float:
        """A top-level component's share of the total, in percent."""
        return 100.0 * component.per_message / self.total

    def by_level(self) -> dict[str, float]:
        """ns per message in each level, in LEVELS order (absent levels left out)."""
        sums: dict[str, float] = {}
        for part, scale in self.leaves():
            sums[part.level] = sums.get(part.level, 0.0) + part.ns * scale
        return {level: sums[level] for level in LEVELS if level in sums}

    def by_category(self) -> dict[str, float]:
        """ns per message in CPU, I/O and network (Fig. 15)."""
        sums = {category: 0.0 for category in CATEGORIES}
        for level, ns in self.by_level().items():
            sums[LEVEL_CATEGORY[level]] += ns
        return sums


def model_error(modelled: float, observed: float | None) -> float | None:
    """(model − observed) / observed in percent, as the paper reports
    "within 5%"; None without an observation."""
    if observed is None:
        return None
    if not observed > 0:
        raise WeftError(f"observed time must be positive to compute the model's error, got {observed!r}")
    return 100.0 * (modelled - observed) / observed


def amortised(name: str, ns_per_call: float, level: str, batch: float, *, label: str = "") -> Component:
    """A progress cost paid once per `batch` messages (§4.2's b, §6's
    unsignaled completions c): count 1/batch per message."""
    if not batch >= 1:
        raise WeftError(f"a completion batch must be at least 1 message, got {batch!r}")
    return leaf(name, ns_per_call, level, count=1.0 / batch, label=label)


def injection_model(
    *,
    llp_post: Component,
    llp_prog: Component,
    misc: Component,
    hlp_post: Component | None = None,
    hlp_tx_prog: Component | None = None,
    title: str,
    observed_ns: float | None = None,
    observed_note: str = "",
) -> Model:
    """Eq. 1 (LLP only: LLP_post + LLP_prog + Misc) or, with the HLP
    components, Eq. 2 (Post + Post_prog + Misc). Components are per message:
    amortise progress with `amortised` first."""
    if (hlp_post is None) != (hlp_tx_prog is None):
        raise ValueError("Eq. 2 needs both HLP_post and HLP_tx_prog")
    if hlp_post is None:
        return Model("injection", title, "LLP_post + LLP_prog + Misc  (Eq. 1)",
                     (llp_post, llp_prog, misc), observed_ns, observed_note)
    return Model("injection", title,
                 "Post + Post_prog + Misc = (HLP_post + LLP_post) + (HLP_tx_prog + LLP_prog) + Misc  (Eq. 2; "
                 "progress per message, amortised over its batch)",
                 (hlp_post, llp_post, hlp_tx_prog, llp_prog, misc), observed_ns, observed_note)


def latency_model(
    *,
    llp_post: Component,
    transfer: Component,
    llp_prog: Component,
    hlp_post: Component | None = None,
    hlp_rx_prog: Component | None = None,
    title: str,
    observed_ns: float | None = None,
    observed_note: str = "",
) -> Model:
    """One-way latency: [HLP_post +] LLP_post + transfer + LLP_prog [+ HLP_rx_prog]
    (§4.3 without the HLP, §6 with it)."""
    if (hlp_post is None) != (hlp_rx_prog is None):
        raise ValueError("the end-to-end latency needs both HLP_post and HLP_rx_prog")
    if hlp_post is None or hlp_rx_prog is None:
        return Model("latency", title, "LLP_post + transfer + LLP_prog  (§4.3)",
                     (llp_post, transfer, llp_prog), observed_ns, observed_note)
    return Model("latency", title, "HLP_post + LLP_post + transfer + LLP_prog + HLP_rx_prog  (§6)",
                 (hlp_post, llp_post, transfer, llp_prog, hlp_rx_prog), observed_ns, observed_note)


def pcie_transfer(pcie: Component, network: Component, rc_to_mem: Component) -> Component:
    """transfer = 2·PCIe + Network + RC-to-MEM(xB): the payload crosses PCIe
    on both nodes, the network once, and the target's root complex writes it
    to memory (§4.3)."""
    twice = Component(pcie.name, pcie.ns, pcie.level, 2.0, pcie.label)
    return composite("transfer", (twice, network, rc_to_mem), label="transfer = 2·PCIe + Network + RC-to-MEM")


@dataclass(frozen=True)
class Breakdown:
    """The models of one system: scenario name -> {kind: Model}. `overall`
    names the scenario the what-if analysis starts from (Fig. 17)."""

    name: str
    source: str
    scenarios: dict[str, dict[str, Model]]
    overall: str
    notes: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    # Parts the what-if plot shows beside the levels and the top-level
    # components (Fig. 17 plots PIO copy, PCIe, RC-to-MEM, Wire and Switch).
    highlights: tuple[str, ...] = ()
    # A measurement's trace points: name -> {count, total_ns, min_ns, median_ns}.
    points: dict[str, dict[str, float]] = field(default_factory=dict)
    # A measurement's comparison of its two methods, one per quantity
    # (weft.models.breakdown_methods.Comparison), and its self-check.
    comparisons: tuple[Any, ...] = ()
    selfcheck: dict[str, Any] = field(default_factory=dict)

    def model(self, kind: str, scenario: str | None = None) -> Model:
        if kind not in KINDS:
            raise WeftError(f"unknown model kind {kind!r}: choose one of {', '.join(KINDS)}")
        return self.scenarios[scenario or self.overall][kind]


# ---------------------------------------------------------------------------
# The preset tx2-cx4: ThunderX2 at 2 GHz, ConnectX-4 (Table 1 and §4-§6).


def preset_data(name: str) -> dict[str, Any]:
    """A preset's numbers, weft/models/data/<name>.json (see the module's
    description), checked to be numbers."""
    resource = resources.files(__package__).joinpath("data", f"{name}.json")
    try:
        data = json.loads(resource.read_text(encoding="utf-8"))
        tables = {key: data[key] for key in ("table_1", "table_1_totals")}
        text = {key: entry["value"] for key, entry in data["text"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise WeftError(f"the preset data {resource} is missing or malformed: {exc!r}") from None
    for key, value in [*tables["table_1"].items(), *tables["table_1_totals"].items(), *text.items()]:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise WeftError(f"the preset data {resource}: {key!r} is not a number ({value!r})")
    return {**tables, "text": text}


_TX2 = preset_data("tx2-cx4")
# Table 1, every row, with the paper's names, in ns. The "total of above"
# rows (LLP_post 175.42, Misc in Inj_overhead 58.68, Network 382.81) are not
# used: they are computed from their parts (tests check them).
TABLE_1: dict[str, float] = _TX2["table_1"]
TABLE_1_TOTALS: dict[str, float] = _TX2["table_1_totals"]
# Values the text adds to Table 1 (the data file says where each comes from).
TX2_TEXT: dict[str, float] = _TX2["text"]


def _llp_post() -> Component:
    """LLP_post and its five steps (§4.1, Fig. 4); Table 1's total 175.42."""
    steps = (("MD_setup", "Message descriptor setup"), ("MD_barrier", "Barrier for message descriptor"),
             ("DBC_barrier", "Barrier for DoorBell counter"), ("PIO_copy", "PIO copy (64 bytes)"),
             ("LLP_post_misc", "Miscellaneous in LLP_post"))
    return composite("LLP_post", tuple(leaf(name, TABLE_1[label], "LLP", label=label) for name, label in steps))


def _transfer() -> Component:
    network = composite("Network", (leaf("Wire", TABLE_1["Wire"], "network", label="Wire"),
                                    leaf("Switch", TABLE_1["Switch"], "network", label="Switch")),
                        label="Network (Wire + Switch)")
    return pcie_transfer(leaf("PCIe", TABLE_1["PCIe for a 64-byte payload"], "I/O", label="PCIe for a 64-byte payload"),
                         network, leaf("RC_to_MEM", TABLE_1["RC-to-MEM(8B)"], "I/O", label="RC-to-MEM(8B)"))


def tx2_cx4() -> Breakdown:
    """The paper's system, modelled from Table 1 and the text:

    §4 (LLP only, UCT put_bw and am_lat):
      injection = LLP_post + LLP_prog + Misc
                = 175.42 + 61.63 + (8.99 + 49.69) = 295.73 ns
        (every put generates a completion, so LLP_prog counts once per
        message; Misc is Table 1's "total of above" 58.68 — the text's
        "Misc = 56.58" is a misprint: 295.73 needs 58.68);
        observed 282.33 ns (PCIe trace): +4.75 %.
      latency = LLP_post + 2·PCIe + Network + RC-to-MEM(8B) + LLP_prog
              = 175.42 + 2·137.49 + 382.81 + 240.96 + 61.63 = 1135.80 ns;
        observed: am_lat's 1215 ns minus half a measurement update
        (1215 − 49.69/2 = 1190.155 ns; the paper prints 1190.25): −4.57 %.
    §6 (complete picture, MPICH + UCX):
      injection = Post + Post_prog + Misc
        Post = HLP_post + LLP_post = (24.37 + 2.19) + 175.42 = 201.98
        Post_prog = 59.82, measured; its LLP share is LLP_prog amortised
          over UCP's unsignaled completions, 61.63/64 = 0.96 ns ("less than a
          nanosecond"), the rest HLP_tx_prog = 59.82 − 61.63/64 = 58.86
        Misc = 3.17 (busy posts)
        = 201.98 + 59.82 + 3.17 = 264.97 ns; observed 263.91 ns: +0.40 %.
      latency = HLP_post + LLP_post + 2·PCIe + Network + RC-to-MEM(8B)
                + LLP_prog + HLP_rx_prog
        HLP_rx_prog = MPICH callback + UCP callback + MPICH after a
          successful ucp_worker_progress = 47.99 + 139.78 + 36.89 = 224.66
        = 26.56 + 1135.80 + 224.66 = 1387.02 ns; observed 1336 ns: +3.82 %.
    """
    llp_post = _llp_post()
    transfer = _transfer()
    batch = TX2_TEXT["unsignaled completion batch c"]
    measurement = TABLE_1["Measurement update"]
    llp = {
        "injection": injection_model(
            llp_post=llp_post,
            llp_prog=leaf("LLP_prog", TABLE_1["LLP_prog"], "LLP"),
            misc=composite("Misc", (leaf("busy_post", TABLE_1["Busy post"], "misc", label="Busy post"),
                                    leaf("measurement_update", measurement, "misc", label="Measurement update")),
                           label="Misc in Inj_overhead"),
            title="tx2-cx4 LLP injection overhead (§4.2, Fig. 8)",
            observed_ns=TX2_TEXT["observed LLP injection"],
            observed_note="PCIe trace of UCX put_bw",
        ),
        "latency": latency_model(
            llp_post=llp_post,
            transfer=transfer,
            llp_prog=leaf("LLP_prog", TABLE_1["LLP_prog"], "LLP"),
            title="tx2-cx4 LLP latency (§4.3, Fig. 10)",
            observed_ns=TX2_TEXT["observed LLP latency (am_lat, as reported)"] - measurement / 2,
            observed_note="UCX am_lat 1215 ns less half a measurement update",
        ),
    }
    hlp_post = composite("HLP_post", (leaf("MPICH_isend", TABLE_1["MPI_Isend in MPICH"], "HLP", label="MPI_Isend in MPICH"),
                                      leaf("UCP_isend", TABLE_1["MPI_Isend in UCP"], "HLP", label="MPI_Isend in UCP")))
    llp_share = TABLE_1["LLP_prog"] / batch
    complete = {
        "injection": injection_model(
            hlp_post=hlp_post,
            llp_post=llp_post,
            hlp_tx_prog=leaf("HLP_tx_prog", TX2_TEXT["Post_prog"] - llp_share, "HLP",
                             label="HLP_tx_prog = Post_prog − LLP_prog/64"),
            llp_prog=amortised("LLP_prog", TABLE_1["LLP_prog"], "LLP", batch, label=f"LLP_prog / {batch:g}"),
            misc=leaf("Misc", TX2_TEXT["Misc (busy posts)"], "misc", label="Misc (busy posts)"),
            title="tx2-cx4 overall injection overhead (§6, Eq. 2, Fig. 12)",
            observed_ns=TX2_TEXT["observed injection (OSU message rate)"],
            observed_note="inverse of OSU message rate",
        ),
        "latency": latency_model(
            hlp_post=hlp_post,
            llp_post=llp_post,
            transfer=transfer,
            llp_prog=leaf("LLP_prog", TABLE_1["LLP_prog"], "LLP"),
            hlp_rx_prog=composite("HLP_rx_prog", (
                leaf("MPICH_callback", TABLE_1["Callback for a completed MPI_Irecv in MPICH"], "HLP",
                     label="Callback for a completed MPI_Irecv in MPICH"),
                leaf("UCP_callback", TABLE_1["Callback for a completed MPI_Irecv in UCP"], "HLP",
                     label="Callback for a completed MPI_Irecv in UCP"),
                leaf("MPICH_after_progress", TX2_TEXT["MPICH after a successful ucp_worker_progress"], "HLP",
                     label="MPICH after a successful ucp_worker_progress"))),
            title="tx2-cx4 end-to-end latency (§6, Fig. 13)",
            observed_ns=TX2_TEXT["observed latency (OSU latency)"],
            observed_note="OSU point-to-point latency",
        ),
    }
    return Breakdown(
        name="tx2-cx4",
        source="paper, modelled",
        scenarios={"LLP (§4)": llp, "complete picture (§6)": complete},
        overall="complete picture (§6)",
        notes=(
            "Breaking Band (ICPP 2019) Table 1: ThunderX2 2 GHz, ConnectX-4, MPICH CH4 + UCX rc_mlx5; "
            "numbers are the paper's, modelled by weft, not measured here",
        ),
        highlights=("PIO_copy", "PCIe", "RC_to_MEM", "Wire", "Switch"),
    )


PRESETS = {"tx2-cx4": tx2_cx4}


def preset(name: str) -> Breakdown:
    try:
        return PRESETS[name]()
    except KeyError:
        raise WeftError(f"unknown preset {name!r}: known presets are {', '.join(PRESETS)}") from None
