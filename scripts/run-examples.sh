#!/usr/bin/env bash
# scripts/run-examples.sh: the main job until `ember train` lands -- builds ember and runs every
# tutorial example on the best device this machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=ON >/dev/null
cmake --build --preset release
for example in check_gpu set_device move_tensors move_model training_step device_error back_to_cpu mps_device multi_gpu data_parallel distributed_data_parallel; do
  echo "== examples/${example}.cpp"
  "build/release/examples/example_${example}"
done
