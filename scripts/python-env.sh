#!/usr/bin/env bash
# Creates (once) the virtual environment of the Python toolkit and installs
# the weft package into it in editable mode, with its test dependencies.
set -euo pipefail
venv=${1:-.venv}
here=$(cd "$(dirname "$0")/.." && pwd)
stamp="$venv/.weft-installed"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if [ ! -f "$stamp" ] || [ "$here/python/pyproject.toml" -nt "$stamp" ]; then
  "$venv/bin/pip" install -q --upgrade pip setuptools wheel
  "$venv/bin/pip" install -q -e "$here/python[test]"
  touch "$stamp"
fi
