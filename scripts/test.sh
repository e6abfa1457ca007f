#!/usr/bin/env bash
# scripts/test.sh: the whole test suite -- installs packages and the Python environment of the
# interop tests, builds (release) and runs CTest; prints each step's wall time at the end
# (scripts/stages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
stage_budget 1200
# Idle OpenMP threads spin ~300000 times by default before sleeping; with tests running side by
# side on few cores that stalls every parallel region (see tools/ember/omp_policy.h).
export GOMP_SPINCOUNT="${GOMP_SPINCOUNT:-10000}"
stage "packages (scripts/install-deps.sh --tests)" bash scripts/install-deps.sh --tests
stage "Python environments (scripts/python-env.sh)" bash scripts/python-env.sh
# EMBER_TEST_SHARDS=N (.ci/run): each GoogleTest binary as N CTest shards instead of a CTest test
# per GoogleTest test (cmake/testing.cmake); a developer's run keeps one per test.
cmake --preset release -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_EXAMPLES=ON \
  -DEMBER_TEST_SHARDS="${EMBER_TEST_SHARDS:-0}" >/dev/null
stage "release build" cmake --build --preset release
stage "release tests" ctest --preset release -j "$(nproc)"
