#!/usr/bin/env bash
# Installs weft from the build tree into a scratch prefix, then builds a
# consumer with pkg-config and with find_package(weft), and runs both.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
lib=$(ls -d "$work"/prefix/lib*/ | head -n 1)

export PKG_CONFIG_PATH="$lib/pkgconfig"
cc "$src/consumer.c" $(pkg-config --cflags --libs weft) -Wl,-rpath,"$lib" -o "$work/by-pkgconfig"
"$work/by-pkgconfig" | grep -q "^WEFT_OK"

mkdir "$work/cmake"
cp "$src/consumer.c" "$work/cmake/"
cp "$src/CMakeLists.txt.in" "$work/cmake/CMakeLists.txt"
cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_RPATH="$lib" > /dev/null
cmake --build "$work/cmake/build" > /dev/null
"$work/cmake/build/consumer" | grep -q "^WEFT_OK"
echo "installed weft builds consumers with pkg-config and find_package(weft)"
