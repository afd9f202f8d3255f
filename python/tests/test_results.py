from __future__ import annotations

import json
import os
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console

from weft import WeftError, report, results

NOW = datetime(2026, 11, 22, 7, 30, 15, tzinfo=timezone.utc)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "file.c").write_text("int x;\n")
    git(path, "add", "file.c")
    git(path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "first")
    return path


def test_git_state_names_the_commit_and_tracks_dirtiness(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short", "HEAD")
    assert results.git_state(repo) == {"commit": sha, "dirty": False}
    (repo / "untracked.txt").write_text("not part of the build\n")
    assert results.git_state(repo)["dirty"] is False
    (repo / "file.c").write_text("int y;\n")
    assert results.git_state(repo) == {"commit": sha, "dirty": True}


def test_git_state_outside_a_checkout(tmp_path: Path) -> None:
    assert results.git_state(tmp_path) == {"commit": None, "dirty": False}


def test_metadata_fields(repo: Path) -> None:
    meta = results.metadata(transport="tcp", ranks=2, now=NOW, repo=repo)
    assert meta == {
        "git": results.git_state(repo),
        "date": "2026-11-22T07:30:15+00:00",
        "hostname": socket.gethostname(),
        "cores": os.cpu_count(),
        "transport": "tcp",
        "ranks": 2,
    }
    assert datetime.fromisoformat(meta["date"]) == NOW


def test_save_names_files_by_date_and_host_and_round_trips(tmp_path: Path) -> None:
    fields = {"runs": [{"tls": "shm", "results": [{"impl": "weft", "value": 1.5}]}]}
    path = results.save("rma", fields, transport="shm", ranks=2, directory=tmp_path, now=NOW)
    host = socket.gethostname().split(".")[0]
    assert path == tmp_path / f"rma-20261122-073015-{host}.json"
    latest = results.latest_path("rma", tmp_path)
    assert latest == tmp_path / "rma-latest.json"
    assert latest.read_text() == path.read_text()

    document = results.load(path)
    assert document["benchmark"] == "rma"
    assert document["runs"] == fields["runs"]
    assert document["metadata"]["transport"] == "shm"
    assert document["metadata"]["ranks"] == 2
    assert document["metadata"]["date"] == NOW.isoformat()
    assert set(document["metadata"]["git"]) == {"commit", "dirty"}


def test_save_defaults_to_the_results_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path / "bench" / "results")
    path = results.save("ft", {}, transport="shm", ranks=2, now=NOW)
    assert path.parent == tmp_path / "bench" / "results"
    assert results.latest_path("ft").is_file()


def test_results_dir_is_bench_results_of_the_repository() -> None:
    assert results.RESULTS_DIR.parts[-2:] == ("bench", "results")
    assert (results.RESULTS_DIR.parents[1] / "python" / "weft" / "results.py").is_file()


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "is not valid JSON"), (json.dumps({"runs": []}), "not a weft result file")],
)
def test_load_rejects_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "rma-latest.json"
    path.write_text(content)
    with pytest.raises(WeftError, match=message):
        results.load(path)


def test_load_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WeftError, match="does not exist"):
        results.load(tmp_path / "rma-latest.json")


def test_load_latest_reads_the_stable_copy_or_says_what_to_run(tmp_path):
    with pytest.raises(WeftError, match=r"run `weft bench rma` first"):
        results.load_latest("rma", tmp_path)
    results.latest_path("rma", tmp_path).write_text('{"benchmark": "rma", "metadata": {}, "runs": []}')
    assert results.load_latest("rma", tmp_path)["benchmark"] == "rma"


def drawn(document: dict, path: Path) -> Path:
    path.write_text(document["benchmark"])
    return path


def test_measure_or_load_renders_draws_beside_a_new_file_and_names_what_it_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(report, "console", Console(width=500))
    saved: list[Path] = []

    def measure() -> Path:
        saved.append(results.save("flood", {"count": 3}, transport="shm", ranks=2, now=NOW))
        return saved[-1]

    def render(document: dict) -> str:
        return f"count {document['count']}"

    document = results.measure_or_load("flood", measure, render, {"-a.png": drawn, "-b.png": drawn})
    stem = saved[0].stem
    assert document["count"] == 3 and (tmp_path / f"{stem}-a.png").read_text() == "flood"
    assert capsys.readouterr().out == f"count 3\nsaved {saved[0]}, {stem}-a.png and {stem}-b.png\n"

    results.measure_or_load("flood", measure, render, {".png": drawn})
    assert capsys.readouterr().out == f"count 3\nsaved {saved[1]} and {saved[1].stem}.png\n"
    results.measure_or_load("flood", measure, render)
    assert capsys.readouterr().out == f"count 3\nsaved {saved[2]}\n"

    # --last: the latest file, nothing measured, drawn or saved
    assert results.measure_or_load("flood", None, render, {".png": drawn})["count"] == 3
    assert capsys.readouterr().out == "count 3\n" and len(saved) == 3


def test_measure_or_load_json_only_prints_the_document_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path)
    path = results.save("flood", {"count": 3}, transport="shm", ranks=2, now=NOW)
    document = results.measure_or_load("flood", lambda: path, lambda d: "not shown", {".png": drawn}, json_only=True)
    assert json.loads(capsys.readouterr().out) == document == results.load(path)
    assert not path.with_suffix(".png").exists()
