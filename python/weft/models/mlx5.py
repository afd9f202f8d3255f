"""A model of how the mlx5 Verbs provider spends NIC resources on endpoints.

weft runs over UCX and, here, over shared memory and TCP: it has no mlx5 NIC
to count UAR pages on. This module reproduces on paper what the mlx5 provider
of a ConnectX-4 would allocate for a set of per-thread endpoints, following
"Scalable Communication Endpoints for MPI+Threads Applications" (Zambre et
al.). Every figure it gives is MODELLED, not measured.

The rules (section of the paper in brackets):

* A device context (CTX) statically allocates 8 UAR pages, 16 data-path
  uUARs (two per 4 KiB UAR page; the page's other two uUARs belong to the
  NIC) [§II-A, App. A, App. B]. uUAR0 is high latency, the last four
  (uUAR12-15) low latency, the others medium latency
  (MLX5_TOTAL_UUARS, MLX5_NUM_LOW_LAT_UUARS change this) [App. B].
* A QP created outside a thread domain (TD) takes the next unused
  low-latency uUAR; once they are all taken, the medium-latency ones in
  round-robin order; uUAR0 only when every other uUAR is low latency [App. B,
  Fig. 16].
* A TD dynamically allocates a UAR page. At sharing level 2 (mlx5's default)
  every even TD allocates a page and takes its first uUAR and the next odd TD
  takes the second one; at sharing level 1 (maximally independent, the
  paper's extension of ibv_td_init_attr) every TD allocates a page of its own
  and its second uUAR stays unused. All QPs of a TD use the TD's uUAR [App. B,
  §V-B]. A CTX allows at most 512 dynamic UAR pages, and at most 256 maximally
  independent TDs [App. B, §V-B]; a ConnectX-4 has 8K UAR pages [§III].
* Memory per Verbs object, Table I: CTX 256 KiB, PD 144 B, MR 144 B,
  QP 80 KiB, CQ 9 KiB.

"Hardware resources" in the paper's percentages (§VII: 2xDynamic uses 31.25%
"as many hardware resources" as MPI everywhere, Dynamic 18.75%, ...) are the
UAR pages allocated, equivalently the data-path uUARs (always two per page, so
both give the same ratio): 40, 24, 16, 8 and 8 UAR pages against the 128 of
16 MPI-everywhere contexts. QPs, CQs and bytes are the separate "software"
resources of §III.

A uUAR, UAR page or QP is *wasted* when no thread drives a QP through it
(§VI: "each thread wastes 1 dynamically allocated UAR, 3 uUARs, and 1 QP" in
2xDynamic).

The sharing level of a QP is the one of Fig. 4(b): 1 — no other QP on its
UAR page; 2 — its own uUAR on a page shared with another QP; 3 — its uUAR
shared with another QP; 4 — the QP itself is driven by several threads. Like
the paper (§VII, stencil: "of the eight QPs per CTX, the fifth QP uses the
first level of sharing in Static, resulting in eight such QPs in total") the
levels compare QPs, whichever threads drive them; QPs of one TD, which the
TD's single thread drives through one unlocked uUAR, do not count as sharing,
and QPs no thread uses (the spare half of 2xDynamic) are left out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Any

from weft import WeftError

KIB = 1024
MIB = 1024 * 1024
# Data-path uUARs per UAR page (App. A: four uUARs, the last two used by the NIC).
UUARS_PER_UAR = 2


class Category(str, Enum):
    """The six categories of scalable endpoints (§VI), by initiation interface."""

    MPI_EVERYWHERE = "MPI everywhere"
    TWO_X_DYNAMIC = "2xDynamic"
    DYNAMIC = "Dynamic"
    SHARED_DYNAMIC = "Shared Dynamic"
    STATIC = "Static"
    MPI_THREADS = "MPI+threads"


CATEGORIES: tuple[Category, ...] = tuple(Category)
# Categories whose QPs live in thread domains.
TD_CATEGORIES = frozenset({Category.TWO_X_DYNAMIC, Category.DYNAMIC, Category.SHARED_DYNAMIC})


@dataclass(frozen=True)
class Provider:
    """The provider and device settings the model allocates with; the
    defaults are mlx5's on a ConnectX-4 as the paper describes them."""

    total_uuars: int = 16  # MLX5_TOTAL_UUARS: static data-path uUARs per CTX
    low_latency_uuars: int = 4  # MLX5_NUM_LOW_LAT_UUARS
    max_dynamic_uars: int = 512  # dynamically allocated UAR pages per CTX (App. B)
    max_independent_tds: int = 256  # sharing-level-1 TDs per CTX (§V-B)
    device_uars: int = 8192  # UAR pages of a ConnectX-4 (§III)
    ctx_bytes: int = 256 * KIB  # Table I
    pd_bytes: int = 144
    mr_bytes: int = 144
    qp_bytes: int = 80 * KIB
    cq_bytes: int = 9 * KIB

    def __post_init__(self) -> None:
        if self.total_uuars < UUARS_PER_UAR or self.total_uuars % UUARS_PER_UAR:
            raise WeftError(f"total_uuars must be a positive multiple of {UUARS_PER_UAR}, got {self.total_uuars}")
        if not 0 <= self.low_latency_uuars <= self.total_uuars - 1:
            raise WeftError(
                f"low_latency_uuars must be 0..{self.total_uuars - 1} (all but one of "
                f"{self.total_uuars} uUARs), got {self.low_latency_uuars}"
            )

    @property
    def static_uars(self) -> int:
        return self.total_uuars // UUARS_PER_UAR

    def static_kind(self, uuar: int) -> str:
        """Latency class of a statically allocated uUAR."""
        if uuar == 0:
            return "high"
        return "low" if uuar >= self.total_uuars - self.low_latency_uuars else "medium"


