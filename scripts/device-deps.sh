#!/usr/bin/env bash
# scripts/device-deps.sh: fills .deps/ (not committed) with the sources the GPU check needs on a
# machine without Debian's packages (the lent GPU machines: nvcc, CMake, ninja, no apt): Debian's
# nlohmann-json and CLI11 headers and GoogleTest sources. Run here, then carry .deps to the GPU machine
# with the working tree and run scripts/gpu-check.sh there; its build uses EMBER_MINIMAL_DEPS
# (no zlib or libzip needed) and EMBER_DEPS_DIR=.deps.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
rm -rf .deps
mkdir -p .deps/include
cp -r /usr/include/nlohmann /usr/include/CLI .deps/include/
cp -r /usr/src/googletest .deps/googletest
echo "device-deps: $(du -sh .deps | cut -f1) in .deps (carry it: run's carry [\".deps\"])"
