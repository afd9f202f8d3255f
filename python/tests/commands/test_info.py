from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_BUILD_DIR, real_program
from weft import WeftError, cli
from weft.commands import info


def test_render_shows_ucx_mpi_and_hwloc(sysinfo_sample: dict[str, Any], render_text) -> None:
    text = render_text(info.render(sysinfo_sample))
    for expected in (
        "weft 0.1.0",
        "UCX 1.13.1",
        "Open MPI v4.1.4, package: Debian OpenMPI",
        "hwloc 2.9.0",
        "Machine > Package > L3 (260MB) > 2 x (L2 (2MB) > L1d (48KB) > Core > PU)",
        "2 cores, 2 PUs, 1 NUMA nodes",
    ):
        assert expected in text
    tcp = next(line for line in text.splitlines() if " lo " in line)
    assert "tcp" in tcp
    assert "3.1" in next(line for line in text.splitlines() if "Open MPI" in line)
    l3 = next(line for line in text.splitlines() if "L3Cache" in line)
    assert l3.split() == ["2", "L3Cache", "1", "260MB"]


def test_render_reports_missing_sections(render_text) -> None:
    text = render_text(info.render({"weft_version": "0.1.0", "mpi": {"library": "MPICH 4.0.2", "standard": "4.0"}}))
    assert "UCX information unavailable" in text
    assert "hwloc: information unavailable" in text
    assert "MPICH 4.0.2" in text


@pytest.fixture
def fake_sysinfo(fake_build: Path, write_program):
    def make(stdout: str) -> Path:
        return write_program(fake_build / "libexec" / "weft" / "weft_sysinfo", f"print({stdout!r})")

    return make


def test_sysinfo_parses_the_program_output(fake_sysinfo, sysinfo_sample: dict[str, Any]) -> None:
    fake_sysinfo(json.dumps(sysinfo_sample))
    assert info.sysinfo() == sysinfo_sample


@pytest.mark.parametrize(("stdout", "message"), [("weft 0.1.0 {", "invalid JSON"), ("[1, 2]", "not an object")])
def test_sysinfo_rejects_bad_output(fake_sysinfo, stdout: str, message: str) -> None:
    fake_sysinfo(stdout)
    with pytest.raises(WeftError, match=message):
        info.sysinfo()


def test_info_json_prints_the_document(fake_sysinfo, sysinfo_sample: dict[str, Any],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    fake_sysinfo(json.dumps(sysinfo_sample))
    assert cli.main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == sysinfo_sample


def test_info_tables_from_the_program(fake_sysinfo, sysinfo_sample: dict[str, Any],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    fake_sysinfo(json.dumps(sysinfo_sample))
    assert cli.main(["info"]) == 0
    assert "UCX 1.13.1" in capsys.readouterr().out


@pytest.mark.skipif(real_program("weft_sysinfo") is None,
                    reason="no $WEFT_BUILD_DIR/libexec/weft/weft_sysinfo (build weft with `make`)")
def test_real_weft_sysinfo(monkeypatch: pytest.MonkeyPatch, render_text) -> None:
    monkeypatch.setenv("WEFT_BUILD_DIR", str(REAL_BUILD_DIR))
    document = info.sysinfo()
    assert document["weft_version"]
    assert document["ucx"]["version"] and document["ucx"]["transports"]
    assert document["mpi"]["library"]
    assert document["hwloc"]["cores"] >= 1 and document["hwloc"]["levels"][0]["type"] == "Machine"
    assert f"UCX {document['ucx']['version']}" in render_text(info.render(document))
