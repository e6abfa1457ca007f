#!/usr/bin/env bash
# scripts/test.sh: the whole test suite -- installs packages and the Python environment of the
# interop tests, builds (release) and runs CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
# Idle OpenMP threads spin ~300000 times by default before sleeping; with tests running side by
# side on few cores that stalls every parallel region (see tools/ember/omp_policy.h).
export GOMP_SPINCOUNT="${GOMP_SPINCOUNT:-10000}"
bash scripts/install-deps.sh --tests
bash scripts/python-env.sh
cmake --preset release -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_EXAMPLES=ON >/dev/null
cmake --build --preset release
ctest --preset release -j "$(nproc)"
