#!/usr/bin/env bash
# tests/cli/run.sh EMBER OUT_DIR: end-to-end checks of the `ember` program on Fashion-MNIST --
# train one epoch, resume to two, evaluate, train under --amp bf16 and fp16 (resumed) -- on a
# slice of the data set -- and one-line errors with a non-zero exit for bad input. Exits 77
# (skipped) when the dataset is not installed.
set -uo pipefail
ember=$1 out=$2
data=/usr/share/datasets/fashion-mnist
[ -f "$data/train-images-idx3-ubyte.gz" ] || { echo "Fashion-MNIST not installed: skipped"; exit 77; }
rm -rf "$out"
fail() { echo "FAIL: $*"; exit 1; }

# The runs below check the program's mechanics (epochs, resume, eval, precision, files, errors), not
# what it learns, so they train on the first 6000 training and 1000 test images (plain IDX files
# cut from the real ones): a tenth of the work, which under the sanitizers took minutes a run.
# tests/cli/ddp.sh trains on the whole set and checks the accuracy.
subset="$out.data"
rm -rf "$subset"
mkdir -p "$subset"
be32() {  # the escapes of N's 4 bytes, big-endian, for printf
  printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255))
}
cut_idx() {  # cut_idx NAME COUNT HEADER_BYTES ITEM_BYTES: the first COUNT items of NAME
  local name=$1 n=$2 header=$3 item=$4
  { zcat "$data/$name.gz" | head -c 4
    printf "$(be32 "$n")"
    zcat "$data/$name.gz" | tail -c +9 | head -c $((header - 8 + n * item))
  } > "$subset/$name"
  [ "$(stat -c %s "$subset/$name")" -eq $((header + n * item)) ] || fail "could not cut $name"
}
cut_idx train-images-idx3-ubyte 6000 16 784
cut_idx train-labels-idx1-ubyte 6000 8 1
cut_idx t10k-images-idx3-ubyte 1000 16 784
cut_idx t10k-labels-idx1-ubyte 1000 8 1

"$ember" info | grep -q "auto device:" || fail "ember info"
"$ember" train --epochs 1 --data "$subset" --out "$out" > "$out.log" 2>&1 || fail "train: $(cat "$out.log")"
grep -q "epoch 1: train loss" "$out.log" || fail "no epoch summary line"
for f in metrics.csv curves.svg checkpoint.safetensors; do [ -s "$out/$f" ] || fail "missing $f"; done
python3 "$(dirname "$0")/check_curves.py" "$out/curves.svg" || fail "curves.svg"
[ "$(wc -l < "$out/metrics.csv")" -eq 2 ] || fail "metrics.csv should have a header and one row"
"$ember" train --epochs 2 --resume --data "$subset" --out "$out" > "$out.log" 2>&1 || fail "resume: $(cat "$out.log")"
grep -q "resuming mlp after epoch 1" "$out.log" || fail "resume did not start from the checkpoint"
[ "$(wc -l < "$out/metrics.csv")" -eq 3 ] || fail "metrics.csv should have two rows after resume"
"$ember" eval --checkpoint "$out/checkpoint.safetensors" --data "$subset" > "$out.log" 2>&1 || fail "eval"
grep -q "test accuracy" "$out.log" || fail "eval printed no accuracy"
grep -q "confusion matrix" "$out.log" || fail "eval printed no confusion matrix"
ls "$out" | grep -q tmp && fail "temporary files left in $out"

# Mixed precision: bfloat16 autocast, and float16 with the GradScaler's state in the checkpoint,
# resumed.
amp="$out.amp"
"$ember" train --epochs 1 --amp bf16 --data "$subset" --out "$amp" > "$out.log" 2>&1 || fail "amp bf16: $(cat "$out.log")"
grep -q "autocast bfloat16" "$out.log" || fail "--amp bf16 did not say it trains under autocast"
grep -q "epoch 1: train loss" "$out.log" || fail "--amp bf16: no epoch summary line"
rm -rf "$amp"
"$ember" train --epochs 1 --amp fp16 --data "$subset" --out "$amp" > "$out.log" 2>&1 || fail "amp fp16: $(cat "$out.log")"
"$ember" train --epochs 2 --amp fp16 --data "$subset" --resume --out "$amp" > "$out.log" 2>&1 ||
  fail "amp fp16 resume: $(cat "$out.log")"
[ "$(wc -l < "$amp/metrics.csv")" -eq 3 ] || fail "--amp fp16: metrics.csv should have two rows"
grep -q "scaler.scale" "$amp/checkpoint.safetensors" || fail "--amp fp16: no scaler state saved"
rm -rf "$amp"

expect_error() {  # a one-line "ember: error:" and exit status 1
  local log; log=$("$ember" "$@" 2>&1); local rc=$?
  [ $rc -eq 1 ] || fail "'$*' exited $rc"
  [ "$(echo "$log" | wc -l)" -eq 1 ] || fail "'$*' printed more than one line: $log"
  echo "$log" | grep -q "^ember: error:" || fail "'$*' printed: $log"
}
expect_error train --data /nonexistent --out "$out.x"
expect_error train --device gpu --out "$out.x"
expect_error train --device cuda:7 --out "$out.x"
expect_error train --model cnn --resume --out "$out"
expect_error train --amp fp32 --out "$out.x"
echo garbage > "$out.bad"
expect_error eval --checkpoint "$out.bad"
expect_error eval --checkpoint "$out/none.safetensors"
rm -rf "$out" "$out.x" "$out.bad" "$out.log" "$subset"
echo "ember CLI: all checks passed"
