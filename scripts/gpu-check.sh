#!/usr/bin/env bash
# scripts/gpu-check.sh [--prebuilt BUILD_DIR]: the CUDA check for a machine with an NVIDIA GPU,
# using only that machine's nvcc, CMake, ninja and python3 (with torch); no internet needed.
#   1. builds ember with the CUDA backend for the GPU present (build/gpu-check), with the
#      GoogleTest suite when GoogleTest is installed or carried in .deps (scripts/device-deps.sh);
#      --prebuilt uses binaries built elsewhere;
#   2. runs tools/gpu_smoke (every op on cuda:0 against the CPU) and the CUDA cases of the suite;
#   3. runs the smoke program under compute-sanitizer memcheck with EMBER_CUDA_NO_CACHING=1;
#   4. times a few large ops against PyTorch on the same GPU;
# and prints a table last. Exit status 0 when every step passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/gpu-check"
prebuilt=0
if [ "${1:-}" = --prebuilt ]; then
  build=$(cd "${2:?--prebuilt needs a build directory}" && pwd)
  prebuilt=1
fi
logs="$build/gpu-check-logs"
mkdir -p "$logs"
declare -a rows
failed=0
t_start=$(date +%s)

# record NAME STATUS DETAIL SECONDS
record() {
  rows+=("$(printf '%-28s %-5s %6ss  %s' "$1" "$2" "$4" "$3")")
  [ "$2" = FAIL ] && failed=1
  echo "== $1: $2 $3"
}

# step NAME LOG TIMEOUT COMMAND...: runs the command with a time limit, logging its output.
step() {
  local name=$1 log=$2 limit=$3
  shift 3
  local t0
  t0=$(date +%s)
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  STEP_RC=$rc
  STEP_SECONDS=$(($(date +%s) - t0))
  if [ $rc -eq 124 ]; then
    record "$name" FAIL "timed out after ${limit}s (log: $log)" "$STEP_SECONDS"
  fi
  return $rc
}

echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
echo "== nvcc: $(nvcc --version 2>/dev/null | tail -1)"

smoke="$build/tools/gpu_smoke/ember_gpu_smoke"
suite="$build/tests/ember_tests"
if [ $prebuilt -eq 0 ]; then
  # EMBER_MINIMAL_DEPS: GPU machines have no Debian packages; zlib, libzip and OpenBLAS are used
  # when present. nlohmann-json and GoogleTest come from .deps (scripts/device-deps.sh, run where
  # apt works, carried along) when the machine lacks them.
  configure=(cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON
    -DCMAKE_CUDA_ARCHITECTURES=native -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_TOOLS=OFF
    -DEMBER_MINIMAL_DEPS=ON -DEMBER_DEPS_DIR="$root/.deps")
  if step configure "$logs/configure.log" 300 "${configure[@]}" -DEMBER_BUILD_TESTS=ON; then
    record configure PASS "with the GoogleTest suite" "$STEP_SECONDS"
  elif step configure "$logs/configure.log" 300 "${configure[@]}" -DEMBER_BUILD_TESTS=OFF; then
    record configure PASS "without the suite (no GoogleTest here)" "$STEP_SECONDS"
  else
    record configure FAIL "see $logs/configure.log; missing packages? build elsewhere and use --prebuilt" "$STEP_SECONDS"
    tail -30 "$logs/configure.log"
  fi
  targets=(ember_gpu_smoke)
  grep -q '^EMBER_BUILD_TESTS:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && targets+=(ember_tests)
  if step build "$logs/build.log" 420 cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"; then
    record build PASS "${targets[*]}" "$STEP_SECONDS"
  else
    [ $STEP_RC -ne 124 ] && record build FAIL "see $logs/build.log" "$STEP_SECONDS"
    grep -m 20 -E "error|Error" "$logs/build.log"
  fi
fi

if [ -x "$smoke" ]; then
  step smoke "$logs/smoke.log" 300 "$smoke"
  summary=$(grep SUMMARY "$logs/smoke.log" | tail -1)
  if [ $STEP_RC -eq 0 ]; then
    record "smoke (cuda vs cpu)" PASS "$summary" "$STEP_SECONDS"
  elif [ $STEP_RC -ne 124 ]; then
    [ $STEP_RC -eq 77 ] && summary="no CUDA device visible to ember"
    record "smoke (cuda vs cpu)" FAIL "${summary:-exit $STEP_RC} (log: $logs/smoke.log)" "$STEP_SECONDS"
    grep -E "^FAIL" "$logs/smoke.log" | head -40
  fi
else
  record "smoke (cuda vs cpu)" FAIL "no $smoke" 0
