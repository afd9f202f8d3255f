from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType

from conftest import REAL_BUILD_DIR, real_program
from weft import WeftError, cli
from weft.bench import rma as bench_rma
from weft.core import results, runner

# A stand-in for mpiexec.mpich: runs the program on "-np" ranks one after
# the other, each with the "-genv" variables set.
FAKE_MPIEXEC = """
import os, subprocess, sys
args = sys.argv[1:]
assert args[0] == "-np"
nranks, args = int(args[1]), args[2:]
env = dict(os.environ)
while args[0] == "-genv":
    env[args[1]] = args[2]
    args = args[3:]
for rank in range(nranks):
    status = subprocess.run(args, env=env | {"RANK": str(rank)}).returncode
    if status:
        sys.exit(status)
"""

# A stand-in for weft_bench_rma: rank 0 writes the results, naming the
# transport after UCX_TLS and OMPI_MCA_btl and recording its arguments; with
# --busy-target, gets from a computing target are slow without the progress
# thread.
FAKE_BENCH = """
import json, os, sys
args = sys.argv[1:]
if os.environ["RANK"] == "0":
    tls = os.environ.get("UCX_TLS", "default")
    btl = os.environ.get("OMPI_MCA_btl", "default")
    extra = {}
    if "--busy-target" in args:
        thread = os.environ["WEFT_PROGRESS_THREAD"] == "1"
        impl = "weft+progress-thread" if thread else "weft"
        # bound to rank 0's CPU (FAKE_SPARE_CPU: the one the program reports), faster
        bound = os.environ.get("WEFT_PROGRESS_BIND", "rank") != "rank"
        results = [
            {"impl": impl, "op": "get_lat_busy", "size": 8, "value": 12.0 if bound else 30.0 if thread else 1100.0,
             "unit": "us"},
            {"impl": impl, "op": "get_max_busy", "size": 8, "value": 60.0 if thread else 500000.0, "unit": "us"},
        ]
        if "FAKE_SPARE_CPU" in os.environ:
            bind = os.environ.get("WEFT_PROGRESS_BIND", "spare")
            extra = {"rank0_cpu": int(os.environ["FAKE_SPARE_CPU"]), "target_cpus": "1",
                     "target_thread_cpus": ("1" if bind == "rank" else bind) if thread else ""}
            results += [{"impl": impl, "op": "get_lat_idle", "size": 8, "value": 15.0 if thread else 6.0, "unit": "us"},
                        {"impl": "threads", "op": "wake_same_core", "size": 8, "value": 1.5, "unit": "us"},
                        {"impl": "threads", "op": "wake_other_core", "size": 8, "value": 20.0, "unit": "us"},
                        {"impl": "threads", "op": "wake_busy_core", "size": 8, "value": 25.0, "unit": "us"}]
    else:
        results = [
            {"impl": "weft", "op": "put_rate", "size": 8, "value": 20.0, "unit": "Mmsg/s"},
            {"impl": "ucx", "op": "put_rate", "size": 8, "value": 25.0, "unit": "Mmsg/s"},
            {"impl": "weft", "op": "put_lat", "size": 8, "value": 0.5, "unit": "us"},
            {"impl": "mpi-rma", "op": "put_lat", "size": 8, "value": 1.0, "unit": "us"},
        ]
    transport = f"tls={tls} btl={btl} args={' '.join(args[2:])}"
    doc = {"benchmark": "rma", "nranks": 2, "transport": transport, "results": results, **extra}
    with open(args[args.index("--json") + 1], "w") as out:
        json.dump(doc, out)
"""


def test_rows_group_by_operation_and_size_in_a_stable_order(rma_run: dict[str, Any]) -> None:
    rows = bench_rma.parse_rows(rma_run["results"])
    assert [(r.op, r.size) for r in rows] == [
        ("put_lat", 8), ("put_lat", 4096), ("get_lat", 8), ("pingpong_lat", 8), ("put_rate", 8), ("msg_rate", 8),
    ]
    assert rows[0].values == {"weft": 0.5, "ucx": 0.52, "mpi-rma": 1.5}
    assert rows[0].label == "put latency 8 B"


