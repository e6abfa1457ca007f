#!/usr/bin/env bash
# tests/cuda_emu/mutations.sh [BUILD_DIR]: breaks a CUDA kernel on purpose, one mutation at a time,
# and checks that the emulated device's tests of it fail: an off-by-one in a reduction's tail, a
# missing __syncthreads, a wrong shuffle mask, and the two 16-bit bugs the emulator found (an
# 8-byte copy per 16-bit element in index_select, 16-bit atomic adds on one byte). Each source is
# restored after its run (and on exit). Prints one line per mutation; exits 1 if any survived.
# Takes a few minutes (each mutation recompiles one kernel file of the release build).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
cuda=src/backend/cuda
backup=$(mktemp -d)
restore() { for f in "$backup"/*; do [ -e "$f" ] && cp "$f" "$cuda/$(basename "$f")"; done; }
trap 'restore; rm -rf "$backup"' EXIT
survived=0

# mutate NAME FILE OLD NEW GTEST-FILTER: replaces OLD with NEW (several pairs: separated by @@).
mutate() {
  local name=$1 file=$2 old=$3 new=$4 filter=$5
  cp "$cuda/$file" "$backup/$file"
  python3 - "$cuda/$file" "$old" "$new" <<'PY' || { echo "$name: the source no longer has the text to mutate"; survived=1; return; }
import sys
path, olds, news = sys.argv[1:4]
s = open(path).read()
for old, new in zip(olds.split("@@"), news.split("@@")):
    if old not in s:
        sys.exit(1)
    s = s.replace(old, new, 1)
open(path, "w").write(s)
PY
  if ! cmake --build "$build" --target ember_cuda_emu_tests >/dev/null 2>&1; then
    echo "$name: does not compile"
    survived=1
  else
    local out
    out=$("$build/tests/cuda_emu/ember_cuda_emu_tests" --gtest_filter="$filter" 2>&1)
    local failed
    failed=$(sed -n 's/^ *\([0-9]*\) FAILED TESTS\{0,1\}$/\1/p' <<<"$out")
    if [ -n "$failed" ]; then
      echo "$name: caught ($failed tests fail)"
    else
      echo "$name: SURVIVED"
      survived=1
    fi
  fi
  cp "$backup/$file" "$cuda/$file"
}

mutate "reduction tail off by one (cuda_reduce.cu)" cuda_reduce.cu \
  "r < end; r += blockDim.x" "r < end - 1; r += blockDim.x" '*Reduce*/cuda:*sum*_cuda'
mutate "missing __syncthreads (cuda_softmax.cu)" cuda_softmax.cu \
  $'mx = shift_of(shared[0], log);\n    __syncthreads();' 'mx = shift_of(shared[0], log);' \
  '*softmax*_cuda:*Softmax*/cuda'
mutate "wrong shuffle mask (cuda_attention_half.cu)" cuda_attention_half.cu \
  "__shfl_xor_sync(kFullMask, mx, 1)" "__shfl_xor_sync(0x0000ffffu, mx, 1)" \
  '*HalfPrecisionOnTensorCores/cuda'
mutate "index_select copies 8 bytes per 16-bit element (cuda_index.cu)" cuda_index.cu \
  $'    case 2:\n      return f.template operator()<uint16_t>();\n' '' '*index_select*_cuda'
mutate "16-bit atomic adds on one byte (cuda_index.cu)" cuda_index.cu \
  "std::is_same_v<T, Half> && kNativeHalfAdd@@std::is_same_v<T, BFloat16> && kNativeBFloat16Add@@using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;" \
  "std::is_same_v<T, Half> && false@@std::is_same_v<T, BFloat16> && false@@using Bits = uint8_t;" \
  '*scatter_add*_cuda'
cmake --build "$build" --target ember_cuda_emu_tests >/dev/null 2>&1
exit "$survived"
