#!/usr/bin/env bash
# bench/gpt_train_compare.sh EMBER [ITERS] [REPEATS] [THREADS]: training speed of
# `ember train --model gpt` against tests/reference/gpt_reference.py (PyTorch, eager) at the
# default "baby" size on the default text, in alternating runs of ITERS steps with THREADS
# threads each; prints every run's tokens/s (training steps only, evaluation excluded), the
# medians, and the median of the runs' pairwise ratios (each ember run against the PyTorch run
# right after it), which drifts of a shared machine's speed affect less. Needs Debian's python3-torch at /usr/bin/python3.
set -euo pipefail
ember=$1 iters=${2:-100} repeats=${3:-3} threads=${4:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for r in $(seq 1 "$repeats"); do
  rm -rf "$out/run"
  OMP_NUM_THREADS=$threads "$ember" train --model gpt --iters "$iters" --eval-interval "$iters" \
    --eval-iters 1 --out "$out/run" 2>/dev/null |
    sed -n "s/^iter $iters:.* \([0-9.]*\) tokens\/s$/\1/p" >> "$out/ember"
  OMP_NUM_THREADS=$threads /usr/bin/python3 "$here/tests/reference/gpt_reference.py" train \
    --iters "$iters" --eval-interval "$iters" --eval-iters 1 --threads "$threads" |
    sed -n 's/^total:.* \([0-9.]*\) tokens\/s$/\1/p' >> "$out/torch"
  echo "run $r: ember $(tail -1 "$out/ember") tokens/s, PyTorch $(tail -1 "$out/torch") tokens/s" >&2
done
e=$(median < "$out/ember") t=$(median < "$out/torch")
pairs=$(paste "$out/ember" "$out/torch" | awk '{print $1 / $2}' | median)
echo "median of $repeats runs of $iters steps, $threads threads: ember $e tokens/s, PyTorch $t tokens/s, ratio $(awk -v e="$e" -v t="$t" 'BEGIN {printf "%.2f", e / t}'), median pairwise ratio $(awk -v p="$pairs" 'BEGIN {printf "%.2f", p}')"
