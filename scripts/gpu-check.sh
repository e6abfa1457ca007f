#!/usr/bin/env bash
# scripts/gpu-check.sh [--prebuilt BUILD_DIR]: the CUDA check for a machine with an NVIDIA GPU,
# using only that machine's nvcc, CMake, ninja and python3 (with torch); no internet needed.
#   1. builds ember with the CUDA backend for the GPU present (build/gpu-check), with the
#      GoogleTest suite when GoogleTest is installed or carried in .deps (scripts/device-deps.sh);
#      --prebuilt uses binaries built elsewhere;
#   2. runs tools/gpu_smoke (every op on cuda:0 against the CPU) and the CUDA cases of the suite;
#   3. benchmarks ember against PyTorch on the same GPU (large ops, sgemm at full precision and
#      TF32, bf16/fp16 GEMM, device copy vs add bandwidth, fused causal attention forward and
#      backward, the tutorial's training step (and an SGD step replayed from a CUDA graph),
#      host<->device copies of 1 MiB to 1 GiB pageable and pinned, with raw cudaMemcpy figures
#      from the same run);
#   4. times `ember train` (MLP, CNN, GPT) on cuda and on the machine's CPU;
#   5. runs the smoke program under compute-sanitizer memcheck with EMBER_CUDA_NO_CACHING=1,
#      and the suite cases of GPU_CHECK_RACECHECK_FILTER (if set) under racecheck;
# and prints a table last. Exit status 0 when every step passed. GPU_CHECK_SUITE_S,
# GPU_CHECK_MEMCHECK_S and GPU_CHECK_RACECHECK_S cap those steps' seconds; GPU_CHECK_TRAIN picks
# the training runs.
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
  # EMBER_MINIMAL_DEPS: GPU machines have no Debian packages; zlib and libzip are used
  # when present. nlohmann-json and GoogleTest come from .deps (scripts/device-deps.sh, run where
  # apt works, carried along) when the machine lacks them.
  configure=(cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON
    -DCMAKE_CUDA_ARCHITECTURES=native -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_TOOLS=ON
    -DEMBER_MINIMAL_DEPS=ON -DEMBER_DEPS_DIR="$root/.deps")
  if step configure "$logs/configure.log" 300 "${configure[@]}" -DEMBER_BUILD_TESTS=ON; then
    record configure PASS "with the GoogleTest suite" "$STEP_SECONDS"
  elif step configure "$logs/configure.log" 300 "${configure[@]}" -DEMBER_BUILD_TESTS=OFF; then
    record configure PASS "without the suite (no GoogleTest here)" "$STEP_SECONDS"
  else
    record configure FAIL "see $logs/configure.log; missing packages? build elsewhere and use --prebuilt" "$STEP_SECONDS"
    tail -30 "$logs/configure.log"
  fi
  targets=(ember_gpu_smoke ember_cli)
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
  step "suite (cuda cases)" "$logs/suite.log" "${GPU_CHECK_SUITE_S:-420}" "$suite" \
    --gtest_filter='*/cuda:OpTable/*_cuda:CudaRuntime.*:CachingAllocator.*:PinnedCache.*:MatmulPrecision.*' --gtest_brief=1
  if [ $STEP_RC -eq 0 ]; then
    record "suite (cuda cases)" PASS "$(grep -E '^\[  PASSED  \]' "$logs/suite.log" | tail -1)" "$STEP_SECONDS"
  elif [ $STEP_RC -ne 124 ]; then
    record "suite (cuda cases)" FAIL "$(grep -cE '^\[  FAILED  \]' "$logs/suite.log") failed lines (log: $logs/suite.log)" "$STEP_SECONDS"
    grep -E '^\[  FAILED  \]' "$logs/suite.log" | head -40
  fi
else
  record "suite (cuda cases)" SKIP "not built (no GoogleTest)" 0
fi

if [ -x "$smoke" ] && step bench "$logs/bench.log" 240 "$smoke" --bench; then
  record "bench (ember)" PASS "" "$STEP_SECONDS"
elif [ $STEP_RC -ne 124 ]; then
  record "bench (ember)" FAIL "exit $STEP_RC (log: $logs/bench.log)" "$STEP_SECONDS"
fi
# The same rows in PyTorch: name, unit, value per line, as ember_gpu_smoke --bench prints them.
cat >"$logs/bench_torch.py" <<'PY'
import time, torch
dev = "cuda"
torch.set_float32_matmul_precision("highest")
def t(f, reps):
    f(); torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(reps): f()
    torch.cuda.synchronize(); return (time.perf_counter() - t0) * 1000 / reps
def row(name, unit, value):
    print("%s %s %.4f" % (name, unit, value), flush=True)
