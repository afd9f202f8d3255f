#!/usr/bin/env python3
"""Checks weft's Spack package without Spack: it parses as Python, defines
class Weft(CMakePackage) with its dependencies on an MPI provider, UCX and
hwloc, and every CMake variable it defines is an option of CMakeLists.txt
(or one of FindMPI's).  Exits 1 naming what is wrong.

usage: check_spack_package.py PACKAGE_PY CMAKELISTS_TXT
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

# Variables that are not weft's options but that the package may set.
CMAKE_STANDARD = {"MPI_C_COMPILER", "MPIEXEC_EXECUTABLE", "CMAKE_BUILD_TYPE"}
REQUIRED_DEPS = {"mpi", "ucx", "hwloc", "cmake"}


def call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def first_string(node: ast.Call) -> str | None:
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def problems(package: str, cmakelists: str) -> list[str]:
    try:
        tree = ast.parse(package)
    except SyntaxError as err:
        return [f"does not parse: {err}"]
    found: list[str] = []
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Weft"]
    if not classes:
        return ["no class Weft"]
    cls = classes[0]
    bases = {b.id for b in cls.bases if isinstance(b, ast.Name)}
    if "CMakePackage" not in bases:
        found.append("class Weft is not a CMakePackage")
    calls = [n for n in ast.walk(cls) if isinstance(n, ast.Call)]
    deps = {(first_string(c) or "").split("@")[0] for c in calls if call_name(c) == "depends_on"}
    for dep in sorted(REQUIRED_DEPS - deps):
        found.append(f"no depends_on({dep!r})")
    variants = {first_string(c) for c in calls if call_name(c) == "variant"}
    options = set(re.findall(r"^\s*option\((\w+)", cmakelists, re.MULTILINE))
    for c in calls:
        name = call_name(c)
        var = first_string(c)
        if name in ("define", "define_from_variant") and var is not None:
            if var not in options and var not in CMAKE_STANDARD:
                found.append(f"{name}({var!r}): CMakeLists.txt has no option {var}")
        if name == "define_from_variant" and len(c.args) > 1:
            variant = c.args[1].value if isinstance(c.args[1], ast.Constant) else None
            if variant not in variants:
                found.append(f"define_from_variant({var!r}, {variant!r}): no variant {variant!r}")
    if not any(call_name(c) == "version" for c in calls):
        found.append("no version()")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    package, cmakelists = (Path(a) for a in argv[1:])
    found = problems(package.read_text(), cmakelists.read_text())
    for line in found:
        print(f"{package}: {line}", file=sys.stderr)
    if not found:
        print(f"{package}: parses; its CMake variables are options of {cmakelists}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
