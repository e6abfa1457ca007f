#!/usr/bin/env bash
# bench/ddp_bench.sh BUILD_DIR [ROUNDS]: the data-parallel benchmarks of docs/PERFORMANCE.md on
# this machine, 2 processes x 1 thread:
# - all-reduce bus bandwidth, 1-256 MiB: ember's Gloo group against PyTorch's torch.distributed
#   Gloo group (Debian's python3-torch) in alternating rounds;
# - the DDP training step against the single-process step at the same per-process batch (the
#   CLI's MLP and a wide MLP, batches 64-1024), with how much of the all-reduce time backward
#   hid, and PyTorch's DistributedDataParallel on the same models (bench/ddp_step_torch.py;
#   install libopenblas0-openmp first, or Debian's torch multiplies with the reference BLAS).
# Prints each round's rows, then the medians over the rounds. DDP_BENCH_PARTS="allreduce" (or
# "step") runs one part only.
set -euo pipefail
build=$1 rounds=${2:-3}
ember=$build/tools/ember/ember bench=$build/bench/ember_ddp_bench
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}  # with Debian's python3-torch
export OMP_NUM_THREADS=1 GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-10000}
log=$(mktemp)
parts=${DDP_BENCH_PARTS:-allreduce step}  # which parts to run
for r in $(seq 1 "$rounds"); do
  [[ " $parts " == *" allreduce "* ]] || continue
  "$ember" run --nproc-per-node 2 --master-port 0 "$bench" allreduce 2>/dev/null |
    sed 's/^\[rank0\]: /ember /' | tee -a "$log"
  "$ember" run --nproc-per-node 2 --master-port 0 "$python" "$here/allreduce_torch.py" 2>/dev/null |
    sed 's/^\[rank0\]: /torch /' | tee -a "$log"
done
for r in $(seq 1 "$rounds"); do
  [[ " $parts " == *" step "* ]] || continue
  for model in mlp wide; do
    for batch in 64 256 1024; do
      "$bench" step "$model" "$batch" 20 | sed 's/^/ember /' | tee -a "$log"
      "$ember" run --nproc-per-node 2 --master-port 0 "$bench" step "$model" "$batch" 20 \
        2>/dev/null | sed 's/^\[rank0\]: /ember /' | tee -a "$log"
      "$python" "$here/ddp_step_torch.py" "$model" "$batch" 20 | sed 's/^/torch /' | tee -a "$log"
      "$ember" run --nproc-per-node 2 --master-port 0 "$python" "$here/ddp_step_torch.py" \
        "$model" "$batch" 20 2>/dev/null | sed 's/^\[rank0\]: /torch /' | tee -a "$log"
    done
  done
done
echo "--- medians over $rounds rounds"
python3 - "$log" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 2 and f[1] == "allreduce":
        rows.setdefault(("allreduce", f[2], f[0]), []).append(float(f[10]))
    elif len(f) > 2 and f[1] == "step":
        key = ("step", f[0], f[2], f[4], f[7])
        vals = [float(f[8])]
        if f[0] == "ember" and f[7] == "ddp":
            vals += [float(f[13]), float(f[16]), float(f[19].rstrip("%"))]
        rows.setdefault(key, []).append(vals)
for mib in ["1", "4", "16", "64", "256"]:
    e, t = rows.get(("allreduce", mib, "ember")), rows.get(("allreduce", mib, "torch"))
    if e and t:
        me, mt = statistics.median(e), statistics.median(t)
        print(f"all-reduce {mib:>3} MiB: bus bandwidth ember {me:.3f} GB/s, torch gloo {mt:.3f} GB/s, ratio {me / mt:.2f}")
def med(key, i=0):
    v = rows.get(key)
    return statistics.median(x[i] for x in v) if v else float("nan")
for model in ["mlp", "wide"]:
    for batch in ["64", "256", "1024"]:
        es, ed = med(("step", "ember", model, batch, "single")), med(("step", "ember", model, batch, "ddp"))
        ts, td = med(("step", "torch", model, batch, "single")), med(("step", "torch", model, batch, "ddp"))
        ar, ex, hid = (med(("step", "ember", model, batch, "ddp"), i) for i in (1, 2, 3))
        if es != es:
            continue  # not run
        print(f"step {model} batch {batch}/process: ember single {es:.2f} ms, ddp 2x1 {ed:.2f} ms "
              f"({ed / es:.2f}x; all-reduce {ar:.2f} ms, exposed {ex:.2f} ms, hidden {hid:.0f}%); "
              f"torch single {ts:.2f} ms, ddp 2x1 {td:.2f} ms ({td / ts:.2f}x)")
PY
rm -f "$log"
