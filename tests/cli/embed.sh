#!/usr/bin/env bash
# tests/cli/embed.sh EMBER: `ember embed` on tests/reference/tiny_bert (a sentence-transformers
# folder written by bert_reference.py) gives sentence-transformers' embeddings of the reference
# texts within 1e-5, the same from sharded pytorch_model.bin files as from model.safetensors,
# --similarity gives a symmetric matrix with ones on the diagonal, and bad input gets a one-line
# error with a non-zero exit.
set -uo pipefail
ember=$1
ref=$(dirname "$0")/../reference
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

mapfile -t texts < <(python3 -c "import json,sys; [print(t) for t in json.load(open(sys.argv[1]))['texts']]" "$ref/bert_reference.json")
[ "${#texts[@]}" -eq 8 ] || fail "could not read the reference texts"
"$ember" embed --model "$ref/tiny_bert" "${texts[@]}" > "$out" || fail "embed exited non-zero"
python3 - "$ref/bert_reference.json" "$out" "${texts[@]}" <<'PY' || fail "embeddings differ from sentence-transformers'"
import json, sys
ref = json.load(open(sys.argv[1]))
texts, dim = sys.argv[3:], 16
rows = [list(map(float, line.split())) for line in open(sys.argv[2])]
assert len(rows) == len(texts), (len(rows), len(texts))
for text, row in zip(texts, rows):
    i = ref["texts"].index(text)
    want = ref["embeddings"][i * dim:(i + 1) * dim]
    worst = max(abs(a - b) for a, b in zip(row, want))
    assert len(row) == dim and worst < 1e-5, (text, worst)
print(f"{len(rows)} embeddings match")
PY
"$ember" embed --similarity --model "$ref/tiny_bert" "${texts[0]}" "${texts[1]}" > "$out" || fail "--similarity"
python3 - "$out" <<'PY' || fail "--similarity is not a cosine matrix"
m = [list(map(float, l.split())) for l in open(__import__("sys").argv[1])]
assert len(m) == 2 and all(abs(m[i][i] - 1) < 1e-4 for i in range(2)) and m[0][1] == m[1][0], m
assert -1 <= m[0][1] < 1
PY
# the same model with its weights as sharded pytorch_model.bin files (hf_bin_reference.py)
bin_dir=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$bin_dir"' EXIT
cp -r "$ref/tiny_bert/." "$bin_dir/"
rm "$bin_dir/model.safetensors"
cp "$ref/fixtures/tiny_bert_bin/"* "$bin_dir/"
"$ember" embed --model "$bin_dir" "${texts[@]}" > "$out.bin" || fail "embed of the .bin shards exited non-zero"
"$ember" embed --model "$ref/tiny_bert" "${texts[@]}" > "$out" || fail "embed exited non-zero"
cmp -s "$out" "$out.bin" || fail "the .bin shards give other embeddings than model.safetensors"
rm -f "$out.bin"
rm "$bin_dir/pytorch_model-00002-of-00002.bin"
err=$("$ember" embed --model "$bin_dir" "x" 2>&1) && fail "a missing shard should fail"
echo "$err" | grep -q "names shard 'pytorch_model-00002-of-00002.bin', which is not in the folder" ||
  fail "bad error for a missing shard: $err"
err=$("$ember" embed --model /nonexistent "x" 2>&1) && fail "a missing folder should fail"
[ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "not a directory" || fail "bad error: $err"
err=$("$ember" embed --model "$ref/tiny_bert" 2>&1) && fail "no text should fail"
echo "embed: ok"
