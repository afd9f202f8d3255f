"""The mlx5 resource model against every allocation figure the scalable
endpoints paper states. Each expected value is the paper's; the model must
reach it by its own arithmetic."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from weft import WeftError
from weft.models import mlx5
from weft.models.mlx5 import KIB, MIB, Category, Context, Provider, Scenario, build, model, sharing_scenario

T16 = 16


def share(category: Category, threads: int = T16) -> Fraction:
    """Exact fraction of MPI everywhere's hardware resources (UAR pages)."""
    base = model(Scenario(Category.MPI_EVERYWHERE, threads))
    used = model(Scenario(category, threads))
    assert Fraction(used.uuars, base.uuars) == Fraction(used.uars, base.uars)
    return Fraction(used.uars, base.uars)


def test_section_7_shares_of_mpi_everywhere_hardware_resources() -> None:
    assert share(Category.TWO_X_DYNAMIC) == Fraction(3125, 10000)
    assert share(Category.DYNAMIC) == Fraction(1875, 10000)
    assert share(Category.SHARED_DYNAMIC) == Fraction(125, 1000)
    assert share(Category.STATIC) == Fraction(625, 10000)
    assert share(Category.MPI_THREADS) == Fraction(625, 10000)


def test_2xdynamic_uses_3_2x_fewer_resources_than_mpi_everywhere() -> None:
    # §I contribution (3) and §IX: "3.2x fewer resources", "only 31.25% as many".
    assert 1 / share(Category.TWO_X_DYNAMIC) == Fraction(32, 10)


def test_for_policy_gives_the_paper_percentages() -> None:
    expected = {"process": 1.0, "dedicated-2x": 0.3125, "dedicated": 0.1875, "paired": 0.125,
                "shared:2": 0.125, "static": 0.0625, "single": 0.0625}
    for policy, fraction in expected.items():
        result = mlx5.for_policy(policy, T16)
        assert result["hw_share_of_process"] == fraction, policy
        assert {"uars", "uuars", "qps", "cqs", "bytes"} <= result.keys()
    json.dumps(mlx5.for_policy("dedicated-2x", T16))


def test_ctx_sharing_16_way_with_2xqps_uses_80_instead_of_288_uuars() -> None:
    # §V summary: same performance as independent CTXs with 80 uUARs, not 288;
    # maximally independent TDs 6x fewer, "Sharing 2" 9x fewer.
    naive = model(sharing_scenario("ctx", 1, T16)).uuars
    assert naive == 288
    assert model(sharing_scenario("ctx-2xqps", T16, T16)).uuars == 80
    assert Fraction(naive, model(sharing_scenario("ctx", T16, T16)).uuars) == 6
    assert Fraction(naive, model(sharing_scenario("ctx-sharing2", T16, T16)).uuars) == 9


def test_naive_td_endpoint_per_ctx_uses_9_uars_18_uuars_and_wastes_94_percent() -> None:
    # §III and §IV (Fig. 3): 9 UARs, 18 uUARs per CTX; one uUAR out of 18 used.
    for threads in (1, 4, T16):
        naive = model(sharing_scenario("ctx", 1, threads))
        assert (naive.ctxs, naive.uars, naive.uuars) == (threads, 9 * threads, 18 * threads)
        assert naive.qps == naive.cqs == threads
        assert naive.wasted_uuars == 17 * threads
    assert round(100 * Fraction(17, 18)) == 94


def test_mpi_everywhere_wastes_93_75_percent_per_context() -> None:
    # Fig. 2(a), §VI ("only 1 of the 16 allocated uUARs is used per thread"), §VIII.
    res = model(Scenario(Category.MPI_EVERYWHERE, T16))
    assert Fraction(res.wasted_uuars, res.uuars) == Fraction(9375, 10000)
    assert res.uars == 8 * T16 and res.qps == res.cqs == T16


def test_mpi_everywhere_qps_get_low_latency_uuars_on_distinct_pages() -> None:
    qps = build(Scenario(Category.MPI_EVERYWHERE, 4)).qps
    assert {qp.kind for qp in qps} == {"low"}
    assert len({(qp.ctx, qp.uar) for qp in qps}) == 4
    assert {qp.level for qp in qps} == {1}


