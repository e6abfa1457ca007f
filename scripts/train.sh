#!/usr/bin/env bash
# scripts/train.sh: the main job -- installs packages (Fashion-MNIST included), builds ember and
# runs `ember train` (the MLP, a few epochs) on the best device here. Extra arguments go to
# `ember train`, e.g. `bash scripts/train.sh --model cnn --epochs 10`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF >/dev/null
cmake --build --preset release --target ember_cli
build/release/tools/ember/ember info
build/release/tools/ember/ember train "$@"
