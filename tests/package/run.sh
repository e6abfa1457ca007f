#!/usr/bin/env bash
# tests/package/run.sh MODE SOURCE_DIR BUILD_DIR [BUILD_TYPE [LAUNCHER]]: builds and runs the
# consumer project against ember, MODE being find_package (install BUILD_DIR into a prefix first)
# or add_subdirectory. The consumer builds with BUILD_DIR's build type and compiler launcher
# (ccache), so the add_subdirectory build compiles ember's sources with the flags BUILD_DIR did:
# cache hits, not a second build of the library.
set -euo pipefail
mode=$1 src=$2 build=$3 build_type=${4:-} launcher=${5:-}
work="$build/package-test-$mode"
rm -rf "$work"
common=(-G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
if [ "$mode" = find_package ]; then
  cmake --install "$build" --prefix "$work/prefix" >/dev/null
  cmake -S "$src/tests/package" -B "$work/consumer" "${common[@]}" -DCMAKE_PREFIX_PATH="$work/prefix" \
    >/dev/null
else
  # The CPU-only build: compiling the CUDA kernels a second time would double the test's cost, and
  # the find_package mode already links a CUDA build's package.
  cmake -S "$src/tests/package" -B "$work/consumer" "${common[@]}" -DEMBER_SOURCE_DIR="$src" \
    -DEMBER_CUDA=OFF >/dev/null
fi
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