def test_fig3_memory_of_qps_and_cqs_89_kib_to_1_39_mib() -> None:
    p = mlx5.MLX5
    for threads, expected in ((1, "89"), (T16, "1.39")):
        res = model(sharing_scenario("ctx", 1, threads))
        qp_cq = res.qps * p.qp_bytes + res.cqs * p.cq_bytes
        shown = f"{qp_cq / KIB:.0f}" if threads == 1 else f"{qp_cq / MIB:.2f}"
        assert shown == expected


def test_table_1_total_and_ctx_share() -> None:
    p = mlx5.MLX5
    one = model(Scenario(Category.MPI_EVERYWHERE, 1))
    assert (one.ctxs, one.pds, one.mrs, one.qps, one.cqs) == (1, 1, 1, 1, 1)
    assert round(one.bytes / KIB) == 345
    # "the CTX occupying 74.2%" of the table's (rounded) total.
    assert f"{100 * p.ctx_bytes / (round(one.bytes / KIB) * KIB):.1f}" == "74.2"


def test_section_3_device_limits() -> None:
    p = mlx5.MLX5
    naive_uars = model(sharing_scenario("ctx", 1, 1)).uars
    # The paper says 907 CTXs; 8K pages / 9 per CTX is 910 (see docs/endpoints-mlx5-model.md).
    assert p.device_uars // naive_uars == 910
    # "more than 56 other cores ... we will run out ... within one socket (16 cores)".
    assert p.device_uars // (naive_uars * T16) == 56
    model(Scenario(Category.DYNAMIC, 1, processes=910))
    with pytest.raises(WeftError, match="more than 8192 UAR pages"):
        model(Scenario(Category.DYNAMIC, 1, processes=911))
    assert model(Scenario(Category.MPI_EVERYWHERE, 1024)).uars == 8192
    with pytest.raises(WeftError, match="more than 8192 UAR pages"):
        mlx5.for_policy("process", 10**6)


def test_ctx_limits_256_independent_tds_512_dynamic_uars() -> None:
    assert mlx5.for_policy("dedicated", 256)["dynamic_uars"] == 256
    with pytest.raises(WeftError, match="256 maximally independent TDs"):
        mlx5.for_policy("dedicated", 257)
    with pytest.raises(WeftError, match="256"):
        mlx5.for_policy("dedicated-2x", 129)
    assert mlx5.for_policy("paired", 1024)["dynamic_uars"] == 512
    with pytest.raises(WeftError, match="512 dynamically allocated UAR pages"):
        mlx5.for_policy("paired", 1025)


def test_independent_td_adds_1_uar_in_shared_ctx_9_in_its_own() -> None:
    # §V-B resource usage; sharing level 2 takes 2x fewer dynamic UARs.
    shared = [model(Scenario(Category.DYNAMIC, n)).uars for n in (1, 2, 3)]
    assert [b - a for a, b in zip(shared, shared[1:])] == [1, 1]
    assert model(sharing_scenario("ctx", 1, 2)).uars - model(sharing_scenario("ctx", 1, 1)).uars == 9
    dynamic = model(Scenario(Category.DYNAMIC, T16)).dynamic_uars
    assert Fraction(dynamic, model(Scenario(Category.SHARED_DYNAMIC, T16)).dynamic_uars) == 2
    # "each of the extra 16 maximally independent TDs allocates its own QP and UAR".
    one, two = model(sharing_scenario("ctx", T16, T16)), model(sharing_scenario("ctx-2xqps", T16, T16))
    assert (two.qps - one.qps, two.uars - one.uars, two.tds - one.tds) == (16, 16, 16)