def test_ratios_are_weft_advantage_and_none_when_missing(rma_run: dict[str, Any]) -> None:
    rows = {(r.op, r.size): r for r in bench_rma.parse_rows(rma_run["results"])}
    assert rows["put_rate", 8].ratio("ucx") == pytest.approx(0.95)
    assert rows["put_rate", 8].ratio("mpi-rma") == pytest.approx(28.5 / 24.0)
    assert rows["put_rate", 8].ratio("mpi-2sided") is None
    assert rows["put_lat", 8].ratio("mpi-rma") == pytest.approx(3.0)
    assert rows["get_lat", 8].ratio("ucx") == pytest.approx(0.7 / 0.8)
    assert rows["pingpong_lat", 8].ratio("mpi-2sided") == pytest.approx(2.0)
    assert all(rows["put_lat", 4096].ratio(peer) is None for peer in bench_rma.PEER_GOALS)


def test_unknown_operations_come_last_and_keep_their_name() -> None:
    rows = bench_rma.parse_rows(
        [
            {"impl": "weft", "op": "amo_lat", "size": 8, "value": 1.0, "unit": "us"},
            {"impl": "weft", "op": "put_rate", "size": 8, "value": 1.0, "unit": "Mmsg/s"},
        ]
    )
    assert [r.label for r in rows] == ["put rate 8 B", "amo_lat 8 B"]


@pytest.mark.parametrize("entries", [None, [{"impl": "weft", "op": "put_rate", "size": 8}]])
def test_malformed_results_are_errors(entries: Any) -> None:
    with pytest.raises(WeftError, match="weft_bench_rma"):
        bench_rma.parse_rows(entries)


def test_report_has_a_latency_and_a_rate_table_with_notes(rma_run: dict[str, Any], render_text) -> None:
    text = render_text(bench_rma.run_report(rma_run))
    latency, rate = text.split("shm: rate in Mmsg/s, vs X = weft ÷ X")
    assert "shm: latency in µs, vs X = X ÷ weft" in latency

    def row(part: str, *cells: str) -> list[str]:
        line = next(line for line in part.splitlines() if line.split()[: len(cells)] == list(cells))
        return line.split()

    assert row(rate, "put", "8", "B") == ["put", "8", "B", "28.5", "30.0", "24.0", "—", "0.95×", "1.19×", "—"]
    assert row(rate, "message") == ["message", "8", "B", "10.0", "—", "—", "8.00", "—", "—", "1.25×"]
    assert row(latency, "put", "8", "B") == ["put", "8", "B", "0.50", "0.52", "1.50", "—", "1.04×", "3.00×", "—"]
    assert row(latency, "put", "4", "KiB") == ["put", "4", "KiB", "1.00"] + ["—"] * 6
    assert row(latency, "get")[-3:] == ["0.87×", "—", "—"]
    assert row(latency, "ping-pong")[-1] == "2.00×"
    for expected in ("weft RMA over shm", "2 ranks on one node", "UCX transport posix/memory, cma/memory"):
        assert expected in " ".join(text.split())


def test_notes_say_how_to_read_the_ratios() -> None:
    for expected in ("> 1 means weft is faster", "0.95 against UCX", "shared and noisy", "ratios from one run"):
        assert expected in bench_rma.NOTES


def test_report_fits_80_columns(rma_run: dict[str, Any]) -> None:
    console = Console(record=True, width=80, file=io.StringIO())
    console.print(bench_rma.run_report(rma_run))
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.fixture
def fake_rma(fake_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_program) -> Path:
    """A build whose weft_bench_rma and launcher are stand-ins; results go to tmp_path/results."""
    write_program(fake_build / "libexec" / "weft" / "weft_bench_rma", FAKE_BENCH)
    mpiexec = write_program(tmp_path / "fake-mpiexec", FAKE_MPIEXEC)
    monkeypatch.setattr(runner, "launcher", lambda: runner.Launcher("mpich", str(mpiexec)))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path / "results"