a = torch.randn(4096, 4096, device=dev); v = torch.randn(1 << 26, device=dev)
s = torch.randn(4096, 4096, device=dev)
row("matmul_4096_fp32", "ms", t(lambda: a @ a, 20))
row("add_64M_fp32", "ms", t(lambda: v + v, 50))
row("sum_64M_fp32", "ms", t(lambda: v.sum(), 50))
row("softmax_4096x4096_fp32", "ms", t(lambda: torch.softmax(s, 1), 50))
flop = 2.0 * 4096 ** 3
row("sgemm_4096_fp32", "TFLOP/s", flop / (t(lambda: a @ a, 20) * 1e9))
torch.set_float32_matmul_precision("high")
row("sgemm_4096_tf32", "TFLOP/s", flop / (t(lambda: a @ a, 50) * 1e9))
torch.set_float32_matmul_precision("highest")
h = torch.randn(8192, 8192, device=dev).to(torch.bfloat16); flop8k = 2.0 * 8192 ** 3
row("gemm_8192_bf16", "TFLOP/s", flop8k / (t(lambda: h @ h, 20) * 1e9))
f = h.to(torch.float16)
row("gemm_8192_fp16", "TFLOP/s", flop8k / (t(lambda: f @ f, 20) * 1e9))
del h, f
src = torch.randn(1 << 26, device=dev); dst = torch.empty(1 << 26, device=dev)
nbytes = 4.0 * (1 << 26)
copy_gbs = 2 * nbytes / (t(lambda: dst.copy_(src), 50) * 1e6)
add_gbs = 3 * nbytes / (t(lambda: src + dst, 50) * 1e6)
row("d2d_copy_256MB", "GB/s", copy_gbs)
row("add_256MB", "GB/s", add_gbs)
row("add_vs_copy_bandwidth", "%", 100 * add_gbs / copy_gbs)
n, hh, l, e = 4, 16, 2048, 64
fwd_flop = 2.0 * 2 * n * hh * l * l * e / 2
for dt, name in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
    q, k, v = (torch.randn(n, hh, l, e, device=dev, dtype=dt, requires_grad=True) for _ in range(3))
    go = torch.randn(n, hh, l, e, device=dev, dtype=dt)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    def fwd():
        with torch.no_grad():
            sdpa(q, k, v, is_causal=True)
    def fwd_bwd():
        sdpa(q, k, v, is_causal=True).backward(go)
        q.grad = k.grad = v.grad = None
    row("sdpa_causal_fwd_" + name, "ms", t(fwd, 20))
    ms = t(fwd_bwd, 10)
    row("sdpa_causal_fwd_bwd_" + name, "ms", ms)
    row("sdpa_causal_fwd_bwd_%s_tflops" % name, "TFLOP/s", 3.5 * fwd_flop / (ms * 1e9))
del q, k, v, go
def train_step_ms(adam):
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1).to(dev)
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    x = torch.randn(32, 10, device=dev); y = torch.randn(32, 1, device=dev)
    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return t(step, 2000)