def test_section_6_waste_per_category() -> None:
    for threads in (1, 5, T16):
        two_x = model(Scenario(Category.TWO_X_DYNAMIC, threads))
        # Each thread wastes 1 dynamic UAR, 3 uUARs, 1 QP; the 8 static UARs / 16 uUARs too.
        assert two_x.wasted_uars == 8 + threads
        assert two_x.wasted_uuars == 16 + 3 * threads
        assert two_x.wasted_qps == threads
        dynamic = model(Scenario(Category.DYNAMIC, threads))
        assert dynamic.wasted_uuars == 16 + threads and dynamic.wasted_uars == 8
        single = model(Scenario(Category.MPI_THREADS, threads))
        assert (single.uars, single.uuars, single.qps, single.cqs) == (8, 16, 1, 1)
    for threads in (2, 6, T16):
        shared = model(Scenario(Category.SHARED_DYNAMIC, threads))
        assert shared.dynamic_uars == threads // 2 and shared.uuars - 16 == threads
        assert shared.wasted_uars == 8 and shared.wasted_uuars == 16


def test_section_6_qp_and_cq_memory() -> None:
    p = mlx5.MLX5

    def qp_cq(category: Category) -> int:
        res = model(Scenario(category, T16))
        return res.qps * p.qp_bytes + res.cqs * p.cq_bytes

    everywhere = qp_cq(Category.MPI_EVERYWHERE)
    assert qp_cq(Category.TWO_X_DYNAMIC) == 2 * everywhere
    for category in (Category.DYNAMIC, Category.SHARED_DYNAMIC, Category.STATIC):
        assert qp_cq(category) == everywhere
    assert qp_cq(Category.MPI_THREADS) == min(qp_cq(c) for c in mlx5.CATEGORIES)


def test_static_with_16_qps_5th_and_16th_share_a_uuar() -> None:
    endpoints = build(Scenario(Category.STATIC, T16))
    assert endpoints.shared_uuars() == [(5, 16)]
    levels = {qp.index + 1: qp.level for qp in endpoints.qps}
    assert levels[5] == levels[16] == 3
    assert all(level == 2 for index, level in levels.items() if index not in (5, 16))
    assert [qp.uuar for qp in endpoints.qps[:4]] == [12, 13, 14, 15]


def test_static_wastes_only_below_16_threads_but_never_uses_uuar0() -> None:
    for threads in range(1, 20):
        res = model(Scenario(Category.STATIC, threads))
        assert res.uars == 8
        assert res.wasted_uuars == max(16 - threads, 1)
        if threads >= T16:
            assert res.wasted_uars == 0


def test_appendix_b_figure_16_six_static_uuars_two_low_latency() -> None:
    ctx = Context(0, Provider(total_uuars=6, low_latency_uuars=2))
    assert [ctx.attach_qp(qp) for qp in range(7)] == [4, 5, 1, 2, 3, 1, 2]
    tds = [ctx.create_td(2) for _ in range(3)]
    assert [ctx.attach_qp(7 + td, td) for td in tds] == [6, 7, 8]
    assert ctx.uars == 5 and ctx.dynamic_uars == 2


def test_high_latency_uuar_only_when_all_others_are_low_latency() -> None:
    qps = build(Scenario(Category.STATIC, 17), Provider(low_latency_uuars=15)).qps
    assert [qp.uuar for qp in qps] == list(range(1, 16)) + [0, 0]
    assert qps[-1].kind == "high"
    assert 0 not in {qp.uuar for qp in build(Scenario(Category.STATIC, 40)).qps}


def test_stencil_static_sharing_levels() -> None:
    # §VII: 4.4 — the fifth QP of each CTX's eight gets level 1, eight such QPs
    # in total; 1.16 — 28 of the 32 QPs of the CTX share a uUAR (level 3).
    four = model(Scenario(Category.STATIC, 4, processes=4, connections=2))
    assert four.levels[0] == 8 and four.qps == 32
    assert build(Scenario(Category.STATIC, 4, processes=4, connections=2)).qps[4].level == 1
    one = model(Scenario(Category.STATIC, T16, processes=1, connections=2))
    assert one.qps == 32 and one.levels[2] == 28