def test_bench_rma_both_transports_end_to_end(fake_rma: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "rma", "--tls", "both", "--iters", "512", "--no-peers"]) == 0
    out = capsys.readouterr().out
    assert "RMA over shm" in out and "RMA over tcp" in out
    assert "0.80×" in out and "2.00×" in out
    assert out.count("shared and noisy") == 1

    saved = sorted(p.name for p in fake_rma.iterdir())
    assert len(saved) == 3 and "rma-latest.json" in saved
    dated = next(fake_rma / n for n in saved if n.endswith(".json") and n != "rma-latest.json")
    assert dated.with_suffix(".png").is_file()
    document = results.load(dated)
    assert document["metadata"]["transport"] == "shm+tcp"
    assert document["metadata"]["ranks"] == 2
    comparisons = [run for run in document["runs"] if run.get("kind") != "busy-target"]
    transports = {run["tls"]: run["transport"] for run in comparisons}
    assert transports == {"shm": "tls=default btl=default args=--iters 512",
                          "tcp": "tls=tcp,self btl=tcp,self args=--iters 512"}
    assert all(run["benchmark"] == "rma" and run["nranks"] == 2 for run in comparisons)
    assert out.count("not like for like") == 1

    busy = next(run for run in document["runs"] if run.get("kind") == "busy-target")
    assert {(r["impl"], r["op"]) for r in busy["results"]} == {
        (impl, op) for impl in ("weft", "weft+progress-thread") for op in ("get_lat_busy", "get_max_busy")
    }
    mean = next(line for line in out.splitlines() if "get latency, mean" in line)
    assert mean.split()[-3:] == ["1100", "30.0", "36.67×"]


