#!/usr/bin/env bash
# The installed toolkit works outside the source tree and writes only into
# the user's data directory:
#   1. `cmake --install` into a scratch prefix, then the prefix's bin/weft
#      runs `weft info` and a short `weft bench rma` from a scratch
#      directory, HOME pointed at a scratch home;
#   2. `pip install` of python/ into a fresh venv, whose `weft info` finds
#      the programs through WEFT_PREFIX;
#   3. nothing was written into the source tree, the prefix or the venv,
#      and the result file is in $HOME/.local/share/weft/results.
# Usage: check_toolkit.sh BUILD SOURCE PYTHON (a Python with numpy,
# matplotlib and rich; exit status 77, a skip, if it lacks them).
set -euo pipefail
build=$(cd "$1" && pwd -P) src=$(cd "$2" && pwd -P) python=$3
fail() { echo "check_toolkit: $*" >&2; exit 1; }

if ! "$python" -c 'import numpy, matplotlib, rich' 2> /dev/null; then
    echo "check_toolkit: $python lacks numpy, matplotlib or rich (make python, or -DWEFT_TOOLKIT_PYTHON=...)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The toolkit must find everything through the installation alone.
unset WEFT_BUILD_DIR WEFT_PREFIX WEFT_RESULTS_DIR WEFT_LAUNCHER WEFT_MPI XDG_DATA_HOME PYTHONPATH
export HOME=$work/home WEFT_PYTHON=$python
mkdir -p "$HOME" "$work/elsewhere"
cd "$work/elsewhere"

# Files of a tree, except the build tree when it lies inside (cmake
# --install writes its install_manifest.txt there).
listing() { find "$1" -path "$build" -prune -o -print | LC_ALL=C sort; }
stamp=$work/stamp
touch "$stamp"
sleep 1  # mtimes after the stamp are strictly newer

cmake --install "$build" --prefix "$work/prefix" > /dev/null
prefix=$work/prefix
[ -x "$prefix/bin/weft" ] || fail "cmake --install did not install bin/weft"
ls "$prefix"/libexec/weft/weft_sysinfo "$prefix"/libexec/weft/weft_bench_rma > /dev/null
listing "$prefix" > "$work/prefix.before"

# 1. The installed command, from a directory outside the source tree.
"$prefix/bin/weft" --version | grep -q "^weft library " || fail "weft --version does not find the library"
"$prefix/bin/weft" info > "$work/info.txt" || fail "weft info failed"
grep -q "MPI" "$work/info.txt" || fail "weft info printed no MPI table"
"$prefix/bin/weft" bench rma --tls shm --no-peers --no-busy --iters 256 --json > "$work/rma.json" \
    || fail "weft bench rma failed"
"$python" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["benchmark"] == "rma", d' \
    "$work/rma.json" || fail "weft bench rma --json did not print its result document"
data=$HOME/.local/share/weft/results
ls "$data"/rma-*-*.json > /dev/null 2>&1 || fail "no result file in $data"
[ -f "$data/rma-latest.json" ] || fail "no rma-latest.json in $data"

# The wrapper names the packages a Python lacks (-S: no site-packages).
printf '#!/bin/sh\nexec %s -S "$@"\n' "$python" > "$work/bare-python"
chmod +x "$work/bare-python"
if WEFT_PYTHON=$work/bare-python "$prefix/bin/weft" info 2> "$work/bare.err"; then
    fail "bin/weft ran with a Python lacking numpy, matplotlib and rich"
fi
grep -q "lacks: numpy matplotlib rich" "$work/bare.err" || fail "bin/weft did not name the missing packages"

# 2. pip install of the toolkit into a fresh venv, offline: numpy,
# matplotlib and rich come from $python's environment through a .pth file,
# and the package is built from a copy (setuptools writes build/ and
# *.egg-info beside the sources it builds).
cp -r "$src/python" "$work/toolkit-src"
rm -rf "$work/toolkit-src/build" "$work/toolkit-src"/*.egg-info
"$python" -m venv --without-pip "$work/venv"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
"$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))' > "$site/toolkit-deps.pth"
# Offline when $python's setuptools can build wheels, else setuptools is
# fetched into pip's isolated build environment.
pip=("$python" -m pip --python "$work/venv/bin/python" install -q --no-deps)
"${pip[@]}" --no-index --no-build-isolation "$work/toolkit-src" > "$work/pip.log" 2>&1 \
    || "${pip[@]}" "$work/toolkit-src" > "$work/pip.log" 2>&1 \
    || { cat "$work/pip.log" >&2; fail "pip install of the toolkit failed"; }
[ -x "$work/venv/bin/weft" ] || fail "pip install did not install the weft console script"
where=$("$work/venv/bin/python" -c 'import weft; print(weft.__file__)')
case $where in "$site"/*) ;; *) fail "the venv imports weft from $where, not from its own site-packages" ;; esac
listing "$work/venv" > "$work/venv.before"
WEFT_PREFIX=$prefix "$work/venv/bin/weft" info > "$work/info-venv.txt" || fail "the venv's weft info failed"
grep -q "MPI" "$work/info-venv.txt" || fail "the venv's weft info printed no MPI table"
if "$work/venv/bin/weft" info 2> "$work/noprefix.err"; then
    fail "the venv's weft ran without WEFT_PREFIX or a build"
fi
grep -q "WEFT_PREFIX" "$work/noprefix.err" || fail "the error without weft's programs does not name WEFT_PREFIX"

# 3. Nothing written where it must not be.
listing "$prefix" > "$work/prefix.after"
diff "$work/prefix.before" "$work/prefix.after" || fail "the toolkit wrote into the installation"
listing "$work/venv" > "$work/venv.after"
diff "$work/venv.before" "$work/venv.after" || fail "the toolkit wrote into the venv"
changed=$(find "$src" -path "$build" -prune -o -newer "$stamp" -print)
[ -z "$changed" ] || fail "written into the source tree: $changed"
echo "installed toolkit: weft info and weft bench rma outside the tree, results in $data, nothing else written"