def test_stencil_qp_cq_and_hardware_counts() -> None:
    splits = [(16, 1), (8, 2), (4, 4), (2, 8), (1, 16)]

    def stencil(category: Category, ranks: int, threads: int) -> mlx5.Resources:
        return model(Scenario(category, threads, processes=ranks, connections=2))

    for category in mlx5.CATEGORIES:
        for ranks, threads in splits:
            res = stencil(category, ranks, threads)
            assert res.qps == 2 * res.cqs
    # 16.1: same QPs and CQs everywhere but 2xDynamic (2x); more hardware in
    # the TD categories, which waste the static pages of every process.
    base = stencil(Category.MPI_EVERYWHERE, 16, 1)
    for category in mlx5.CATEGORIES:
        res = stencil(category, 16, 1)
        factor = 2 if category is Category.TWO_X_DYNAMIC else 1
        assert (res.qps, res.cqs) == (factor * base.qps, factor * base.cqs)
        assert (res.uars > base.uars) == (category in mlx5.TD_CATEGORIES)
    # Hybrid splits: QPs and CQs do not depend on the split except in MPI+threads.
    for category in mlx5.CATEGORIES:
        counts = {(stencil(category, r, t).qps, stencil(category, r, t).cqs) for r, t in splits}
        assert (len(counts) == 1) == (category is not Category.MPI_THREADS)
        uars = [stencil(category, r, t).uars for r, t in splits]
        assert uars == sorted(uars, reverse=True)


def test_section_7_memory_5_39_mib_vs_1_64_mib() -> None:
    everywhere = model(Scenario(Category.MPI_EVERYWHERE, T16, mrs_per_thread=3))
    dynamic = model(Scenario(Category.DYNAMIC, T16, mrs_per_thread=3))
    assert f"{everywhere.bytes_ctx_qp_cq / MIB:.2f}" == "5.39"
    assert f"{dynamic.bytes_ctx_qp_cq / MIB:.2f}" == "1.64"
    assert dynamic.mrs == 48 and dynamic.pds == 1
    single = model(Scenario(Category.MPI_THREADS, T16))
    assert single.bytes == min(model(Scenario(c, T16)).bytes for c in mlx5.CATEGORIES)


def test_cq_and_qp_sharing_memory_and_hardware() -> None:
    p = mlx5.MLX5
    private = model(sharing_scenario("cq", 1, T16))
    cq16 = model(sharing_scenario("cq", T16, T16))
    # §V-E: 16-way CQ sharing improves memory usage by 1.1x; no hardware change.
    assert f"{private.bytes / cq16.bytes:.1f}" == "1.1"
    assert (cq16.cqs, cq16.uars, cq16.uuars) == (1, private.uars, private.uuars)
    # §V-F: 16-way QP sharing cuts QP and CQ memory 16x; hardware unchanged.
    qp16 = model(sharing_scenario("qp", T16, T16))
    assert private.qps * p.qp_bytes + private.cqs * p.cq_bytes == 16 * (qp16.qps * p.qp_bytes + qp16.cqs * p.cq_bytes)
    assert (qp16.uars, qp16.uuars, qp16.levels[3]) == (private.uars, private.uuars, 1)


def test_shared_k_and_static_k_mapping() -> None:
    assert mlx5.for_policy("shared:1", 8) == {**mlx5.for_policy("dedicated", 8), "policy": "shared:1"}
    assert mlx5.for_policy("shared:2", 8) == {**mlx5.for_policy("paired", 8), "policy": "shared:2"}
    four = mlx5.for_policy("shared:4", T16)
    assert (four["qps"], four["uars"], four["levels"]["4"]) == (4, 8, 4)
    # As weft's shared:k: thread t on endpoint t // k.
    three = build(mlx5.policy_scenario("shared:3", T16))
    assert [len(qp.threads) for qp in three.qps] == [3, 3, 3, 3, 3, 1]
    assert [qp.level for qp in three.qps] == [4, 4, 4, 4, 4, 1]
    assert mlx5.for_policy("shared:99", 4)["category"] == "MPI+threads"
    assert {k: v for k, v in mlx5.for_policy("static:16", T16).items() if k != "policy"} == \
        {k: v for k, v in mlx5.for_policy("static", T16).items() if k != "policy"}
    rr = build(mlx5.policy_scenario("static:3", 7))
    assert [qp.threads for qp in rr.qps] == [(0, 3, 6), (1, 4), (2, 5)]
    spare = mlx5.for_policy("static:8", 4)
    assert (spare["qps"], spare["wasted_qps"]) == (8, 4)


