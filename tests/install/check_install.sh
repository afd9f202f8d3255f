#!/usr/bin/env bash
# Installs weft from the build tree into a scratch prefix, then builds a
# consumer with pkg-config and with find_package(weft), and runs both; and
# checks that a consumer using the other MPI (when this machine has one) is
# refused when it is configured or compiled, with a message naming both.
#   check_install.sh BUILD_DIR SOURCE_DIR FLAVOR MPICC [OTHER_MPICC]
set -euo pipefail
build=$1 src=$2 flavor=$3 mpicc=$4 other=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
lib=$(ls -d "$work"/prefix/lib*/ | head -n 1)

export PKG_CONFIG_PATH="$lib/pkgconfig"
cc "$src/consumer.c" $(pkg-config --cflags --libs weft) -Wl,-rpath,"$lib" -o "$work/by-pkgconfig"
"$work/by-pkgconfig" | grep -q "^WEFT_OK"
[ "$(pkg-config --variable=mpi_flavor weft)" = "$flavor" ] ||
  { echo "weft.pc records MPI '$(pkg-config --variable=mpi_flavor weft)', the build '$flavor'"; exit 1; }
"$mpicc" "$src/consumer_mpi.c" $(pkg-config --cflags --libs weft) -Wl,-rpath,"$lib" -o "$work/with-mpi"
"$work/with-mpi" | grep -q "^mpi $flavor$"

mkdir "$work/cmake"
cp "$src/consumer.c" "$work/cmake/"
cp "$src/CMakeLists.txt.in" "$work/cmake/CMakeLists.txt"
cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DMPI_C_COMPILER="$mpicc" -DCMAKE_BUILD_RPATH="$lib" > /dev/null
cmake --build "$work/cmake/build" > /dev/null
"$work/cmake/build/consumer" | grep -q "^WEFT_OK"
echo "installed weft builds consumers with pkg-config and find_package(weft)"

if [ -z "$other" ]; then
  echo "no second MPI on this machine: the refusal of another MPI is not exercised"
  exit 0
fi
# The other MPI: CMake refuses at configure time ...
if cmake -S "$work/cmake" -B "$work/cmake/other" -DCMAKE_PREFIX_PATH="$work/prefix" \
         -DMPI_C_COMPILER="$other" > "$work/other.log" 2>&1; then
  echo "find_package(weft) accepted a project configured with $other"; exit 1
fi
grep -q "was built with MPI '$flavor'" "$work/other.log" ||
  { echo "configure failed without naming the MPI mismatch:"; cat "$work/other.log"; exit 1; }
# ... and the compiler, through weft_build.h, whatever the build system.
if "$other" -c "$src/consumer_mpi.c" $(pkg-config --cflags weft) -o "$work/other.o" 2> "$work/cc.log"; then
  echo "$other compiled a program against a weft built with $flavor"; exit 1
fi
grep -q "libweft was built with" "$work/cc.log" ||
  { echo "the compiler failed without naming the MPI mismatch:"; cat "$work/cc.log"; exit 1; }
echo "a consumer using $other is refused at configure and compile time"
