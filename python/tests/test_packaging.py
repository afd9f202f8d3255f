"""packaging/check_spack_package.py: the Spack package is checked without
Spack; a package that names a CMake option weft does not have, or lacks a
dependency, is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "packaging" / "check_spack_package.py"
PACKAGE = REPO / "packaging" / "spack" / "packages" / "weft" / "package.py"
CMAKELISTS = REPO / "CMakeLists.txt"


def check(package: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), str(package), str(CMAKELISTS)],
                          capture_output=True, text=True)


def test_the_package_passes() -> None:
    done = check(PACKAGE)
    assert done.returncode == 0, done.stderr


def test_an_unknown_option_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "package.py"
    bad.write_text(PACKAGE.read_text().replace('"WEFT_BUILD_APPS"', '"WEFT_BUILD_APS"'))
    done = check(bad)
    assert done.returncode == 1 and "no option WEFT_BUILD_APS" in done.stderr


def test_a_missing_dependency_and_a_syntax_error(tmp_path: Path) -> None:
    bad = tmp_path / "package.py"
    bad.write_text(PACKAGE.read_text().replace('depends_on("ucx@1.13:")', ""))
    assert "no depends_on('ucx')" in check(bad).stderr
    bad.write_text("class Weft(CMakePackage:\n")
    assert "does not parse" in check(bad).stderr


def test_one_version_everywhere() -> None:
    """include/weft.h holds the version (CMake reads it for the library,
    weft.pc and the CMake package); the toolkit reports the same."""
    import re

    import weft

    header = (REPO / "include" / "weft.h").read_text()
    parts = [re.search(rf"^#define WEFT_VERSION_{p} (\d+)$", header, re.MULTILINE) for p in
             ("MAJOR", "MINOR", "PATCH")]
    assert all(parts)
    version = ".".join(m.group(1) for m in parts if m)
    assert weft.__version__ == version
    assert re.search(rf'^version = "{re.escape(version)}"$', (REPO / "python" / "pyproject.toml").read_text(),
                     re.MULTILINE)