def test_cq_sharing_of_a_policy_changes_cqs_and_memory_not_hardware() -> None:
    private = mlx5.for_policy("dedicated", T16)
    shared = mlx5.for_policy("dedicated", T16, cq_sharing=4)
    assert (private["cqs"], shared["cqs"], shared["cq_sharing"]) == (16, 4, 4)
    assert shared["uars"] == private["uars"] and shared["qps"] == private["qps"]
    assert private["bytes"] - shared["bytes"] == 12 * mlx5.MLX5.cq_bytes
    two_x = build(Scenario(Category.TWO_X_DYNAMIC, 4, endpoints_per_cq=2)).qps
    assert [qp.cq for qp in two_x if qp.threads] == [0, 0, 2, 2]
    assert [qp.cq for qp in two_x if not qp.threads] == [1, 1, 3, 3]
    # A CQ is shared only within a CTX (§V-E): MPI everywhere keeps one per thread.
    assert mlx5.for_policy("process", T16, cq_sharing=4)["cqs"] == T16
    with pytest.raises(WeftError, match="cq_sharing must be an integer >= 1, got 0"):
        mlx5.for_policy("dedicated", T16, cq_sharing=0)


@pytest.mark.parametrize("policy", ["", "bogus", "Process", " process", "shared", "shared:", "shared:0",
                                    "shared:-1", "shared:x", "shared:2:3", "static:0", "static:", "single:2"])
def test_malformed_policy_is_rejected(policy: str) -> None:
    with pytest.raises(WeftError, match="policy"):
        mlx5.for_policy(policy, 4)


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "4", None])
def test_bad_thread_count_is_rejected(threads: object) -> None:
    with pytest.raises(WeftError, match="threads must be an integer >= 1"):
        mlx5.for_policy("dedicated", threads)  # type: ignore[arg-type]


def test_bad_model_parameters_are_rejected() -> None:
    with pytest.raises(WeftError, match="policy must be a string"):
        mlx5.for_policy(None, 4)  # type: ignore[arg-type]
    with pytest.raises(WeftError, match="total_uuars"):
        Provider(total_uuars=7)
    with pytest.raises(WeftError, match="low_latency_uuars must be 0..15"):
        Provider(low_latency_uuars=16)
    with pytest.raises(WeftError, match="processes"):
        Scenario(Category.STATIC, 4, processes=0)
    with pytest.raises(WeftError, match="mrs_per_thread"):
        Scenario(Category.STATIC, 4, mrs_per_thread=-1)
    with pytest.raises(WeftError, match="not both"):
        Scenario(Category.STATIC, 4, endpoints=2, threads_per_endpoint=2)
    with pytest.raises(WeftError, match="threads_per_endpoint must be an integer >= 1"):
        Scenario(Category.STATIC, 4, threads_per_endpoint=0)
    with pytest.raises(WeftError, match="endpoints must be"):
        Scenario(Category.STATIC, 4, endpoints=0)
    with pytest.raises(WeftError, match="own CTX"):
        Scenario(Category.MPI_EVERYWHERE, 4, endpoints=2)
    with pytest.raises(WeftError, match="one endpoint per process"):
        Scenario(Category.MPI_THREADS, 4, endpoints=2)
    with pytest.raises(WeftError, match="at least as many threads"):
        Scenario(Category.DYNAMIC, 4, endpoints=5)
    with pytest.raises(WeftError, match="sharing level 1 or 2"):
        Context(0, mlx5.MLX5).create_td(3)
    with pytest.raises(WeftError, match="unknown sharing sweep"):
        sharing_scenario("pd", 2, T16)
    with pytest.raises(WeftError, match="3-way sharing"):
        sharing_scenario("cq", 3, T16)