MLX5 = Provider()


@dataclass
class Uuar:
    """A data-path uUAR of a CTX; uUARs 2u and 2u+1 are on UAR page u."""

    index: int
    kind: str  # "high", "medium", "low" (static) or "dynamic"
    qps: list[int] = field(default_factory=list)


@dataclass
class Context:
    """One device context with its static uUARs and the UAR pages its TDs added."""

    index: int
    provider: Provider
    uuars: list[Uuar] = field(init=False)
    tds: list[int] = field(default_factory=list)  # uUAR of each TD
    independent_tds: int = 0
    shared_tds: int = 0  # TDs created at sharing level 2
    pair_first: int = 0  # first uUAR of the page the last even sharing-2 TD allocated

    def __post_init__(self) -> None:
        self.uuars = [Uuar(i, self.provider.static_kind(i)) for i in range(self.provider.total_uuars)]

    @property
    def uars(self) -> int:
        return len(self.uuars) // UUARS_PER_UAR

    @property
    def dynamic_uars(self) -> int:
        return self.uars - self.provider.static_uars

    def _new_uar(self) -> int:
        if self.dynamic_uars >= self.provider.max_dynamic_uars:
            raise WeftError(
                f"CTX {self.index} would need more than {self.provider.max_dynamic_uars} dynamically "
                "allocated UAR pages, the mlx5 limit per CTX"
            )
        first = len(self.uuars)
        self.uuars += [Uuar(first + slot, "dynamic") for slot in range(UUARS_PER_UAR)]
        return first

    def create_td(self, sharing: int) -> int:
        """A thread domain at sharing level 1 or 2; returns its index in the CTX."""
        if sharing == 1:
            if self.independent_tds >= self.provider.max_independent_tds:
                raise WeftError(
                    f"CTX {self.index} would need more than {self.provider.max_independent_tds} maximally "
                    "independent TDs, the mlx5 limit per CTX"
                )
            self.independent_tds += 1
            self.tds.append(self._new_uar())
        elif sharing == 2:
            if self.shared_tds % UUARS_PER_UAR == 0:
                self.pair_first = self._new_uar()
            self.tds.append(self.pair_first + self.shared_tds % UUARS_PER_UAR)
            self.shared_tds += 1
        else:
            raise WeftError(f"mlx5 TDs have sharing level 1 or 2, not {sharing}")
        return len(self.tds) - 1

    def _static_uuar(self) -> int:
        """The uUAR mlx5 gives a QP created outside a TD (App. B)."""
        static = self.uuars[: self.provider.total_uuars]
        for uuar in static:
            if uuar.kind == "low" and not uuar.qps:
                return uuar.index
        medium = [uuar for uuar in static if uuar.kind == "medium"]
        if medium:
            # Least used first, lowest index on ties: round-robin from uUAR1.
            return min(medium, key=lambda uuar: (len(uuar.qps), uuar.index)).index
        return 0

    def attach_qp(self, qp: int, td: int | None = None) -> int:
        """Map QP number qp to the uUAR of its TD, or to a static uUAR when
        td is None; returns the uUAR."""
        uuar = self.tds[td] if td is not None else self._static_uuar()
        self.uuars[uuar].qps.append(qp)
        return uuar


