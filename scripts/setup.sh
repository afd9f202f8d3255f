#!/usr/bin/env bash
# Makes sure what weft's two README commands need is on this machine, so
# that they can call it every time at no cost.
#
# What is needed is looked for as a build would find it (commands on PATH,
# pkg-config modules, libraries), never by asking a package manager: a
# machine whose dependencies come from Spack, modules or /usr/local passes
# without installing anything.  Only when something is missing, and only on
# Debian or Ubuntu, the missing Debian packages are installed (root or sudo).
# Elsewhere the script names what is missing and exits 1; the plain CMake
# recipe of the README then builds weft with what the machine has.
#
#   scripts/setup.sh            what `make demo` and `make test` need
#   scripts/setup.sh --check    also what `make check` needs (clang,
#                               valgrind, MPICH beside Open MPI)
set -euo pipefail

full=0
[ "${1:-}" = "--check" ] && full=1

missing=()   # Debian package names of what is not found
need() {     # need DEBIAN_PACKAGE TEST...: the package when the test fails
  local pkg=$1
  shift
  "$@" > /dev/null 2>&1 || missing+=("$pkg")
}
have_cmd() { command -v "$1"; }
have_pc() { pkg-config --exists "$1"; }
have_lib() {  # a library the linker finds
  printf 'int main(void){return 0;}\n' | cc -x c - -o /dev/null "-l$1"
}
have_py_venv() { python3 -c 'import venv, ensurepip'; }

need build-essential have_cmd cc
need build-essential have_cmd make
need cmake have_cmd cmake
need pkg-config have_cmd pkg-config
need libucx-dev have_pc ucx
need ucx-utils have_cmd ucx_info
need libhwloc-dev have_pc hwloc
need libopenmpi-dev have_cmd mpicc
need openmpi-bin have_cmd mpirun
need libfftw3-dev have_pc fftw3
need libopenblas-dev have_lib openblas
need python3-venv have_py_venv
need python3-pip have_cmd pip3
# SimGrid SMPI: the projections to machines this one is not (weft project).
need libsimgrid-dev have_cmd smpicc
if [ $full -eq 1 ]; then
  need clang have_cmd clang
  need libclang-rt-14-dev bash -c 'printf "int main(void){return 0;}\n" |
                                   clang -x c - -fsanitize=address,undefined -o /dev/null'
  need valgrind have_cmd valgrind
  need mpich have_cmd mpiexec.mpich
  need libmpich-dev have_cmd mpicc.mpich
fi

[ ${#missing[@]} -eq 0 ] && exit 0
# one name per package, in order
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')

if [ ! -r /etc/debian_version ] || ! command -v apt-get > /dev/null; then
  cat >&2 <<EOF
weft setup: not found on this machine: ${missing[*]} (Debian package names).
Install them with your system's package manager, Spack or modules, or build
weft by hand: cmake -S . -B build -DCMAKE_INSTALL_PREFIX=... (README, Install).
EOF
  exit 1
fi

echo "weft setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
