from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, Group

from conftest import REAL_BUILD_DIR, real_program
from weft import cli
from weft.bench import ft as bench_ft
from weft.core import results, runner

REPO = Path(__file__).resolve().parents[3]
SHARED_REFERENCE = REPO.parent / "shared" / "reference" / "npb-ft.json"

# A stand-in for mpiexec.mpich: runs the program once, with the "-genv" variables.
FAKE_MPIEXEC = """
import os, subprocess, sys
args = sys.argv[1:]
assert args[0] == "-np"
args, env = args[2:], dict(os.environ)
while args[0] == "-genv":
    env[args[1]] = args[2]
    args = args[3:]
sys.exit(subprocess.run(args, env=env).returncode)
"""

# A stand-in for apps/ft/ft: the report of its --alg, in its --json file;
# pencils take longer to communicate, slabs-mpi is not verified (its report
# says so, and it exits 1) and slabs-weft fails without a report; estimated
# plans take 3 times as long, measured ones 1.2 times.
FAKE_FT = """
import json, os, sys
args = sys.argv[1:]
value = lambda name: args[args.index(name) + 1]
alg = value("--alg")
if alg == "slabs-weft":
    sys.exit("ft: rank 1: weft_put_nbi: WEFT_ERR_TRANSPORT")
comm = 0.5 if alg.startswith("pencils") else 0.1
factor = {"estimate": 3.0, "measure": 1.2}.get(value("--fftw"), 1.0)
doc = {"benchmark": "ft", "class": value("--class"), "nranks": 2, "algorithm": alg,
       "time_s": factor * (2.0 if alg == "exchange-mpi" else 1.0 + comm), "mflops": 1000.0,
       "fftw": value("--fftw"), "plan_time_s": 5.0 if value("--fftw") == "measure" else 0.01,
       "comm_time_s": {"max": comm, "mean": comm}, "compute_time_s": 1.0,
       "messages": {"forward": {"count": 2, "bytes": 4096}, "inverse": {"count": 2, "bytes": 4096},
                    "total_per_rank": 14},
       "verified": alg != "slabs-mpi", "args": args,
       "env": {k: os.environ.get(k) for k in ("WEFT_PROGRESS_THREAD", "WEFT_SHM", "UCX_TLS")}}
with open(value("--json"), "w") as out:
    json.dump(doc, out)
sys.exit(0 if doc["verified"] else 1)
"""


def run(alg: str, time_s: float, comm: float, *, count: int = 2, size: int = 1 << 20) -> dict[str, Any]:
    return {
        "algorithm": alg, "time_s": time_s, "mflops": 100.0 / time_s,
        "comm_time_s": {"max": comm, "mean": comm},
        "messages": {"forward": {"count": count, "bytes": size}, "inverse": {"count": count, "bytes": size}},
        "verified": True,
    }


@pytest.fixture
def document() -> dict[str, Any]:
    return {
        "benchmark": "ft", "class": "A",
        "metadata": {"ranks": 2, "hostname": "node1", "date": "2026-11-22T07:00:00+00:00"},
        "runs": [
            run("exchange-mpi", 2.0, 0.2),
            run("pencils-weft", 1.0, 0.05, count=16384, size=4096),
            {"algorithm": "slabs-weft", "error": "ft failed with exit status 1"},
        ],
    }


def render(renderable: Any, width: int = 80) -> str:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_table_row_per_algorithm_with_speedup_over_npb_and_failures(document: dict[str, Any]) -> None:
    text = render(bench_ft.run_table(document))
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.split()[:1] and "-" in line.split()[0]}
    assert rows["exchange-mpi"] == ["exchange-mpi", "2.000", "50.0", "0.200", "2", "1", "MiB", "1.00×", "yes"]
    assert rows["pencils-weft"] == ["pencils-weft", "1.000", "100", "0.050", "16384", "4", "KiB", "2.00×", "yes"]
    assert rows["slabs-weft"][-1] == "failed"
    assert "slabs-weft: ft failed with exit status 1" in " ".join(text.split())
    assert "NAS FT class A, 2 ranks on node1" in text