def test_busy_target_binds_the_thread_to_a_core_of_rank_0_when_rank_1_has_not_it(
        fake_rma: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the program reports a CPU of rank 0 that rank 1 does not run on: a
    # third run binds rank 1's thread there, named apart; the wake-ups are
    # kept once
    monkeypatch.setenv("FAKE_SPARE_CPU", "3")
    assert cli.main(["bench", "rma", "--no-peers", "--tls", "shm"]) == 0
    out = capsys.readouterr().out
    busy = next(run for run in results.load(fake_rma / "rma-latest.json")["runs"] if run.get("kind") == "busy-target")
    assert busy["rank0_cpu"] == 3 and busy["target_cpus"] == "1"
    assert busy["thread_cpus"] == {"weft+progress-thread": "1", "weft+progress-thread-other-core": "3"}
    lat = {r["impl"]: r["value"] for r in busy["results"] if r["op"] == "get_lat_busy"}
    assert lat == {"weft": 1100.0, "weft+progress-thread": 30.0, "weft+progress-thread-other-core": 12.0}
    assert [r["op"] for r in busy["results"] if r["impl"] == "threads"] == ["wake_same_core", "wake_other_core",
                                                                                "wake_busy_core"]
    mean = next(line for line in out.splitlines() if "get latency, mean" in line)
    assert mean.split()[-4:] == ["1100", "30.0", "12.0", "36.67×"]
    # the goal's measure: each get from the computing target against the
    # idle target's without a thread
    ratio = next(line for line in out.splitlines() if "idle target without thread" in line)
    assert ratio.split()[-3:] == ["183.33×", "5.00×", "2.00×"]
    assert "1.50 µs on its core, 20.0 µs from rank 0's core" in " ".join(out.split())

    # no spare CPU (-1), or none reported: two runs, no third column
    monkeypatch.setenv("FAKE_SPARE_CPU", "-1")
    assert cli.main(["bench", "rma", "--no-peers", "--tls", "shm"]) == 0
    out = capsys.readouterr().out
    busy = next(run for run in results.load(fake_rma / "rma-latest.json")["runs"] if run.get("kind") == "busy-target")
    assert {r["impl"] for r in busy["results"] if r["op"] == "get_lat_busy"} == {"weft", "weft+progress-thread"}
    mean = next(line for line in out.splitlines() if "get latency, mean" in line)
    assert mean.split()[-3:] == ["1100", "30.0", "36.67×"]


def test_bench_rma_last_and_json_only(fake_rma: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "rma", "--no-busy", "--json-only", "--no-peers"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == results.load(fake_rma / "rma-latest.json")
    assert not list(fake_rma.glob("*.png"))

    assert cli.main(["bench", "rma", "--last"]) == 0
    assert "RMA over shm" in capsys.readouterr().out


def test_bench_rma_last_without_results(fake_rma: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "rma", "--last"]) == 1
    assert "run `weft bench rma` first" in capsys.readouterr().err


def test_bench_failure_shows_its_stderr(fake_rma: Path, fake_build: Path, write_program,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    write_program(fake_build / "libexec" / "weft" / "weft_bench_rma", "import sys\nsys.exit('ucp_init failed: no device')")
    assert cli.main(["bench", "rma", "--no-peers"]) == 1
    err = capsys.readouterr().err
    assert "failed with exit status" in err and "ucp_init failed: no device" in err
    assert "Traceback" not in err
    assert not fake_rma.exists()


def test_ratio_pairs_rounds_measured_side_by_side():
    # a burst of load halves one round of each side, in different rounds: the
    # ratio of medians would be thrown off, the median of paired ratios is not
    entries = [
        {"impl": "weft", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 90.0,
         "rounds": [90.0, 45.0, 92.0, 88.0, 91.0]},
        {"impl": "ucx", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 100.0,
         "rounds": [100.0, 50.0, 100.0, 100.0, 50.0]},
    ]
    (row,) = bench_rma.parse_rows(entries)
    assert row.rounds["weft"][1] == 45.0
    assert row.ratio("ucx") == pytest.approx(0.90)
    # without rounds (or with unequal counts) the medians are compared
    del entries[0]["rounds"]
    (row,) = bench_rma.parse_rows(entries)
    assert row.ratio("ucx") == pytest.approx(0.90)


def test_ratio_pairs_latency_rounds_other_over_weft():
    entries = [
        {"impl": "weft", "op": "put_lat", "size": 8, "unit": "us", "value": 0.5, "rounds": [0.5, 1.0, 0.5]},
        {"impl": "mpi-rma", "op": "put_lat", "size": 8, "unit": "us", "value": 1.0, "rounds": [1.0, 2.0, 2.0]},
    ]
    (row,) = bench_rma.parse_rows(entries)
    assert row.ratio("mpi-rma") == pytest.approx(2.0)


# ---- peers ------------------------------------------------------------------

PERFTEST_OUTPUT = """
+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |
+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
Final:                200000      0.026     0.045     0.050      168.44     170.00    22077608    22000000
"""


def test_perftest_final_line_is_parsed() -> None:
    values = bench_rma.perftest_final(PERFTEST_OUTPUT)
    assert values == [200000, 0.026, 0.045, 0.050, 168.44, 170.00, 22077608, 22000000]
    with pytest.raises(WeftError, match="no 'Final:' line"):
        bench_rma.perftest_final("connection refused")
    with pytest.raises(WeftError, match="malformed"):
        bench_rma.perftest_final("Final: 10 x y")


def peer_entries() -> list[dict[str, Any]]:
    entries = []
    for impl, rate, lat in (("weft", 150.0, 0.02), ("openshmem", 30.0, 0.5), ("mpi-rma", 20.0, 1.0),
                            ("mpi-2sided", 5.0, 0.6), ("ucx_perftest", 60.0, 0.3)):
        entries += [
            {"impl": impl, "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": rate},
            {"impl": impl, "op": "put_lat", "size": 8, "unit": "us", "value": lat},
        ]
    for size in bench_rma.SWEEP_SIZES:
        for impl, bw in (("weft", 9000.0), ("memcpy", 10000.0), ("openshmem", 8000.0)):
            entries.append({"impl": impl, "op": "put_bw", "size": size, "unit": "MB/s", "value": bw})
    return entries


def test_peer_ratios_and_goals() -> None:
    rows = {(r.op, r.size): r for r in bench_rma.parse_rows(peer_entries())}
    rate, lat, bw = rows["put_rate", 8], rows["put_lat", 8], rows["put_bw", 65536]
    assert bench_rma.peer_ratio(rate, "openshmem") == pytest.approx(5.0)
    assert bench_rma.peer_ratio(lat, "openshmem") == pytest.approx(25.0)
    assert bench_rma.peer_ratio(bw, "memcpy") == pytest.approx(0.9)
    assert bench_rma.peer_goal(rate, "ucx_perftest") == 3.0
    assert bench_rma.peer_goal(lat, "openshmem") == 2.0
    assert bench_rma.peer_goal(bw, "memcpy") == 0.9
    assert bench_rma.peer_goal(rows["put_bw", 4096], "memcpy") is None
    assert bench_rma.peer_goal(rate, "mpi-rma") is None


def test_peers_report_fits_80_columns(render_text) -> None:
    run = {"kind": "peers", "tls": "shm", "nranks": 2, "transport": "direct", "results": peer_entries()}
    text = render_text(bench_rma.run_report(run))
    assert "OpenSHMEM" in text and "memcpy" in text and "ucx_perftest" in text
    assert "put rate 8 B" in text and "bandwidth 4 MiB" in text
    assert "5.00×" in text and "25.00×" in text
    console = Console(file=io.StringIO(), width=80, force_terminal=False)
    console.print(bench_rma.run_report(run))
    out = console.file.getvalue()
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_peers_report_shows_the_direct_rows_in_80_columns(render_text) -> None:
    direct = [
        {"impl": "weft", "op": "get_lat", "size": 8, "unit": "us", "value": 0.0006},
        {"impl": "weft-lib", "op": "get_lat", "size": 8, "unit": "us", "value": 0.004},
        {"impl": "weft-target", "op": "get_lat", "size": 8, "unit": "us", "value": 0.0004},
        {"impl": "load", "op": "get_lat", "size": 8, "unit": "us", "value": 0.00014},
        {"impl": "weft-target", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 1400.0},
        {"impl": "store", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 3200.0},
    ]
    run = {"kind": "peers", "tls": "shm", "nranks": 2, "transport": "direct",
           "results": peer_entries() + direct}
    text = render_text(bench_rma.run_report(run))
    # latencies in ns: 0.60 ns for weft, 4.00 for the library call, 0.14 for a load
    assert "get, ns" in text and "0.60" in text and "4.00" in text and "0.14" in text
    assert "6.67×" in text and "0.44×" in text  # 0.004 / 0.0006; 1400 / 3200
    console = Console(file=io.StringIO(), width=80, force_terminal=False)
    console.print(bench_rma.run_report(run))
    out = console.file.getvalue()
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80


def test_bench_rma_peers_end_to_end(fake_rma: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    others = [e for e in peer_entries() if e["impl"] in ("openshmem", "ucx_perftest")]
    monkeypatch.setattr(bench_rma, "shmem_peer", lambda timeout: Path("shmem_peer"))
    monkeypatch.setattr(bench_rma, "measure_shmem",
                        lambda program, iters, timeout, rounds, sizes: [e for e in others if e["impl"] == "openshmem"])
    monkeypatch.setattr(bench_rma, "measure_perftest",
                        lambda iters, timeout, warmup, sizes: [e for e in others if e["impl"] == "ucx_perftest"])
    assert cli.main(["bench", "rma", "--no-busy", "--cycles", "2"]) == 0
    out = capsys.readouterr().out
    assert "beside its peers" in out
    document = results.load(fake_rma / "rma-latest.json")
    (run,) = document["runs"]
    assert run["kind"] == "peers" and "--sweep" in run["transport"]
    assert {e["impl"] for e in run["results"]} >= {"weft", "openshmem", "ucx_perftest"}
    # one entry per system, operation and size, holding the rounds of both cycles
    shmem_rate = [e for e in run["results"] if e["impl"] == "openshmem" and e["op"] == "put_rate"]
    assert len(shmem_rate) == 1 and shmem_rate[0]["rounds"] == [30.0, 30.0]
    assert list(fake_rma.glob("*.png"))


def test_missing_shmem_peer_is_a_clear_error(fake_build: Path) -> None:
    with pytest.raises(WeftError, match="oshcc.*--no-peers"):
        bench_rma.shmem_peer(10)


def test_merge_cycles_keeps_every_round_and_takes_the_median() -> None:
    entries = [
        {"impl": "weft", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 2.0, "rounds": [1.0, 3.0]},
        {"impl": "weft", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 10.0, "rounds": [10.0]},
        {"impl": "ucx_perftest", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 5.0},
    ]
    merged = {e["impl"]: e for e in bench_rma.merge_cycles(entries)}
    assert merged["weft"]["rounds"] == [1.0, 3.0, 10.0] and merged["weft"]["value"] == 3.0
    assert merged["ucx_perftest"]["rounds"] == [5.0] and merged["ucx_perftest"]["value"] == 5.0


def test_block_ratios_pair_blocks_by_position(render_text) -> None:
    """weft's blocks are divided by the copy blocks timed beside them, one
    by one, and the table shows the median and quartiles of those ratios."""
    def block(impl: str, rounds: list[float]) -> dict:
        return {"impl": impl, "op": "put_bw_block", "size": 65536, "unit": "MB/s",
                "value": statistics.median(rounds), "rounds": rounds}
    entries = [
        block("weft", [10.0, 20.0, 30.0, 40.0, 50.0]),
        block("memcpy", [10.0, 10.0, 10.0, 10.0, 10.0]),
        block("memcpy-seg", [20.0, 20.0, 20.0, 20.0, 100.0]),
        {"impl": "weft", "op": "page_faults", "size": 65536, "unit": "faults", "value": 0, "rounds": [0, 0]},
    ]
    run = {"kind": "peers", "nranks": 2, "transport": "direct", "results": entries}
    ratios = bench_rma.block_ratios(run)
    assert ratios[("memcpy", 65536)] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert ratios[("memcpy-seg", 65536)] == [0.5, 1.0, 1.5, 2.0, 0.5]
    assert bench_rma.spread(ratios[("memcpy", 65536)]) == (3.0, 2.0, 4.0)
    text = render_text(bench_rma.block_table(run, ratios))
    assert "3.00× [2.00–4.00]" in text and "1.00× [0.50–1.50]" in text


# ---- sizes, iterations and warm-up ------------------------------------------

@pytest.mark.parametrize(("text", "size"), [("8", 8), ("4K", 4096), ("4k", 4096), ("1M", 1 << 20),
                                            ("1m", 1 << 20), ("1G", 1 << 30), ("0040", 40)])
def test_sizes_take_binary_suffixes(text: str, size: int) -> None:
    assert bench_rma.parse_size(text, 1 << 30) == size


def test_size_range_doubles_from_min_up_to_max() -> None:
    parse = bench_rma.size_range_type(4 << 20)
    assert parse("8:64") == [8, 16, 32, 64]
    assert parse("3:100") == [3, 6, 12, 24, 48, 96]
    assert parse("4K:4K") == [4096]
    assert parse("1:4M") == [1 << k for k in range(23)]
    assert bench_rma.sizes_type(4 << 20)("8,64,4K,1M") == [8, 64, 4096, 1 << 20]


BAD_SIZES = [
    (["--sizes", "8,0"], "'0' is zero"),
    (["--sizes", "8,-4"], "'-4' is negative"),
    (["--sizes", "-8"], "'-8' is negative"),
    (["--sizes", "8,abc"], "'abc' is not a size"),
    (["--sizes", "1.5K"], "'1.5K' is not a size"),
    (["--sizes", "8,4X"], "'4X' has an unknown suffix 'X'"),
    (["--sizes", "4KB"], "'4KB' has an unknown suffix 'KB'"),
    (["--sizes", "8,,64"], "an empty size"),
    (["--sizes", ",".join(["8"] * 33)], "more than 32 sizes"),
    (["-m", "64:8"], "MIN 64 is more than MAX 8"),
    (["-m", "64"], "'64' is not MIN:MAX"),
    (["-m", "0:64"], "'0' is zero"),
    (["-m", "8:16:32"], "'16:32' is not a size"),
    (["-m", "1:8Q"], "'8Q' has an unknown suffix 'Q'"),
    (["--sizes", "8", "-m", "8:64"], "not allowed with argument"),
    (["--warmup", "-1"], "'-1' is negative"),
    (["--warmup", "ten"], "'ten' is not a count"),
    (["--warmup", "1.5"], "'1.5' is not a count"),
    (["--iters", "-5"], "'-5' is negative"),
    (["--iters", "1e5"], "'1e5' is not a count"),
]


@pytest.mark.parametrize(("args", "message"), [
    *BAD_SIZES,
    (["--sizes", "8,5M"], "'5M' is more than 4 MiB, the most the benchmark's segment allows"),
    (["-m", "8:8M"], "'8M' is more than 4 MiB"),
    (["--sizes", "99999999999999999999"], "is more than 4 MiB"),
    (["--iters", "0"], "0: at least 256 (a window of 256 puts)"),
    (["--iters", "100"], "100: at least 256"),
])
def test_bad_counts_and_sizes_are_refused(args: list[str], message: str, fake_rma: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(["bench", "rma", "--no-peers", *args])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "weft bench rma: error: argument" in err and message in err
    assert not fake_rma.exists()


def test_sizes_iters_and_warmup_reach_every_run(fake_rma: Path) -> None:
    assert cli.main(["bench", "rma", "--no-peers", "--iters", "512", "--warmup", "10",
                     "--sizes", "8,4K"]) == 0
    document = results.load(fake_rma / "rma-latest.json")
    comparison, busy = document["runs"]
    # --sizes runs the sweep: the program takes the sizes in bytes
    assert comparison["transport"] == "tls=default btl=default args=--iters 512 --warmup 10 --sizes 8,4096"
    # the gets from a busy rank take no sizes
    assert busy["kind"] == "busy-target"
    assert "--iters 512 --warmup 10" in busy["transport"] and "--sizes" not in busy["transport"]

    assert cli.main(["bench", "rma", "--no-peers", "--no-busy", "-m", "8:64"]) == 0
    (run,) = results.load(fake_rma / "rma-latest.json")["runs"]
    assert run["transport"] == "tls=default btl=default args=--sizes 8,16,32,64"


def test_peers_take_the_sizes_and_warmup(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def perftest(test: str, size: int, iters: int, timeout: float, warmup: int | None = None) -> list[float]:
        calls.append([test, str(size), str(iters), str(warmup)])
        return [iters, 0.1, 0.2, 0.3, 100.0, 110.0, 1e6, 1e6]

    monkeypatch.setattr(bench_rma, "run_perftest", perftest)
    entries = bench_rma.measure_perftest(1000, 10, warmup=5, sizes=[8, 4096])
    assert calls == [["ucp_put_bw", "8", "1000", "5"], ["ucp_am_lat", "8", "1000", "5"],
                     ["ucp_get", "8", "1000", "5"], ["ucp_put_bw", "8", "1000", "5"],
                     ["ucp_put_bw", "4096", "1000", "5"]]
    assert sorted(e["size"] for e in entries if e["op"] == "put_bw") == [8, 4096]
    calls.clear()
    bench_rma.measure_perftest(None, 10)
    assert [c[1] for c in calls[3:]] == [str(size) for size in bench_rma.SWEEP_SIZES]
    assert {c[3] for c in calls} == {"None"}


def test_counts_note_says_what_the_run_had(render_text) -> None:
    assert "untimed before each (--warmup): 10" in render_text(
        bench_rma.counts_note({"iters": 1024, "warmup": 10}))
    assert render_text(bench_rma.counts_note({})).strip() == ""


NO_REAL_RMA = "no $WEFT_BUILD_DIR/libexec/weft/weft_bench_rma (build weft with `make`)"


@pytest.mark.skipif(real_program("weft_bench_rma") is None, reason=NO_REAL_RMA)
def test_real_binary_records_sizes_iters_and_warmup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("weft_bench_rma")
    assert program is not None
    output = tmp_path / "rma.json"
    runner.run_mpi(2, [str(program), "--json", str(output), "--sizes", "8,4K", "--warmup", "3",
                       "--iters", "300", "--rounds", "1"], timeout=120)
    data = json.loads(output.read_text())
    # --iters is rounded down to whole windows of 256
    assert (data["iters"], data["warmup"], data["sweep_sizes"]) == (256, 3, [8, 4096])
    assert {r["size"] for r in data["results"] if r["op"] == "put_bw"} == {8, 4096}
    assert {(r["impl"], r["op"]) for r in data["results"] if r["size"] == 8} >= {
        ("weft", "put_lat"), ("weft", "get_lat"), ("weft", "put_rate"), ("mpi-rma", "put_lat"),
        ("mpi-2sided", "put_rate"), ("weft", "put_bw"), ("memcpy", "put_bw")}


@pytest.mark.skipif(real_program("weft_bench_rma") is None, reason=NO_REAL_RMA)
@pytest.mark.parametrize(("args", "message"), [(["--sizes", "8,5M"], "'5M' is more than 4194304 bytes"),
                                               (["--warmup", "-1"], "'-1' is negative")])
def test_real_binary_rejects_bad_sizes_and_counts(args: list[str], message: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    program = real_program("weft_bench_rma")
    assert program is not None
    mpi = runner.launcher()
    proc = subprocess.run(mpi.command(2, [str(program), *args], {}), env={**os.environ, **mpi.environment()},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert f"weft_bench_rma: {args[0]}: {message}" in proc.stderr
    assert "usage: mpirun -np 2 weft_bench_rma" in proc.stderr


def test_direct_table_pairs_weft_with_the_library_and_plain_accesses(
        render_text: Callable[[RenderableType], str]) -> None:
    entries = [
        {"impl": "weft", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 300.0, "rounds": [300.0, 200.0]},
        {"impl": "store", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 1000.0, "rounds": [500.0, 1000.0]},
        {"impl": "weft-lib", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 100.0, "rounds": [100.0, 100.0]},
        {"impl": "weft-target", "op": "put_rate", "size": 8, "unit": "Mmsg/s", "value": 300.0,
         "rounds": [300.0, 300.0]},
        {"impl": "weft", "op": "get_lat", "size": 8, "unit": "us", "value": 0.002},
        {"impl": "load", "op": "get_lat", "size": 8, "unit": "us", "value": 0.001},
        {"impl": "weft-target", "op": "get_lat", "size": 8, "unit": "us", "value": 0.00125},
        {"impl": "weft", "op": "put_lat", "size": 8, "unit": "us", "value": 0.01},
    ]
    table = bench_rma.direct_table("direct", bench_rma.parse_rows(entries))
    assert table is not None and table.row_count == 2
    text = render_text(table)
    # rounds side by side: ratios 0.6 and 0.2, median 0.4; the get is half a load's speed
    assert "0.40×" in text and "0.50×" in text and "2.50×" in text
    # the kept target beside the plain access: 0.6 and 0.3, median 0.45; 0.001 / 0.00125
    assert "0.45×" in text and "0.80×" in text
    assert bench_rma.direct_table("direct", bench_rma.parse_rows(entries[-1:])) is None