@dataclass(frozen=True)
class Qp:
    """A QP as the model placed it. index counts QPs on the node from 0 in
    creation order; uuar is the uUAR index within the CTX."""

    index: int
    ctx: int
    uuar: int
    uar: int
    kind: str
    td: int | None
    cq: int
    threads: tuple[int, ...]
    level: int | None  # Fig. 4(b) sharing level; None for a QP no thread uses


def check_count(name: str, value: object, minimum: int = 1) -> None:
    """Raise WeftError unless value is an int (not a bool) >= minimum."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise WeftError(f"{name} must be an integer >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class Scenario:
    """A set of endpoints on one node.

    threads      threads per process;
    processes    independent groups of threads, each with its own CTX(s):
                 the ranks of a node (§VII stencil), or the T/x groups of
                 x-way CTX sharing (§V-B);
    endpoints    E QP sets per process, thread t on set t mod E (weft's
                 static:k); or
    threads_per_endpoint  k, thread t on set t // k, ceil(T/k) sets
                 (weft's shared:k); without either, a set per thread (one
                 in MPI+threads); fewer sets than threads is QP sharing;
    connections  QPs per endpoint, one per peer (2 in the 5-pt stencil);
    endpoints_per_cq  endpoints that share one CQ (CQ sharing, §V-E);
    mrs_per_thread    registered buffers per thread (3 in the global array).

    In the TD categories every thread creates its TD(s) even when it shares
    another thread's QP, so QP sharing leaves the hardware usage unchanged, as
    in Fig. 11(b); the shared QP lives in the TD of its first thread.
    """

    category: Category
    threads: int
    processes: int = 1
    endpoints: int | None = None
    threads_per_endpoint: int | None = None
    connections: int = 1
    endpoints_per_cq: int = 1
    mrs_per_thread: int = 1

    def __post_init__(self) -> None:
        for name in ("threads", "processes", "connections", "endpoints_per_cq"):
            check_count(name, getattr(self, name))
        check_count("mrs_per_thread", self.mrs_per_thread, minimum=0)
        if self.endpoints is not None and self.threads_per_endpoint is not None:
            raise WeftError("give endpoints (round-robin) or threads_per_endpoint (blocks), not both")
        if self.endpoints is not None:
            check_count("endpoints", self.endpoints)
        if self.threads_per_endpoint is not None:
            check_count("threads_per_endpoint", self.threads_per_endpoint)
        count = self.endpoint_count
        if self.category is Category.MPI_EVERYWHERE and count != self.threads:
            raise WeftError("MPI everywhere gives every thread its own CTX: a QP cannot be shared across CTXs")
        if self.category is Category.MPI_THREADS and count != 1:
            raise WeftError(f"MPI+threads has one endpoint per process, not {count}")
        if self.category in TD_CATEGORIES and count > self.threads:
            raise WeftError(
                f"{self.category.value} puts each QP in a thread's TD: {count} endpoints "
                f"need at least as many threads, got {self.threads}"
            )

    @property
    def endpoint_count(self) -> int:
        if self.endpoints is not None:
            return self.endpoints
        if self.threads_per_endpoint is not None:
            return math.ceil(self.threads / self.threads_per_endpoint)
        return 1 if self.category is Category.MPI_THREADS else self.threads

    def endpoint_of(self, thread: int) -> int:
        """The endpoint thread (0-based, within its process) uses."""
        if self.threads_per_endpoint is not None:
            return thread // self.threads_per_endpoint
        return thread % self.endpoint_count


@dataclass(frozen=True)
class Resources:
    """What a scenario allocates on the node. The uUARs are data-path ones."""

    ctxs: int
    pds: int
    mrs: int
    tds: int
    qps: int
    cqs: int
    uars: int
    uuars: int
    static_uars: int
    dynamic_uars: int
    wasted_uars: int
    wasted_uuars: int
    wasted_qps: int
    bytes: int
    bytes_ctx_qp_cq: int  # the part the paper's memory figures count
    levels: tuple[int, int, int, int]  # QPs in use at sharing level 1..4

    def as_dict(self) -> dict[str, Any]:
        result = asdict(self)
        result["levels"] = {str(level): count for level, count in enumerate(self.levels, start=1)}
        return result


@dataclass
class EndpointSet:
    """The placement of every QP of a scenario and what it costs."""

    scenario: Scenario
    provider: Provider
    contexts: list[Context]
    qps: list[Qp]
    cqs: int
    tds: int

    def resources(self) -> Resources:
        p = self.provider
        uars = sum(ctx.uars for ctx in self.contexts)
        uuars = sum(len(ctx.uuars) for ctx in self.contexts)
        used_uuars = {(qp.ctx, qp.uuar) for qp in self.qps if qp.threads}
        used_uars = {(ctx, uuar // UUARS_PER_UAR) for ctx, uuar in used_uuars}
        mrs = self.scenario.mrs_per_thread * self.scenario.threads * self.scenario.processes
        ctxs = len(self.contexts)
        levels = Counter(qp.level for qp in self.qps if qp.level is not None)
        ctx_qp_cq = ctxs * p.ctx_bytes + len(self.qps) * p.qp_bytes + self.cqs * p.cq_bytes
        return Resources(
            ctxs=ctxs,
            pds=ctxs,
            mrs=mrs,
            tds=self.tds,
            qps=len(self.qps),
            cqs=self.cqs,
            uars=uars,
            uuars=uuars,
            static_uars=ctxs * p.static_uars,
            dynamic_uars=uars - ctxs * p.static_uars,
            wasted_uars=uars - len(used_uars),
            wasted_uuars=uuars - len(used_uuars),
            wasted_qps=sum(1 for qp in self.qps if not qp.threads),
            bytes=ctx_qp_cq + ctxs * p.pd_bytes + mrs * p.mr_bytes,
            bytes_ctx_qp_cq=ctx_qp_cq,
            levels=(levels[1], levels[2], levels[3], levels[4]),
        )

    def shared_uuars(self) -> list[tuple[int, ...]]:
        """1-based creation numbers of the QPs in use that share a uUAR
        (level 3), one tuple per uUAR: "the 5th and 16th QP" of §VI."""
        by_uuar: dict[tuple[int, int], list[Qp]] = {}
        for qp in self.qps:
            if qp.level == 3:
                by_uuar.setdefault((qp.ctx, qp.uuar), []).append(qp)
        return [tuple(qp.index + 1 for qp in group) for group in by_uuar.values()]


@dataclass
class _Endpoint:
    ctx: Context
    td: int | None
    threads: tuple[int, ...]


def _levels(qps: list[Qp]) -> list[int | None]:
    """Fig. 4(b) sharing level of every QP (see the module docstring)."""
    on_uuar: dict[tuple[int, int], list[Qp]] = {}
    on_uar: dict[tuple[int, int], list[Qp]] = {}
    for qp in qps:
        if qp.threads:
            on_uuar.setdefault((qp.ctx, qp.uuar), []).append(qp)
            on_uar.setdefault((qp.ctx, qp.uar), []).append(qp)

    def shares(qp: Qp, group: list[Qp]) -> bool:
        return any(o.index != qp.index and (o.td is None or o.td != qp.td) for o in group)

    levels: list[int | None] = []
    for qp in qps:
        if not qp.threads:
            levels.append(None)
        elif len(qp.threads) > 1:
            levels.append(4)
        elif shares(qp, on_uuar[(qp.ctx, qp.uuar)]):
            levels.append(3)
        else:
            levels.append(2 if shares(qp, on_uar[(qp.ctx, qp.uar)]) else 1)
    return levels


def build(scenario: Scenario, provider: Provider = MLX5) -> EndpointSet:
    """Create the CTXs, TDs, QPs and CQs of a scenario the way §VI describes
    each category, placing every QP on a uUAR by mlx5's policy."""
    cat = scenario.category
    contexts: list[Context] = []
    endpoints: list[_Endpoint] = []  # in creation order; twins of 2xDynamic have no threads
    tds = 0
    node_uars = 0

    def add_uars(count: int) -> None:
        nonlocal node_uars
        node_uars += count
        if node_uars > provider.device_uars:
            raise WeftError(
                f"{cat.value} with {scenario.processes} x {scenario.threads} threads needs more than "
                f"{provider.device_uars} UAR pages, all a ConnectX-4 has"
            )

    def new_ctx() -> Context:
        ctx = Context(len(contexts), provider)
        contexts.append(ctx)
        add_uars(ctx.uars)
        return ctx

    for process in range(scenario.processes):
        base = process * scenario.threads
        users: dict[int, list[int]] = {}
        for thread in range(scenario.threads):
            users.setdefault(scenario.endpoint_of(thread), []).append(base + thread)
        count = scenario.endpoint_count
        if cat is Category.MPI_EVERYWHERE:
            for thread in range(scenario.threads):
                endpoints.append(_Endpoint(new_ctx(), None, (base + thread,)))
            continue
        ctx = new_ctx()
        if cat in (Category.STATIC, Category.MPI_THREADS):
            endpoints += [_Endpoint(ctx, None, tuple(users.get(e, ()))) for e in range(count)]
            continue
        per_thread = 2 if cat is Category.TWO_X_DYNAMIC else 1
        sharing = 2 if cat is Category.SHARED_DYNAMIC else 1
        thread_tds = [[ctx.create_td(sharing) for _ in range(per_thread)] for _ in range(scenario.threads)]
        tds += scenario.threads * per_thread
        add_uars(ctx.dynamic_uars)
        for e in range(count):
            drivers = tuple(users[e])
            owner = drivers[0] - base
            endpoints.append(_Endpoint(ctx, thread_tds[owner][0], drivers))
            if per_thread == 2:
                endpoints.append(_Endpoint(ctx, thread_tds[owner][1], ()))

    placed: list[tuple[Context, int, int | None, int, tuple[int, ...]]] = []
    # CQ sharing groups consecutive endpoints of a CTX, used ones apart from
    # the spare ones of 2xDynamic.
    cq_count = 0
    in_group: Counter[tuple[int, bool]] = Counter()
    group_cq: dict[tuple[int, bool], int] = {}
    for endpoint in endpoints:
        key = (endpoint.ctx.index, bool(endpoint.threads))
        if in_group[key] % scenario.endpoints_per_cq == 0:
            group_cq[key] = cq_count
            cq_count += 1
        in_group[key] += 1
        for _ in range(scenario.connections):
            uuar = endpoint.ctx.attach_qp(len(placed), endpoint.td)
            placed.append((endpoint.ctx, uuar, endpoint.td, group_cq[key], endpoint.threads))

    bare = [
        Qp(index, ctx.index, uuar, uuar // UUARS_PER_UAR, ctx.uuars[uuar].kind, td, cq, threads, None)
        for index, (ctx, uuar, td, cq, threads) in enumerate(placed)
    ]
    qps = [replace(qp, level=level) for qp, level in zip(bare, _levels(bare))]
    return EndpointSet(scenario, provider, contexts, qps, cq_count, tds)


def model(scenario: Scenario, provider: Provider = MLX5) -> Resources:
    """The resources of a scenario."""
    return build(scenario, provider).resources()


def hardware_share(resources: Resources, baseline: Resources) -> float:
    """The paper's "% of hardware resources": UAR pages (equivalently
    data-path uUARs) against a baseline, usually MPI everywhere."""
    return resources.uars / baseline.uars


# How x-way sharing of one Verbs object across T threads is built (§V): each
# level keeps the objects above it shared as in the previous experiment.
SHARING_SWEEPS: dict[str, str] = {
    "ctx": "CTX shared x ways, one maximally independent TD-QP per thread (§V-B)",
    "ctx-2xqps": "CTX shared x ways, two maximally independent TD-QPs per thread, one used (§V-B \"2xQPs\")",
    "ctx-sharing2": "CTX shared x ways, TDs at mlx5's sharing level 2 (§V-B \"Sharing 2\")",
    "cq": "one CTX, a TD-QP per thread, CQ shared x ways (§V-E)",
    "qp": "one CTX, a TD per thread, QP shared x ways (§V-F)",
}


def sharing_scenario(kind: str, ways: int, threads: int) -> Scenario:
    """x-way sharing of one object across threads, as in Figs. 7, 9 and 11."""
    if kind not in SHARING_SWEEPS:
        raise WeftError(f"unknown sharing sweep {kind!r}; choose one of {', '.join(SHARING_SWEEPS)}")
    if isinstance(ways, bool) or not isinstance(ways, int) or ways < 1 or threads % ways:
        raise WeftError(f"{ways!r}-way sharing must divide the {threads} threads into equal groups")
    ctx_category = {"ctx": Category.DYNAMIC, "ctx-2xqps": Category.TWO_X_DYNAMIC,
                    "ctx-sharing2": Category.SHARED_DYNAMIC}
    if kind in ctx_category:
        return Scenario(ctx_category[kind], threads=ways, processes=threads // ways)
    if kind == "cq":
        return Scenario(Category.DYNAMIC, threads=threads, endpoints_per_cq=ways)
    return Scenario(Category.DYNAMIC, threads=threads, threads_per_endpoint=ways)


# weft endpoint-pool policies and the scenario each one corresponds to.
POLICY_HELP = (
    "process (MPI everywhere), dedicated-2x (2xDynamic), dedicated (Dynamic), "
    "paired or shared:2 (Shared Dynamic), shared:k (k threads per QP), static (Static), "
    "static:k (k QPs, threads round-robin), single (MPI+threads)"
)
_NAMED = {
    "process": Category.MPI_EVERYWHERE,
    "dedicated-2x": Category.TWO_X_DYNAMIC,
    "dedicated": Category.DYNAMIC,
    "paired": Category.SHARED_DYNAMIC,
    "static": Category.STATIC,
    "single": Category.MPI_THREADS,
}
# The policy that stands for each category in tables.
CATEGORY_POLICY: dict[Category, str] = {category: name for name, category in _NAMED.items()}


def policy_scenario(policy: str, threads: int) -> Scenario:
    """The scenario of a weft policy string for threads threads.

    shared:1 is dedicated and shared:2 is paired (Shared Dynamic: mlx5 lets
    two threads' TDs share a UAR page). mlx5 has no TD sharing level beyond 2,
    so for k >= 3, shared:k is what weft does with the worker: ceil(T/k) QPs
    created in one CTX without TDs, each driven by k consecutive threads
    (Fig. 4(b) level 4), the QPs placed on the static uUARs; shared:k with
    k >= T is single. static:k is a fixed pool of k such QPs with thread t on
    QP t mod k (static:T is Static, static:1 is single)."""
    check_count("threads", threads)
    if not isinstance(policy, str):
        raise WeftError(f"policy must be a string, got {policy!r}")
    if policy in _NAMED:
        return Scenario(_NAMED[policy], threads)
    match = re.fullmatch(r"(shared|static):([0-9]+)", policy)
    if not match:
        raise WeftError(f"unknown endpoint policy {policy!r}; expected {POLICY_HELP}")
    kind, k = match.group(1), int(match.group(2))
    if k < 1:
        raise WeftError(f"policy {policy!r}: k must be >= 1")
    if kind == "static":
        return Scenario(Category.STATIC, threads, endpoints=k)
    if k == 1:
        return Scenario(Category.DYNAMIC, threads)
    if k == 2:
        return Scenario(Category.SHARED_DYNAMIC, threads)
    if k >= threads:
        return Scenario(Category.MPI_THREADS, threads)
    return Scenario(Category.STATIC, threads, threads_per_endpoint=k)


def for_policy(policy: str, threads: int, *, cq_sharing: int = 1) -> dict[str, Any]:
    """Modelled mlx5 resources of a weft endpoint-pool policy with threads
    threads in one process, cq_sharing endpoints per completion queue (1:
    every endpoint's completions private): a JSON-ready dict with the counts of Resources
    (ctxs, pds, mrs, tds, qps, cqs, uars, uuars, static_uars, dynamic_uars,
    wasted_uars, wasted_uuars, wasted_qps, bytes, bytes_ctx_qp_cq, levels),
    plus policy, category, threads, cq_sharing, model ("mlx5") and
    hw_share_of_process, the fraction of MPI everywhere's UAR pages it uses
    (None, with a "baseline_note" saying why, when MPI everywhere with as
    many threads exceeds the device).
    Raises WeftError on a malformed policy, threads < 1, cq_sharing < 1, or a
    set mlx5 could not create."""
    check_count("cq_sharing", cq_sharing)
    scenario = replace(policy_scenario(policy, threads), endpoints_per_cq=cq_sharing)
    resources = model(scenario)
    # The baseline may not fit on the device when the policy asked for does
    # (MPI everywhere needs a CTX per thread): the policy's figures stand on
    # their own, and the share is then unknown, with the reason.
    try:
        share: float | None = hardware_share(resources, model(Scenario(Category.MPI_EVERYWHERE, threads)))
        note = None
    except WeftError as exc:
        share, note = None, f"no share of MPI everywhere: {exc}"
    return {
        "model": "mlx5",
        "policy": policy,
        "category": scenario.category.value,
        "threads": threads,
        "cq_sharing": cq_sharing,
        **resources.as_dict(),
        "hw_share_of_process": share,
        **({"baseline_note": note} if note else {}),
    }