def test_table_fits_80_columns(document: dict[str, Any]) -> None:
    text = render(bench_ft.run_table(document))
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_speedup_needs_the_npb_baseline(document: dict[str, Any]) -> None:
    runs = document["runs"][1:]
    assert bench_ft.speedup(runs[0], runs) is None


def test_best_trial_is_the_fastest_verified_one() -> None:
    trials = [run("slabs-mpi", 1.5, 0.1), {"algorithm": "slabs-mpi", "error": "timed out"}, run("slabs-mpi", 1.2, 0.2)]
    chosen = bench_ft.best(trials)
    assert chosen["time_s"] == 1.2 and chosen["trial_times_s"] == [1.5, None, 1.2]
    assert bench_ft.best(trials[1:2])["error"] == "timed out"


@pytest.mark.parametrize("slow", [1.2, 40.0])
def test_chart_is_a_png_even_with_one_pathological_algorithm(document: dict[str, Any], tmp_path: Path,
                                                             slow: float) -> None:
    document["runs"] += [run("slabs-mpi", 1.1, 0.1), run("pencils-mpi", slow, slow - 1.0)]
    path = bench_ft.stacked_chart(document, tmp_path / "ft.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_algorithm_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "ft", "--algs", "exchange-mpi,tiles-mpi"])
    assert exit_info.value.code == 2
    assert "unknown algorithm tiles-mpi" in capsys.readouterr().err


@pytest.fixture
def fake_ft(fake_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_program) -> Path:
    """A build whose ft and launcher are stand-ins; results go to tmp_path/results."""
    (fake_build / "libexec" / "weft").mkdir(parents=True, exist_ok=True)
    write_program(fake_build / "libexec" / "weft" / "ft", FAKE_FT)
    mpiexec = write_program(tmp_path / "fake-mpiexec", FAKE_MPIEXEC)
    monkeypatch.setattr(runner, "launcher", lambda: runner.Launcher("mpich", str(mpiexec)))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path / "results"


def test_bench_ft_end_to_end_keeps_results_of_a_failed_algorithm(
    fake_ft: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["bench", "ft", "--class", "W", "--pad", "2"]) == 1
    captured = capsys.readouterr()
    assert "not verified or failed: slabs-mpi, slabs-weft" in captured.err
    assert "pencils-mpi" in captured.out and "failed" in captured.out
    assert next(line for line in captured.out.splitlines() if "slabs-mpi" in line).split()[-1] == "NO"

    document = results.load(fake_ft / "ft-latest.json")
    assert document["class"] == "W" and document["metadata"]["ranks"] == 2
    assert [r["algorithm"] for r in document["runs"]] == list(bench_ft.ALGORITHMS)
    exchange = document["runs"][0]
    assert exchange["args"][:4] == ["--class", "W", "--alg", "exchange-mpi"]
    assert exchange["args"][-4:] == ["--pad", "2", "--fftw", "wisdom"]
    failed = next(r for r in document["runs"] if r["algorithm"] == "slabs-weft")
    assert "WEFT_ERR_TRANSPORT" in failed["error"]
    not_verified = next(r for r in document["runs"] if r["algorithm"] == "slabs-mpi")
    assert not_verified["verified"] is False and "error" not in not_verified
    assert len(list(fake_ft.glob("ft-2*.png"))) == 1


def test_bench_ft_selected_algorithms_last_and_json_only(fake_ft: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "ft", "--algs", "exchange-mpi,pencils-weft", "--trials", "2", "--json-only"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [r["algorithm"] for r in printed["runs"]] == ["exchange-mpi", "pencils-weft"]
    assert printed["trials"] == 2 and printed["runs"][1]["trial_times_s"] == [1.5, 1.5]
    assert not list(fake_ft.glob("*.png"))

    assert cli.main(["bench", "ft", "--last"]) == 0
    assert "1.33×" in capsys.readouterr().out   # 2.0 s / 1.5 s


def test_bench_ft_last_without_results(fake_ft: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "ft", "--last"]) == 1
    assert "run `weft bench ft` first" in capsys.readouterr().err


def embedded_reference() -> dict[str, list[list[float]]]:
    """The reference checksums compiled into ft (apps/ft/ft_classes.c)."""
    source = (REPO / "apps" / "ft" / "ft_classes.c").read_text()
    tables = re.findall(r"ref_(\w)\[\d+\]\[2\] = \{(.*?)\};", source, re.S)
    return {
        name: [[float(a), float(b)] for a, b in re.findall(r"\{([-+.e0-9]+), ([-+.e0-9]+)\}", body)]
        for name, body in tables
    }


@pytest.mark.skipif(not SHARED_REFERENCE.is_file(), reason=f"no {SHARED_REFERENCE}")
def test_embedded_checksums_are_the_published_ones() -> None:
    published = json.loads(SHARED_REFERENCE.read_text())["classes"]
    embedded = embedded_reference()
    assert embedded.keys() == published.keys()
    for name, cls in published.items():
        assert embedded[name] == cls["ref"], name


def test_bench_ft_compare_runs_labelled_plannings_and_reports_the_goals(
    fake_ft: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # slabs-mpi (not verified) and slabs-weft (fails) are among the runs.
    assert cli.main(["bench", "ft", "--compare", "--class", "B", "--trials", "2"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    document = results.load(fake_ft / "ft-latest.json")
    runs = {r["label"]: r for r in document["runs"]}
    assert list(runs) == list(bench_ft.COMPARE)
    assert runs["exchange-mpi@estimate"]["args"][-2:] == ["--fftw", "estimate"]
    assert runs["exchange-mpi@measure"]["args"][-2:] == ["--fftw", "measure"]
    assert runs["exchange-weft"]["args"][-2:] == ["--fftw", "wisdom"]
    assert runs["exchange-mpi@estimate"]["plan_times_s"] == [0.01, 0.01]
    summary = document["summary"]
    assert summary["default_best"] == "exchange-weft"                      # 1.1 s
    assert summary["vs_estimate_exchange"]["ratio"] == pytest.approx(1.1 / 6.0)
    assert summary["vs_estimate_exchange"]["paired"] == pytest.approx(1.1 / 6.0)
    assert summary["vs_measure"]["other"] == "exchange-mpi@measure"        # slabs-weft@measure failed
    assert summary["vs_measure"]["ratio"] == pytest.approx(1.1 / 2.4)
    assert summary["onesided_vs_twosided"]["ratio"] == pytest.approx(2.0 / 1.1)
    assert summary["plan_time_s"] == {"max": 5.0, "min": 0.01}
    assert len(document["load_average"]) == 3
    assert "goal ≤ 0.67: met" in out and "goal ≤ 1.00: met" in out and "goal ≥ 1.00: met" in out
    assert "@estimate" in out and "@measure" in out


def test_summary_goals_not_met_and_paired_ratios() -> None:
    def timed(label: str, times: list[float]) -> dict[str, Any]:
        alg = label.partition("@")[0]
        return {**run(alg, min(times), 0.1), "label": label, "trial_times_s": times}

    runs = [timed("exchange-mpi", [1.0, 0.8]), timed("slabs-weft", [1.1, 0.9]),
            timed("exchange-mpi@estimate", [1.2, 1.6]), timed("exchange-mpi@measure", [0.9, 0.7])]
    summary = bench_ft.summarize(runs)
    assert summary["default_best"] == "exchange-mpi"
    assert summary["vs_estimate_exchange"]["ratio"] == pytest.approx(0.8 / 1.2)
    # Per trial: 1.0/1.2 and 0.8/1.6.
    assert summary["vs_estimate_exchange"]["paired"] == pytest.approx((1.0 / 1.2 + 0.5) / 2)
    assert summary["vs_measure"]["ratio"] == pytest.approx(0.8 / 0.7)
    assert summary["onesided_vs_twosided"]["ratio"] == pytest.approx(0.8 / 0.9)
    document = {"runs": runs, "fftw": "wisdom", "metadata": {"ranks": 2}}
    text = " ".join(render(Group(*bench_ft.summary_lines(document)), width=200).split())
    assert "goal ≤ 1.00: not met" in text and "goal ≥ 1.00: not met" in text
    assert bench_ft.summarize([{"algorithm": "exchange-mpi", "error": "x"}]) == {"default_best": None}


def test_table_with_planning_labels_fits_80_columns(document: dict[str, Any]) -> None:
    document["runs"].append({**run("exchange-mpi", 3.0, 0.2), "label": "exchange-mpi@estimate"})
    document["runs"].append({**run("pencils-weft", 3.0, 0.2), "label": "pencils-weft@measure+tcp+thread"})
    text = render(bench_ft.run_table(document))
    assert "exchange-mpi" in text and "@estimate" in text and "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_bench_ft_modifiers_set_every_rank_environment(fake_ft: Path, capsys: pytest.CaptureFixture[str]) -> None:
    algs = "pencils-weft,pencils-weft+thread,pencils-weft@measure+tcp+thread"
    assert cli.main(["bench", "ft", "--algs", algs, "--json-only"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["label"] for r in runs] == algs.split(",")
    assert runs[0]["env"] == {"WEFT_PROGRESS_THREAD": None, "WEFT_SHM": None, "UCX_TLS": None}
    assert runs[1]["env"]["WEFT_PROGRESS_THREAD"] == "1"
    assert runs[2]["env"] == {"WEFT_PROGRESS_THREAD": "1", "WEFT_SHM": "0", "UCX_TLS": "tcp,self"}
    assert runs[2]["args"][-2:] == ["--fftw", "measure"]


def test_overlap_preset_names_known_algorithms() -> None:
    assert bench_ft.algorithm_list(",".join(bench_ft.OVERLAP)) == list(bench_ft.OVERLAP)
    assert bench_ft.algorithm_list(",".join(bench_ft.COMPARE)) == list(bench_ft.COMPARE)
    # The MPI-RMA algorithms run by name, outside the default list.
    assert bench_ft.algorithm_list("slabs-rma,pencils-rma@measure") == ["slabs-rma", "pencils-rma@measure"]


@pytest.mark.parametrize(("algs", "message"), [
    ("slabs-weft+turbo", "unknown modifier in slabs-weft+turbo"),
    ("exchange-mpi@exhaustive", "unknown FFTW planning in exchange-mpi@exhaustive"),
    ("tiles-mpi@measure", "unknown algorithm tiles-mpi@measure"),
    ("slabs-weft,slabs-weft", "named twice"),
])
def test_bad_planning_label_is_a_usage_error(capsys: pytest.CaptureFixture[str], algs: str, message: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "ft", "--algs", algs])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(real_program("ft") is None, reason="no $WEFT_BUILD_DIR/libexec/weft/ft (build weft with `make`)")
def test_real_ft_class_s(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    # The real ft keeps FFTW wisdom: in the test's directory, not the user's cache.
    monkeypatch.setenv("WEFT_FFTW_WISDOM", str(tmp_path / "wisdom"))
    algs = "exchange-mpi,slabs-weft,pencils-mpi"
    assert cli.main(["bench", "ft", "--class", "S", "--np", "2", "--algs", algs, "--json-only"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [r["algorithm"] for r in document["runs"]] == algs.split(",")
    assert all(r["verified"] and r["nranks"] == 2 for r in document["runs"])
    slabs = document["runs"][1]["messages"]["forward"]
    assert slabs == {"count": 64, "bytes": 32 * 64 * 16}   # nz slabs of ny/2 rows
    assert document["runs"][0]["fftw"] == "wisdom"
    assert len(list((tmp_path / "wisdom").glob("ft-*.wisdom"))) == 2   # slabs and pencils layouts