fi

if [ -x "$suite" ]; then
  step "suite (cuda cases)" "$logs/suite.log" 420 "$suite" \
    --gtest_filter='*/cuda:CudaRuntime.*:CachingAllocator.*' --gtest_brief=1
  if [ $STEP_RC -eq 0 ]; then
    record "suite (cuda cases)" PASS "$(grep -E '^\[  PASSED  \]' "$logs/suite.log" | tail -1)" "$STEP_SECONDS"
  elif [ $STEP_RC -ne 124 ]; then
    record "suite (cuda cases)" FAIL "$(grep -cE '^\[  FAILED  \]' "$logs/suite.log") failed lines (log: $logs/suite.log)" "$STEP_SECONDS"
    grep -E '^\[  FAILED  \]' "$logs/suite.log" | head -40
  fi
else
  record "suite (cuda cases)" SKIP "not built (no GoogleTest)" 0
fi

nvcc_dir=$(dirname "$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")")
sanitizer=""
for c in "$(command -v compute-sanitizer)" "$nvcc_dir/compute-sanitizer" \
  "$nvcc_dir/../compute-sanitizer/compute-sanitizer"; do
  if [ -n "$c" ] && [ -x "$c" ]; then
    sanitizer=$c
    break
  fi
done
if [ -n "$sanitizer" ] && [ -x "$smoke" ]; then
  step memcheck "$logs/memcheck.log" 360 env EMBER_CUDA_NO_CACHING=1 "$sanitizer" --tool memcheck \
    --report-api-errors no --error-exitcode 3 "$smoke"
  if [ $STEP_RC -eq 0 ]; then
    record "memcheck (no caching)" PASS "$(grep -E 'ERROR SUMMARY' "$logs/memcheck.log" | tail -1)" "$STEP_SECONDS"
  elif [ $STEP_RC -ne 124 ]; then
    record "memcheck (no caching)" FAIL "exit $STEP_RC: $(grep -E 'ERROR SUMMARY' "$logs/memcheck.log" | tail -1) (log: $logs/memcheck.log)" "$STEP_SECONDS"
    grep -m 30 -E "Invalid|ERROR|FAIL" "$logs/memcheck.log"
  fi
else
  record "memcheck (no caching)" SKIP "no compute-sanitizer or no smoke binary" 0
fi

declare -A ember_ms=() torch_ms=()
if [ -x "$smoke" ] && step bench "$logs/bench.log" 180 "$smoke" --bench; then
  while read -r name ms; do ember_ms[$name]=$ms; done <"$logs/bench.log"
  record "bench (ember)" PASS "" "$STEP_SECONDS"
fi
cat >"$logs/bench_torch.py" <<'PY'
import time, torch
dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.randn(4096, 4096, device=dev); v = torch.randn(1 << 26, device=dev)
s = torch.randn(4096, 4096, device=dev)
def t(f, reps):
    f(); torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(reps): f()
    torch.cuda.synchronize(); return (time.perf_counter() - t0) * 1000 / reps
print("matmul_4096_fp32 %.4f" % t(lambda: a @ a, 20))
print("add_64M_fp32 %.4f" % t(lambda: v + v, 50))
print("sum_64M_fp32 %.4f" % t(lambda: v.sum(), 50))
print("softmax_4096x4096_fp32 %.4f" % t(lambda: torch.softmax(s, 1), 50))
PY
if step "bench (torch)" "$logs/bench_torch.log" 180 python3 "$logs/bench_torch.py"; then
  while read -r name ms; do torch_ms[$name]=$ms; done <"$logs/bench_torch.log"
  record "bench (torch)" PASS "" "$STEP_SECONDS"
else
  [ $STEP_RC -ne 124 ] && record "bench (torch)" SKIP "python3 with torch and CUDA not usable here" "$STEP_SECONDS"
fi

echo
echo "================ ember gpu-check ($(($(date +%s) - t_start))s) ================"
printf '%s\n' "${rows[@]}"
if [ ${#ember_ms[@]} -gt 0 ]; then
  echo
  printf '%-26s %12s %12s %8s\n' op "ember ms" "torch ms" ratio
  for op in matmul_4096_fp32 add_64M_fp32 sum_64M_fp32 softmax_4096x4096_fp32; do
    e=${ember_ms[$op]:-} t=${torch_ms[$op]:-}
    ratio=$( [ -n "$e" ] && [ -n "$t" ] && python3 -c "print('%.2f' % ($e / $t))" 2>/dev/null || echo -)
    printf '%-26s %12s %12s %8s\n' "$op" "${e:--}" "${t:--}" "$ratio"
  done
fi
exit $failed
