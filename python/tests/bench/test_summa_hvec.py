"""`weft bench summa` / `weft bench hvec` and their `weft project` forms:
argument parsing, the default configurations, factors, the reports on
hand-made results, and a tiny real run of each program."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import RenderableType

from weft import WeftError, cli
from weft.bench import hvec as bench_hvec
from weft.bench import summa as bench_summa

from conftest import REAL_BUILD_DIR, real_program


def summa_run(variant: str, groups: int, total: float, comm: float = 1e-6, comp: float = 2e-6) -> dict[str, Any]:
    return {"variant": variant, "groups": groups, "group_grid": [1, groups], "total_s": total, "comm_s": comm,
            "comp_s": comp, "comm_max_s": comm, "max_abs_err": 1e-15, "verified": True}


def summa_entry(**extra: Any) -> dict[str, Any]:
    return {"benchmark": "summa", "nranks": 4, "grid": [2, 2], "n": 64, "block": 8, "err_bound": 1e-12,
            "runs": [summa_run("simple", 1, 8e-6), summa_run("hier", 2, 4e-6), summa_run("topo", 2, 2e-6)],
            "verified": True, **extra}


def hvec_run(name: str, times: dict[int, float]) -> dict[str, Any]:
    return {"name": name, "config": "2,2", "levels": [{"type": "conf", "comms": 1, "sizes": [2]}],
            "points": [{"size": s, "time_s": t} for s, t in times.items()]}


def test_cli_parses_the_bench_and_project_forms() -> None:
    parser = cli.build_parser()
    args = parser.parse_args(["bench", "summa", "--ranks", "2", "4", "--n", "96", "--groups", "2,4"])
    assert (args.smpi, args.ranks, args.n, args.groups) == (False, [2, 4], 96, "2,4")
    args = parser.parse_args(["project", "summa", "--platforms", "NTW10E5", "--flop-rate", "12.5"])
    assert (args.smpi, args.platforms, args.flop_rate) == (True, ["NTW10E5"], 12.5)
    args = parser.parse_args(["project", "hvec"])
    assert args.smpi and args.platforms == ["NTW24E5"]
    args = parser.parse_args(["bench", "hvec", "--confs", "2,2/4", "--sizes", "1,8"])
    assert (args.smpi, args.confs, args.sizes) == (False, "2,2/4", "1,8")


def test_summa_factors_are_simple_over_each_variant() -> None:
    fac = bench_summa.factors(summa_entry()["runs"])
    assert fac == {"simple": 1.0, "hier 2 groups": 2.0, "topological (2 groups)": 4.0}


def test_summa_factors_need_a_simple_run() -> None:
    with pytest.raises(WeftError, match="no usable simple run"):
        bench_summa.factors([summa_run("hier", 2, 1e-6)])


def test_summa_default_groups_divide_the_ranks() -> None:
    assert bench_summa.default_groups(8) == "2,4,8"
    assert bench_summa.default_groups(2) == "2"


def test_summa_emulates_nodes_only_beyond_the_cores() -> None:
    assert "WEFT_TOPO_NODE" not in bench_summa.real_env(1)
    env = bench_summa.real_env(1000)
    assert env["WEFT_TOPO_NODE"] == "block:node%d:500" and env["OMPI_MCA_coll_tuned_bcast_algorithm"] == "5"


def test_summa_flop_rate_from_a_measured_run() -> None:
    document = {"entries": [summa_entry(), summa_entry(nranks=8, oversubscribed=True)]}
    # 2 * 64^3 flops over 4 ranks, 2 us each: 65.536 GFLOP/s (the oversubscribed run is ignored)
    assert bench_summa.flop_rate(document) == pytest.approx(2 * 64 ** 3 / 4 / 2e-6 / 1e9)
    with pytest.raises(WeftError, match="give --flop-rate"):
        bench_summa.flop_rate({"entries": [summa_entry(oversubscribed=True)]})


def test_summa_report_labels_simulation(render_text: Callable[[RenderableType], str]) -> None:
    document = {"simulated": True, "flop_rate_gflops": 10.0, "flop_rate_source": "given",
                "entries": [summa_entry(platform="NTW10E5", paper_factor=12.0)]}
    text = render_text(bench_summa.render(document))
    assert "SIMULATED" in text and "12×" in text and "4.00×" in text and "10 GFLOP/s" in text


def test_summa_project_sweeps_orders_and_picks_the_broadcast() -> None:
    args = cli.build_parser().parse_args(["project", "summa"])
    assert args.smpi_n == [240, 960, 3840] and args.smpi_block == [8, 32, 128] and args.bcast == "binomial"
    assert "topo" in bench_summa.SMPI_BCAST["binomial"][1].split(",")
    # SimGrid's NTSB cannot create the one-rank communicators of the full hierarchy
    assert "topo" not in bench_summa.SMPI_BCAST["binary"][1].split(",")
    args = cli.build_parser().parse_args(["project", "summa", "--smpi-n", "240", "960", "--bcast", "binary",
                                          "--by-node"])
    assert (args.smpi_n, args.bcast, args.by_node) == ([240, 960], "binary", True)


def test_summa_summary_per_machine_and_order(render_text: Callable[[RenderableType], str]) -> None:
    runs = [summa_run("simple", 1, 8e-6, comm=6e-6, comp=2e-6), summa_run("hier", 2, 4e-6),
            summa_run("topo2", 2, 4e-6), summa_run("topo", 2, 2e-6)]
    document = {"simulated": True, "flop_rate_gflops": 7.0, "flop_rate_source": "given", "bcast": "binomial",
                "entries": [summa_entry(platform="SMP12E5", paper_factor=6.0, runs=runs),
                            summa_entry(platform="SMP12E5", paper_factor=6.0, n=960, runs=runs, by_node=6)]}
    rows = bench_summa.summary(document)
    assert list(rows) == ["SMP12E5 n=64", "SMP12E5 n=960 by node"]
    assert rows["SMP12E5 n=64"] == {"topological": 4.0, "topological_2": 2.0, "best_hier": 2.0,
                                    "bcast_share": 0.75, "paper": 6.0}
    text = render_text(bench_summa.render(document))
    assert "topological 2 levels (2 groups)" in text and "75%" in text and "broadcast: binomial" in text


def test_summa_run_json_accepts_an_unchecked_charged_run(tmp_path: Path,
                                                         render_text: Callable[[RenderableType], str]) -> None:
    def launch(argv: list[str]) -> None:
        Path(argv[argv.index("--json") + 1]).write_text('{"runs": [], "checked": false, "verified": null}')

    assert bench_summa.run_json("prog", ["prog"], launch)["checked"] is False
    run = {**summa_run("simple", 1, 1e-6), "verified": None}
    assert "not computed" in render_text(bench_summa.entry_table(summa_entry(platform="NTW10E5", runs=[run]), True))


def test_summa_project_needs_a_panel_width_per_order() -> None:
    args = cli.build_parser().parse_args(["project", "summa", "--smpi-n", "240", "960", "--smpi-block", "8", "16",
                                          "32", "--flop-rate", "7"])
    with pytest.raises(WeftError, match="3 panel widths for 2 orders"):
        bench_summa.command_smpi(args)


def test_hvec_by_node_reaches_the_program() -> None:
    args = cli.build_parser().parse_args(["project", "hvec", "--by-node", "24"])
    assert bench_hvec.by_node(args) == ["--by-node", "24"]
    assert bench_hvec.by_node(cli.build_parser().parse_args(["project", "hvec"])) == []


def test_summa_run_json_rejects_unverified(tmp_path: Path) -> None:
    def launch(argv: list[str]) -> None:
        Path(argv[argv.index("--json") + 1]).write_text('{"runs": [], "verified": false}')

    with pytest.raises(WeftError, match="not verified"):
        bench_summa.run_json("prog", ["prog"], launch)


def test_hvec_default_confs() -> None:
    assert bench_hvec.default_confs(576) == bench_hvec.PAPER_CONFS
    assert bench_hvec.default_confs(8) == "2,2,2/2,4/4,2/8"
    assert bench_hvec.default_confs(2) == "2"
    assert all(a * b * c == 576 for a, b, c in bench_hvec.factorizations(576, 3))


def test_hvec_speedups_are_conf_over_topo(render_text: Callable[[RenderableType], str]) -> None:
    runs = [hvec_run("H_topo", {1: 1e-6, 8: 2e-6}), hvec_run("H_conf1", {1: 3e-6, 8: 2e-6})]
    assert bench_hvec.speedups(runs) == {1: {"H_conf1": 3.0}, 8: {"H_conf1": 1.0}}
    document = {"simulated": True, "entries": [{"platform": "NTW24E5", "nranks": 576, "verified": True,
                                                "paper_speedup": 10.0, "runs": runs}]}
    text = render_text(bench_hvec.speedup_table(document))
    assert "SIMULATED" in text and "3.00×" in text and "≈10×" in text


def test_hvec_speedups_need_h_topo() -> None:
    with pytest.raises(WeftError, match="no usable H_topo"):
        bench_hvec.speedups([hvec_run("H_conf1", {1: 1e-6})])


@pytest.mark.skipif(not all(real_program(name) for name in ("weft_bench_summa", "weft_bench_hvec")),
                    reason="no $WEFT_BUILD_DIR/libexec/weft/weft_bench_summa or weft_bench_hvec")
def test_real_tiny_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                        render_text: Callable[[RenderableType], str]) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    assert cli.main(["bench", "summa", "--ranks", "2", "--n", "48", "--block", "8", "--rounds", "1"]) == 0
    document = bench_summa.results.load_latest("summa", tmp_path)
    assert [r["variant"] for r in document["entries"][0]["runs"]] == ["simple", "hier", "topo2", "topo"]
    assert all(r["max_abs_err"] <= document["entries"][0]["err_bound"] for r in document["entries"][0]["runs"])
    assert "SUMMA 2 ranks" in render_text(bench_summa.render(document))
    assert cli.main(["bench", "hvec", "--ranks", "4", "--sizes", "1,100", "--iters", "1"]) == 0
    document = bench_summa.results.load_latest("hvec", tmp_path)
    entry = document["entries"][0]
    assert entry["oversubscribed"] and entry["verified"]
    assert [r["name"] for r in entry["runs"]] == ["H_topo", "H_conf1", "H_conf2"]
    assert list(tmp_path.glob("hvec-*.png"))
