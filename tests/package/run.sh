#!/usr/bin/env bash
# tests/package/run.sh MODE SOURCE_DIR BUILD_DIR: builds and runs the consumer project against
# ember, MODE being find_package (install BUILD_DIR into a prefix first) or add_subdirectory.
set -euo pipefail
mode=$1 src=$2 build=$3
work="$build/package-test-$mode"
rm -rf "$work"
if [ "$mode" = find_package ]; then
  cmake --install "$build" --prefix "$work/prefix" >/dev/null
  cmake -S "$src/tests/package" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
else
  # The CPU-only build: compiling the CUDA kernels a second time would double the test's cost, and
  # the find_package mode already links a CUDA build's package.
  cmake -S "$src/tests/package" -B "$work/consumer" -G Ninja -DEMBER_SOURCE_DIR="$src" \
    -DEMBER_CUDA=OFF >/dev/null
fi
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