row("train_step_linear_adam", "ms", train_step_ms(True))
row("train_step_linear_sgd", "ms", train_step_ms(False))
def graph_train_step_ms():
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    x = torch.randn(32, 10, device=dev); y = torch.randn(32, 1, device=dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss_fn(model(x), y).backward()
        opt.step()
    return t(g.replay, 2000)
row("train_step_linear_sgd_graph", "ms", graph_train_step_ms())
for mb in (1, 16, 256, 1024):
    n = mb << 18
    gb = n * 4 / 1e9
    reps = max(3, 1024 // mb)
    d = torch.zeros(n, device=dev)
    pageable = torch.full((n,), 1.5)
    pinned = torch.full((n,), 1.5).pin_memory()
    rate = lambda f: gb / (t(f, reps) / 1e3)
    row("h2d_pageable_%dMB" % mb, "GB/s", rate(lambda: d.copy_(pageable)))
    row("h2d_pinned_%dMB" % mb, "GB/s", rate(lambda: d.copy_(pinned, non_blocking=True)))
    row("d2h_pageable_%dMB" % mb, "GB/s", rate(lambda: pageable.copy_(d)))
    row("d2h_pinned_%dMB" % mb, "GB/s", rate(lambda: pinned.copy_(d, non_blocking=True)))
    del d, pageable, pinned
PY
if step "bench (torch)" "$logs/bench_torch.log" 240 python3 "$logs/bench_torch.py"; then
  record "bench (torch)" PASS "" "$STEP_SECONDS"
else
  [ $STEP_RC -ne 124 ] && record "bench (torch)" SKIP "python3 with torch and CUDA not usable here" "$STEP_SECONDS"
fi

# ember train on cuda and on this machine's CPU: the MLP and the CNN one epoch each on
# Fashion-MNIST, the GPT 200 iterations, each line the program's own summary (time per epoch,
# samples or tokens per second). Data from EMBER_DATA_DIR (Fashion-MNIST's IDX files) and
# EMBER_TEXT (a text file), or Debian's packages where installed.
cli="$build/tools/ember/ember"
data_dir=${EMBER_DATA_DIR:-/usr/share/datasets/fashion-mnist}
text=${EMBER_TEXT:-/usr/share/games/fortunes/cookie}
declare -a train_rows
if [ -x "$cli" ]; then
  # GPU_CHECK_TRAIN: the runs, as MODEL:DEVICE words (default: all six).
  for run in ${GPU_CHECK_TRAIN:-mlp:cuda mlp:cpu cnn:cuda cnn:cpu gpt:cuda gpt:cpu}; do
    set -- ${run/:/ }
    model=$1 device=$2
    if [ "$model" = gpt ]; then
      [ -f "$text" ] || { record "train $model $device" SKIP "no text file ($text)" 0; continue; }
      args=(--model gpt --data "$text" --iters 200 --eval-interval 100 --eval-iters 10)
    else
      [ -d "$data_dir" ] || { record "train $model $device" SKIP "no Fashion-MNIST ($data_dir)" 0; continue; }
      args=(--model "$model" --data "$data_dir" --epochs 1)
    fi
    log="$logs/train_${model}_$device.log"
    if step "train $model $device" "$log" 240 "$cli" train "${args[@]}" --device "$device" \
      --out "$build/train_${model}_$device"; then
      summary=$(grep -E "^(epoch|iter) [0-9]+:" "$log" | tail -1)
      record "train $model $device" PASS "$summary" "$STEP_SECONDS"
      train_rows+=("$(printf '%-4s %-5s %s' "$model" "$device" "$summary")")
    elif [ $STEP_RC -ne 124 ]; then
      record "train $model $device" FAIL "exit $STEP_RC: $(tail -1 "$log")" "$STEP_SECONDS"
    fi
  done
else
  record "train" SKIP "no $cli (built without tools)" 0
fi

# Last, as the slowest: the smoke program under compute-sanitizer memcheck (GPU_CHECK_MEMCHECK_S
# seconds at most, 360 by default).
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
  step memcheck "$logs/memcheck.log" "${GPU_CHECK_MEMCHECK_S:-360}" env EMBER_CUDA_NO_CACHING=1 "$sanitizer" --tool memcheck \
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

# GPU_CHECK_RACECHECK_FILTER (a GoogleTest filter, e.g. '*Attention*/cuda'): those suite cases
# under compute-sanitizer racecheck (shared-memory hazards), GPU_CHECK_RACECHECK_S seconds at most.
if [ -n "${GPU_CHECK_RACECHECK_FILTER:-}" ] && [ -n "$sanitizer" ] && [ -x "$suite" ]; then
  step racecheck "$logs/racecheck.log" "${GPU_CHECK_RACECHECK_S:-300}" "$sanitizer" --tool racecheck \
    --error-exitcode 3 "$suite" --gtest_filter="$GPU_CHECK_RACECHECK_FILTER" --gtest_brief=1
  if [ $STEP_RC -eq 0 ]; then
    record racecheck PASS "$(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$logs/racecheck.log" | tail -1)" "$STEP_SECONDS"
  elif [ $STEP_RC -ne 124 ]; then
    record racecheck FAIL "exit $STEP_RC (log: $logs/racecheck.log)" "$STEP_SECONDS"
    grep -m 30 -E "Race|hazard|ERROR|FAILED" "$logs/racecheck.log"
  fi
fi

# bench_table EMBER_LOG TORCH_LOG: one line per ember row with the raw CUDA figure of the same
# run (raw_* rows), PyTorch's, and how much faster ember is (> 1: faster; ms rows inverted).
bench_table() {
  python3 - "$1" "$2" <<'PY'
import sys
def load(path):
    rows = {}
    try:
        for line in open(path):
            p = line.split()
            if len(p) == 3:
                try:
                    rows[p[0]] = (p[1], float(p[2]))
                except ValueError:
                    pass
    except OSError:
        pass
    return rows
ember, torch = load(sys.argv[1]), load(sys.argv[2])
print("%-26s %8s %10s %10s %10s %9s" % ("op", "unit", "ember", "raw cuda", "torch", "speed"))
for name, (unit, e) in ember.items():
    if name.startswith("raw_"):
        continue
    raw = ember.get("raw_" + name)
    t = torch.get(name)
    speed = "-"
    if t and t[1] > 0 and e > 0 and unit != "%":
        speed = "%.2f" % (t[1] / e if unit == "ms" else e / t[1])
    print("%-26s %8s %10.3f %10s %10s %9s" % (name, unit, e, "%.3f" % raw[1] if raw else "-",
                                             "%.3f" % t[1] if t else "-", speed))
if "add_vs_copy_bandwidth" in ember:
    ok = ember["add_vs_copy_bandwidth"][1] >= 85
    print("add vs copy bandwidth: %.1f%% (target >= 85%%: %s)"
          % (ember["add_vs_copy_bandwidth"][1], "met" if ok else "NOT met"))
PY
}

echo
echo "================ ember gpu-check ($(($(date +%s) - t_start))s) ================"
printf '%s\n' "${rows[@]}"
if [ ${#train_rows[@]} -gt 0 ]; then
  echo
  echo "ember train, cuda against this machine's CPU ($(nproc) cores):"
  printf '%s\n' "${train_rows[@]}"
fi
if [ -s "$logs/bench.log" ]; then
  echo
  echo "speed: ember against PyTorch, > 1 means ember is faster (time rows inverted)"
  bench_table "$logs/bench.log" "$logs/bench_torch.log"
fi
exit $failed
