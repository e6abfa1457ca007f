#!/usr/bin/env bash
# tests/cli/gpt.sh EMBER OUT_DIR: end-to-end checks of `ember train --model gpt` and
# `ember generate` on a tiny text with a tiny model -- metrics.csv, curves.svg and the checkpoint,
# --resume continuing to the same losses as a run without a stop, sampling the requested number
# of characters from the vocabulary (the same ones for the same seed), and one-line errors for
# bad input.
set -uo pipefail
ember=$1 out=$2
rm -rf "$out" "$out.straight" "$out.log-axis"
mkdir -p "$(dirname "$out")"
fail() { echo "FAIL: $*"; exit 1; }

text="$out.txt"
for i in $(seq 1 60); do echo "a bad cab dabbed a bead $i" | tr '0-9' 'a-e'; done > "$text"
tiny=(--model gpt --data "$text" --layers 1 --heads 2 --embd 16 --block-size 8 --batch-size 4
      --eval-iters 2 --eval-interval 3 --warmup-iters 2 --lr-decay-iters 10)

"$ember" train "${tiny[@]}" --iters 6 --out "$out" > "$out.log" 2>&1 || fail "train: $(cat "$out.log")"
grep -q "^iter 6: train loss" "$out.log" || fail "no evaluation line for iteration 6"
for f in metrics.csv curves.svg checkpoint.safetensors; do [ -s "$out/$f" ] || fail "missing $f"; done
[ "$(wc -l < "$out/metrics.csv")" -eq 4 ] || fail "metrics.csv should have a header and rows 0, 3, 6"
head -1 "$out/metrics.csv" | grep -q "^iter,train_loss,val_loss" || fail "metrics.csv header"
grep -q "validation" "$out/curves.svg" || fail "curves.svg has no validation curve"
python3 "$(dirname "$0")/check_curves.py" "$out/curves.svg" || fail "curves.svg"
"$ember" train "${tiny[@]}" --iters 3 --loss-axis log --out "$out.log-axis" > "$out.log" 2>&1 ||
  fail "--loss-axis log: $(cat "$out.log")"
python3 "$(dirname "$0")/check_curves.py" "$out.log-axis/curves.svg" --log || fail "--loss-axis log"

"$ember" train "${tiny[@]}" --iters 10 --resume --out "$out" > "$out.log" 2>&1 ||
  fail "resume: $(cat "$out.log")"
grep -q "resuming gpt after iteration 6" "$out.log" || fail "resume did not start from the checkpoint"
[ "$(wc -l < "$out/metrics.csv")" -eq 6 ] || fail "metrics.csv should have rows 0, 3, 6, 9, 10"
"$ember" train "${tiny[@]}" --iters 10 --out "$out.straight" > "$out.log" 2>&1 || fail "straight run"
[ "$(tail -1 "$out/metrics.csv" | cut -d, -f1-3)" = "$(tail -1 "$out.straight/metrics.csv" | cut -d, -f1-3)" ] ||
  fail "the resumed run's losses differ from a run without a stop"
ls "$out" | grep -q tmp && fail "temporary files left in $out"

gen=$("$ember" generate --checkpoint "$out/checkpoint.safetensors" --prompt "a b" --tokens 50 \
      --temperature 0.8 --top-k 3 --seed 5) || fail "generate"
[ "${#gen}" -eq 53 ] || fail "generate printed ${#gen} characters, not the prompt and 50: '$gen'"
[ -z "$(printf '%s' "$gen" | LC_ALL=C tr -d 'abcde \n')" ] || fail "characters outside the vocabulary: '$gen'"
again=$("$ember" generate --checkpoint "$out/checkpoint.safetensors" --prompt "a b" --tokens 50 \
        --temperature 0.8 --top-k 3 --seed 5)
[ "$gen" = "$again" ] || fail "the same seed sampled different text"

expect_error() {  # a one-line "ember: error:" naming what is wrong, and exit status 1
  local want=$1; shift
  local log; log=$("$ember" "$@" 2>&1); local rc=$?
  [ $rc -eq 1 ] || fail "'$*' exited $rc"
  [ "$(echo "$log" | wc -l)" -eq 1 ] || fail "'$*' printed more than one line: $log"
  echo "$log" | grep -q "^ember: error:.*$want" || fail "'$*' printed: $log"
}
expect_error "cannot read the text file" train --model gpt --data "$out.none" --out "$out.x"
printf 'abcdefghij' > "$out.short"
expect_error "too short for --block-size" train --model gpt --data "$out.short" --block-size 8 --out "$out.x"
ck="$out/checkpoint.safetensors"
expect_error "'z' at position 1" generate --checkpoint "$ck" --prompt "az"
expect_error "larger than the vocabulary" generate --checkpoint "$ck" --top-k 100
expect_error "multiple of --heads" train --model gpt --data "$text" --heads 3 --embd 16 --out "$out.x"
expect_error "model of kind 'gpt'" train --model mlp --resume --out "$out"
rm -rf "$out" "$out.straight" "$out.log-axis" "$out.x" "$out.txt" "$out.short" "$out.log"
echo "ember gpt CLI: all checks passed"
