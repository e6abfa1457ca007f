#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] [READER...]: builds the libFuzzer targets (the fuzz preset: clang with
# AddressSanitizer) and fuzzes each reader (safetensors npy npz idx pickle pt gguf by default) for
# SECONDS (default 600), one after the other. Each starts from the committed seeds in
# fuzz/corpus/<reader> and keeps the inputs it finds in build/fuzz/corpus/<reader>; crashing inputs
# go to build/fuzz/findings/<reader>/. Needs clang and libclang-rt-14-dev (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(safetensors npy npz idx pickle pt gguf)
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${readers[@]/#/ember_fuzz_}"
for r in "${readers[@]}"; do
  mkdir -p "build/fuzz/corpus/$r" "build/fuzz/findings/$r"
  echo "=== fuzzing $r for ${seconds}s"
  "build/fuzz/fuzz/ember_fuzz_$r" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="build/fuzz/findings/$r/" \
    "build/fuzz/corpus/$r" "fuzz/corpus/$r"
done
