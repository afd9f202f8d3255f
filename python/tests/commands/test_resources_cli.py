from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import RenderableType

from weft import cli
from weft.commands import resources
from weft.models import mlx5


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert cli.main(["resources", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_resources_is_a_top_level_command() -> None:
    assert "resources" in cli.COMMANDS
    args = cli.build_parser().parse_args(["resources", "--model", "mlx5", "--threads", "4", "--policy", "single"])
    assert args.func is resources.command and args.threads == 4 and args.policy == "single"


def test_policy_all_lists_the_six_categories_relative_to_mpi_everywhere(
        capsys: pytest.CaptureFixture[str], render_text: Callable[[RenderableType], str]) -> None:
    document = run_json(capsys, "--model", "mlx5", "--threads", "16", "--policy", "all")
    assert isinstance(document, dict)
    rows = document["rows"]
    assert [row["category"] for row in rows] == [c.value for c in mlx5.CATEGORIES]
    assert [row["hw_share_of_process"] for row in rows] == [1.0, 0.3125, 0.1875, 0.125, 0.0625, 0.0625]
    text = render_text(resources.categories_table(rows, 16))
    assert "MODELLED, not measured" in text
    for expected in ("MPI everywhere", "dedicated-2x", "31.25", "18.75", "12.50", "6.25", "128", "5.40"):
        assert expected in text


def test_one_policy_with_its_uuar_assignment(render_text: Callable[[RenderableType], str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["resources", "--threads", "16", "--policy", "static", "--assignment"]) == 0
    out = capsys.readouterr().out
    assert "QPs sharing a uUAR: 5 and 16" in out
    assert "MODELLED" in out
    row = run_json(capsys, "--threads", "3", "--policy", "shared:2")
    assert isinstance(row, dict)
    assert (row["category"], row["uars"], row["qps"]) == ("Shared Dynamic", 10, 3)


def test_sharing_sweep_over_divisors(capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "--threads", "16", "--sharing", "ctx-2xqps")
    assert isinstance(document, dict)
    assert [row["ways"] for row in document["rows"]] == [1, 2, 4, 8, 16]
    assert document["rows"][-1]["uuars"] == 80
    assert cli.main(["resources", "--threads", "16", "--sharing", "ctx"]) == 0
    assert "288" in capsys.readouterr().out


def test_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mlx5.png"
    assert cli.main(["resources", "--threads", "2", "--policy", "all", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(path) in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--policy", "shared:x"], "unknown endpoint policy 'shared:x'"),
    (["--policy", "static:0"], "k must be >= 1"),
    (["--threads", "0"], "--threads must be >= 1, got 0"),
    (["--model", "psm2"], "unknown model 'psm2'"),
    (["--assignment"], "--assignment shows one policy"),
    (["--sharing", "cq", "--assignment"], "do not combine with --sharing"),
    (["--sharing", "cq", "--plot", "x.png"], "do not combine with --sharing"),
    (["--sharing", "cq", "--cq-sharing", "2"], "does not combine with --cq-sharing"),
    (["--cq-sharing", "0"], "cq_sharing must be an integer >= 1, got 0"),
    (["--policy", "dedicated", "--threads", "300"], "256 maximally independent TDs"),
    (["--plot", "/nonexistent-dir/x.png"], "--plot /nonexistent-dir/x.png: the directory /nonexistent-dir does not exist"),
])
def test_bad_input_is_a_clear_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["resources", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("weft: error: ") and message in err and "Traceback" not in err


def test_malformed_numbers_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["resources", "--threads", "many"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["resources", "--sharing", "pd"])
    assert "invalid choice" in capsys.readouterr().err


def test_unwritable_plot_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "taken.png"
    directory.mkdir()
    assert cli.main(["resources", "--threads", "1", "--policy", "single", "--plot", str(directory)]) == 1
    err = capsys.readouterr().err
    assert f"--plot {directory}: is a directory" in err and "Traceback" not in err
