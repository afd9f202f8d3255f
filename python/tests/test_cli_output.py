"""What the command line promises every command: --json, --launcher where
jobs start, whole values off a terminal, clear errors for bad counts and
output paths."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from weft import cli
from weft.core import report, results


def leaves(parser, path=()):
    children = cli.subcommands(parser)
    if not children:
        yield path, parser
    for name, child in children.items():
        yield from leaves(child, (*path, name))


def test_every_command_takes_json() -> None:
    missing = [" ".join(path) for path, parser in leaves(cli.build_parser())
               if "--json" not in parser._option_string_actions]
    assert missing == []


def test_every_command_that_starts_jobs_takes_a_launcher() -> None:
    commands = {" ".join(path): parser for path, parser in leaves(cli.build_parser())}
    launching = [name for name in commands if name.split()[0] in ("bench", "topo", "project")] + ["model breakdown"]
    assert {"bench rma", "bench latbw", "topo", "project calibrate"} <= set(launching)
    assert all("--launcher" in commands[name]._option_string_actions for name in launching)
    assert "--launcher" not in commands["resources"]._option_string_actions


@pytest.mark.parametrize("argv", [
    ["bench", "rma", "--np", "0"],
    ["bench", "rma", "--np", "3"],
    ["bench", "ft", "--np", "0"],
    ["bench", "profcost", "--np", "1"],
    ["bench", "coll", "--ranks", "0"],
    ["bench", "summa", "--ranks", "2", "0"],
    ["topo", "-n", "0"],
    ["model", "breakdown", "--np", "0"],
])
def test_bad_rank_counts_are_refused_before_anything_runs(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "rank" in err and "Traceback" not in err


def test_the_launcher_option_sets_the_template(fake_build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["topo", "--launcher", "srun -N 2"]) == 1
    assert "--launcher 'srun -N 2' has no {np}" in capsys.readouterr().err


def test_topo_png_in_a_missing_directory_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["topo", "--png", str(tmp_path / "nonexistent" / "x.png")]) == 1
    err = capsys.readouterr().err
    assert f"the directory {tmp_path / 'nonexistent'} does not exist" in err and "Traceback" not in err


def test_whatif_plot_in_a_missing_directory_is_refused_as_resources_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["model", "whatif"], ["resources", "--threads", "2"]):
        assert cli.main([*argv, "--plot", str(tmp_path / "nope" / "x.png")]) == 1
        assert f"the directory {tmp_path / 'nope'} does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nope").exists()


def test_whatif_json(capsys: pytest.CaptureFixture[str], results_dir: Path) -> None:
    assert cli.main(["model", "whatif", "--json", "--kind", "latency", "--reductions", "50",
                     "--project", "PIO_copy=15"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["reductions"] == [50.0] and list(document["quantities"]) == ["latency"]
    targets = document["quantities"]["latency"]["targets"]
    assert targets and all(len(t["speedups"]) == 1 for t in targets)
    assert document["projections"][0]["name"] == "PIO_copy"
    assert not results_dir.exists()  # no chart drawn


def test_breakdown_preset_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["model", "breakdown", "--preset", "tx2-cx4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"table_1", "table_1_totals", "text"} and document["table_1"]


def test_report_json_prints_the_documents(capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).with_name("data")
    assert cli.main(["report", "--json", str(data / "rma-fixture.json")]) == 0
    assert json.loads(capsys.readouterr().out)["benchmark"] == "rma"
    assert cli.main(["report", "--json", str(data / "rma-fixture.json"), str(data / "flood-fixture.json")]) == 0
    assert [d["benchmark"] for d in json.loads(capsys.readouterr().out)] == ["rma", "flood"]


def test_resources_of_a_policy_print_when_the_baseline_exceeds_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["resources", "--threads", "1025", "--policy", "single", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["threads"] == 1025 and row["ctxs"] == 1
    assert row["hw_share_of_process"] is None and "MPI everywhere" in row["baseline_note"]
    assert cli.main(["resources", "--threads", "1025", "--policy", "single"]) == 0
    out = capsys.readouterr().out
    assert "no share of MPI everywhere" in out


def test_piped_resources_print_every_value(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # As `weft resources --threads 4 | cat`: a console on a pipe, which rich
    # would fit into 80 columns, cutting values with "…".
    piped = io.StringIO()
    monkeypatch.setattr(report, "console", report.make_console(file=piped))
    assert cli.main(["resources", "--threads", "4"]) == 0
    assert cli.main(["resources", "--threads", "4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    text = piped.getvalue()
    assert "…" not in text
    for row in document["rows"]:
        line = next(line for line in text.splitlines() if line.split()[:1] == [row["category"].split()[0]]
                    and row["policy"] in line)
        for key in ("ctxs", "qps", "uars", "uuars"):
            assert str(row[key]) in line.split(), (key, line)


def test_saved_results_are_strict_json(results_dir: Path) -> None:
    path = results.save("rma", {"results": [{"value": math.nan}, {"value": math.inf}], "ok": 1.5},
                        transport="shm", ranks=2)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    document = json.loads(text)
    assert document["results"] == [{"value": None}, {"value": None}] and document["ok"] == 1.5


def test_printed_json_is_strict(capsys: pytest.CaptureFixture[str]) -> None:
    report.print_json({"a": [math.nan, -math.inf, 1.0], "b": {"c": math.nan}, "s": 'q"\\'})
    out = capsys.readouterr().out
    assert json.loads(out, parse_constant=lambda c: pytest.fail(c)) == {"a": [None, None, 1.0], "b": {"c": None},
                                                                        "s": 'q"\\'}
