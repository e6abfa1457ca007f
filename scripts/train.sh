#!/usr/bin/env bash
# scripts/train.sh: the main job -- installs packages (Fashion-MNIST included), builds ember and
# runs `ember train` (the MLP, a few epochs) on the best device here. Extra arguments go to
# `ember train`, e.g. `bash scripts/train.sh --model cnn --epochs 10`.
#
# The build has the CUDA backend when this machine can run it: the CUDA toolkit's nvcc is there
# and an NVIDIA driver answers (`nvidia-smi -L` lists a GPU); it is then compiled for the GPUs
# present only (CMAKE_CUDA_ARCHITECTURES=native) and `ember train` picks cuda:0. Otherwise the
# build is CPU-only (a CUDA build without a driver would only cost build time). EMBER_TRAIN_BUILD=cpu
# or =cuda forces either.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

have_nvcc() { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; }
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }

build=${EMBER_TRAIN_BUILD:-auto}
case "$build" in
  auto) if have_nvcc && have_gpu; then build=cuda; else build=cpu; fi ;;
  cpu | cuda) ;;
  *)
    echo "scripts/train.sh: EMBER_TRAIN_BUILD='$build' is not auto, cpu or cuda" >&2
    exit 2
    ;;
esac

if [ "$build" = cuda ]; then
  have_nvcc || { echo "scripts/train.sh: EMBER_TRAIN_BUILD=cuda needs the CUDA toolkit (nvcc)" >&2; exit 2; }
  echo "scripts/train.sh: building with the CUDA backend (EMBER_TRAIN_BUILD=cpu for CPU-only)"
  arch=native
  have_gpu || arch="80-real;90"  # forced without a driver: the default architectures
  cmake --preset cuda -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF \
        "-DCMAKE_CUDA_ARCHITECTURES=$arch" >/dev/null
  cmake --build --preset cuda --target ember_cli
  ember=build/cuda/tools/ember/ember
else
  echo "scripts/train.sh: building CPU-only (set EMBER_TRAIN_BUILD=cuda to force the CUDA backend)"
  cmake --preset release -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build --preset release --target ember_cli
  ember=build/release/tools/ember/ember
fi
"$ember" info
"$ember" train "$@"
