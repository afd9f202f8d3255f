#!/usr/bin/env bash
# Installs what weft needs on Debian bookworm (root or sudo), only when something
# is missing, so the README's two commands can call it every time at no cost.
set -euo pipefail

PKGS=(build-essential cmake pkg-config mpich libmpich-dev
      libucx-dev ucx-utils libhwloc-dev hwloc
      libopenmpi-dev openmpi-bin
      libfftw3-dev libopenblas-dev
      python3-venv python3-pip
      clang libclang-rt-14-dev valgrind)
# SimGrid SMPI: the projection of the hierarchical collectives (weft project coll).
PKGS+=(libsimgrid-dev)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "weft setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
