from __future__ import annotations

import json
import os
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console

import weft
from weft import WeftError
from weft.core import report, results, runner

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


def test_git_state_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert results.git_state(tmp_path) == {"commit": None, "dirty": None}
    # an installed toolkit runs from no checkout: nothing to ask git
    monkeypatch.setattr(runner, "source_root", lambda: None)
    assert results.git_state() == {"commit": None, "dirty": None}


def test_git_state_of_the_checkout_the_toolkit_runs_from(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "source_root", lambda: repo)
    assert results.git_state() == {"commit": git(repo, "rev-parse", "--short", "HEAD"), "dirty": False}


def test_metadata_fields(repo: Path) -> None:
    meta = results.metadata(transport="tcp", ranks=2, now=NOW, repo=repo)
    assert meta == {
        "weft_version": results.library_version(),
        "toolkit_version": weft.__version__,
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
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "bench" / "results"))
    path = results.save("ft", {}, transport="shm", ranks=2, now=NOW)
    assert path.parent == tmp_path / "bench" / "results"
    assert results.latest_path("ft").is_file()


@pytest.fixture
def no_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """None of the variables that choose the results directory, and a home
    of the test's own; returns the home."""
    for name in ("WEFT_RESULTS_DIR", "WEFT_BUILD_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def checkout(root: Path, *, build: bool) -> Path:
    (root / "python" / "weft").mkdir(parents=True)
    if build:
        (root / "build").mkdir()
    return root


def test_results_dir_is_weft_results_dir_first(no_settings: Path, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "mine"))
    assert results.results_dir() == tmp_path / "mine"


def test_results_dir_of_a_build_is_its_results_folder(no_settings: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(tmp_path / "elsewhere"))
    assert results.results_dir() == tmp_path / "elsewhere" / "results"
    monkeypatch.delenv("WEFT_BUILD_DIR")
    root = checkout(tmp_path / "weft", build=True)
    monkeypatch.setattr(runner, "source_root", lambda: root)
    assert results.results_dir() == root / "build" / "results"


def test_results_dir_without_a_build_is_the_users_data_directory(no_settings: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    # a checkout not built yet, then an installed toolkit (no checkout)
    root = checkout(tmp_path / "weft", build=False)
    monkeypatch.setattr(runner, "source_root", lambda: root)
    assert results.results_dir() == no_settings / ".local" / "share" / "weft" / "results"
    monkeypatch.setattr(runner, "source_root", lambda: None)
    assert results.results_dir() == no_settings / ".local" / "share" / "weft" / "results"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert results.results_dir() == tmp_path / "data" / "weft" / "results"
    # the XDG rules: a relative path is not a data home
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    assert results.results_dir() == no_settings / ".local" / "share" / "weft" / "results"


def test_results_dir_is_never_in_the_package_or_the_source_tree(no_settings: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    package = Path(results.__file__).resolve().parents[1]
    root = runner.source_root()
    for build in (None, str(no_settings / "build")):
        if build is None:
            monkeypatch.delenv("WEFT_BUILD_DIR", raising=False)
        else:
            monkeypatch.setenv("WEFT_BUILD_DIR", build)
        chosen = results.results_dir().resolve()
        assert package not in chosen.parents
        if root is not None:
            assert chosen == root / "build" / "results" or root not in chosen.parents


def test_save_creates_the_directory_or_says_why_it_cannot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "a" / "b"))
    assert results.save("ft", {}, transport="shm", ranks=2, now=NOW).parent == tmp_path / "a" / "b"
    (tmp_path / "file").write_text("not a directory\n")
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path / "file" / "results"))
    with pytest.raises(WeftError, match=r"cannot create the directory .*file/results: .*set WEFT_RESULTS_DIR"):
        results.save("ft", {}, transport="shm", ranks=2, now=NOW)


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
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
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
    monkeypatch.setenv("WEFT_RESULTS_DIR", str(tmp_path))
    path = results.save("flood", {"count": 3}, transport="shm", ranks=2, now=NOW)
    document = results.measure_or_load("flood", lambda: path, lambda d: "not shown", {".png": drawn}, json_only=True)
    out, err = capsys.readouterr()
    assert json.loads(out) == document == results.load(path)
    assert err == f"saved {path}\n"
    assert not path.with_suffix(".png").exists()
