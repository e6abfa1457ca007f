#!/usr/bin/env bash
# tests/cli/ddp.sh EMBER OUT_DIR: `ember train` data-parallel on this machine -- the GPT on 2
# processes (--nproc-per-node, and `ember run ... ember train`) reproduces the single-process
# losses, since the ranks split each batch's windows; the MLP on 2 processes writes rank 0's
# metrics, curves and a checkpoint that `ember eval` reads and --resume continues; a batch that
# does not split over the processes is a one-line error.
set -uo pipefail
ember=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

text="$out/text.txt"
for i in $(seq 1 60); do echo "a bad cab dabbed a bead $i" | tr '0-9' 'a-e'; done > "$text"
tiny=(--model gpt --data "$text" --layers 1 --heads 2 --embd 16 --block-size 8
      --eval-iters 2 --eval-interval 4 --warmup-iters 2 --iters 8 --grad-accum 2)

"$ember" train "${tiny[@]}" --batch-size 4 --out "$out/one" > "$out/one.log" 2>&1 || fail "1 process: $(cat "$out/one.log")"
"$ember" train "${tiny[@]}" --batch-size 4 --out "$out/two" --nproc-per-node 2 > "$out/two.log" 2>&1 ||
  fail "2 processes: $(cat "$out/two.log")"
grep -q "^\[rank0\]: iter 8: train loss" "$out/two.log" || fail "no rank-0 evaluation line: $(cat "$out/two.log")"
grep -q "^\[rank1\]: iter" "$out/two.log" && fail "rank 1 reported evaluations too"
# Same losses (to 1e-4) at every evaluation.
paste -d, <(cut -d, -f1-3 "$out/one/metrics.csv") <(cut -d, -f1-3 "$out/two/metrics.csv") | tail -n +2 |
  awk -F, '{ for (i = 2; i <= 3; ++i) { d = $i - $(i + 3); if (d < 0) d = -d; if (d > 1e-4 || $1 != $4) { print "row " NR ": " $0; bad = 1 } } } END { exit bad }' ||
  fail "2 processes' losses differ from 1 process's"
[ "$(wc -l < "$out/two/metrics.csv")" -eq 4 ] || fail "metrics.csv should have rows 0, 4, 8"
"$ember" run --nproc-per-node 2 --master-port 0 "$ember" train "${tiny[@]}" --batch-size 4 \
  --out "$out/run" > "$out/run.log" 2>&1 || fail "ember run ... ember train: $(cat "$out/run.log")"
[ "$(tail -1 "$out/run/metrics.csv" | cut -d, -f1-3)" = "$(tail -1 "$out/one/metrics.csv" | cut -d, -f1-3)" ] ||
  fail "ember run ... ember train gave other losses"

expect_error() {  # a one-line "ember: error:" naming what is wrong, and a non-zero exit
  local want=$1; shift
  local log; log=$("$ember" "$@" 2>&1); local rc=$?
  [ $rc -ne 0 ] || fail "'$*' exited 0"
  echo "$log" | grep -q "ember: error:.*$want" || fail "'$*' printed: $log"
}
expect_error "multiple of their number" train "${tiny[@]}" --batch-size 5 --nproc-per-node 2 --out "$out/bad"

data=/usr/share/datasets/fashion-mnist
if [ ! -d "$data" ]; then echo "no Fashion-MNIST: MLP part skipped"; exit 0; fi
"$ember" train --model mlp --epochs 1 --nproc-per-node 2 --out "$out/mlp" > "$out/mlp.log" 2>&1 ||
  fail "mlp on 2 processes: $(cat "$out/mlp.log")"
grep -q "^\[rank0\]: epoch 1: train loss" "$out/mlp.log" || fail "no epoch line from rank 0"
grep -q "2 processes, DistributedDataParallel" "$out/mlp.log" || fail "the run did not say it is data-parallel"
for f in metrics.csv curves.svg checkpoint.safetensors; do [ -s "$out/mlp/$f" ] || fail "missing $f"; done
acc=$(tail -1 "$out/mlp/metrics.csv" | cut -d, -f4)
awk -v a="$acc" 'BEGIN { exit !(a > 0.80) }' || fail "test accuracy after one epoch is $acc"
"$ember" eval --checkpoint "$out/mlp/checkpoint.safetensors" | grep -q "test accuracy" || fail "eval"
"$ember" train --model mlp --epochs 2 --nproc-per-node 2 --resume --out "$out/mlp" > "$out/mlp.log" 2>&1 ||
  fail "resume on 2 processes: $(cat "$out/mlp.log")"
grep -q "resuming mlp after epoch 1" "$out/mlp.log" || fail "resume did not start from the checkpoint"
[ "$(wc -l < "$out/mlp/metrics.csv")" -eq 3 ] || fail "metrics.csv should have epochs 1 and 2"
echo "ddp cli: ok"
