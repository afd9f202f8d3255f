"""The package's rooms (weft/__init__.py): every module imports on its own,
imports only from its own room and the rooms below it, at its top, and no
two modules import each other, directly or through others; its package
data is where pyproject.toml says."""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import weft

PACKAGE = Path(weft.__file__).resolve().parent
# The rooms, lowest first: a module may import from its room and those before it.
ROOMS = ("core", "models", "bench", "commands")
MODULES = sorted(info.name for info in pkgutil.walk_packages(weft.__path__, "weft."))

# Run in a fresh interpreter: forget every weft module, then import one;
# print the modules that failed, with the error.
FRESH_IMPORTS = """
import importlib, json, sys
failed = {}
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "weft" or m.startswith("weft.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = repr(exc)
print(json.dumps(failed))
"""


def source(name: str) -> Path:
    path = PACKAGE.joinpath(*name.split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def room(name: str) -> str | None:
    """The room of a module (None for weft itself and weft.cli)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ROOMS) else None


def weft_imports(name: str) -> list[tuple[str, int, bool]]:
    """(module imported, line, at the module's top) for every import of a
    weft module by module `name`: `from weft.x import y` imports weft.x.y
    when that is a module, else weft.x."""
    tree = ast.parse(source(name).read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module
                       for alias in node.names]
        else:
            continue
        found += [(target, node.lineno, id(node) in top) for target in targets
                  if target == "weft" or target.startswith("weft.")]
    return found


def test_the_package_has_only_init_and_cli_besides_its_rooms() -> None:
    top = sorted(path.name for path in PACKAGE.iterdir() if path.name != "__pycache__")
    assert top == sorted(["__init__.py", "cli.py", *ROOMS]), top
    assert all((PACKAGE / name / "__init__.py").is_file() for name in ROOMS)


def test_every_module_imports_on_its_own_in_a_fresh_interpreter() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", FRESH_IMPORTS, *MODULES], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}
    assert len(MODULES) > 30   # the walk found the rooms' modules


@pytest.mark.parametrize("name", MODULES)
def test_imports_flow_down_the_rooms_at_the_top_of_a_module(name: str) -> None:
    mine = room(name)
    for target, line, at_top in weft_imports(name):
        where = f"{source(name).relative_to(PACKAGE.parent)}:{line} imports {target}"
        assert at_top, f"{where} inside a function or block"
        theirs = room(target)
        if name == "weft":
            pytest.fail(f"{where}: the package's root imports none of its modules")
        elif mine is None:
            continue   # weft.cli, above the rooms
        elif theirs is None:
            assert target == "weft", f"{where}: a room imports weft.cli"
        else:
            assert ROOMS.index(theirs) <= ROOMS.index(mine), f"{where}: up from {mine} to {theirs}"


def test_no_module_imports_itself_through_others() -> None:
    graph = {name: {target for target, _, _ in weft_imports(name) if target in MODULES and target != "weft"}
             for name in MODULES}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            pytest.fail("import cycle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, path + [name])
        done.add(name)

    for name in MODULES:
        visit(name, [])


def test_package_data_is_shipped() -> None:
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    data = pyproject["tool"]["setuptools"]["package-data"]
    shipped = {package: patterns for package, patterns in data.items()}
    assert shipped == {"weft.models": ["data/*.json"]}
    files = sorted((PACKAGE / "models" / "data").glob("*.json"))
    assert [f.name for f in files] == ["tx2-cx4.json"]
    for f in files:
        assert json.loads(f.read_text())["name"] == f.stem
