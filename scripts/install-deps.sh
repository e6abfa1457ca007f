#!/usr/bin/env bash
# scripts/install-deps.sh [--tests]: installs the Debian 12 packages ember builds and tests with
# (as root). ccache makes a rebuild of unchanged sources a cache hit (CMakeLists.txt); `fortunes`
# is the default text of `ember train --model gpt`, `libgloo-dev` the CPU backend of
# ember::distributed. --tests adds what only the test suite needs: PyTorch (python3-torch, with
# numpy) for the interop test that loads ember's files in PyTorch itself.
set -euo pipefail
packages=(g++ cmake ninja-build ccache libgtest-dev libgmock-dev zlib1g-dev
          libzip-dev pkg-config nlohmann-json3-dev libutf8proc-dev libpcre2-dev libcli11-dev
          libgloo-dev dataset-fashion-mnist
          fortunes python3 python3-venv)
# libboost-context-dev: the fibers of the emulated CUDA device the tests run the CUDA kernels on.
# librsvg2-bin: rsvg-convert, which renders curves.svg in the CLI tests.
[ "${1:-}" = --tests ] && packages+=(python3-torch libboost-context-dev librsvg2-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
