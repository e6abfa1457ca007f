#!/usr/bin/env bash
# tests/cli/generate_lm.sh EMBER: `ember generate --model` on the tiny Llama of
# tests/reference/fixtures/llama (llama_reference.py) -- greedy from the folder prints the prompt
# and then the text transformers' greedy generate gives, the same from its GGUF file (which has no
# rope scaling: the default_rope case), and in bfloat16; the tiny GPT-2 of
# tests/reference/fixtures/gpt2 likewise; --quantize int8 runs both; sampling is repeatable by
# seed; the last
# stderr line has the tokens per second; bad input gets a one-line error and a non-zero exit.
set -uo pipefail
ember=$1
ref=$(dirname "$0")/../reference/fixtures/llama
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

expected() {  # expected CASE FIELD
  python3 -c "import json,sys; c=[c for c in json.load(open(sys.argv[1]))['cases'] if c['name']==sys.argv[2]][0]; sys.stdout.write(c[sys.argv[3]])" "$ref/expected.json" "$1" "$2"
}
prompt=$(expected llama3_rope cli_prompt)

check_greedy() {  # check_greedy CASE MODEL [FLAGS...]
  local name=$1 model=$2
  shift 2
  "$ember" generate --model "$model" --prompt "$prompt" --max-new-tokens 12 "$@" > "$out" 2> "$err" ||
    fail "$name: generate exited non-zero: $(cat "$err")"
  want=$(mktemp)
  { printf '%s' "$prompt"; expected "$name" cli_text; printf '\n'; } > "$want"
  cmp -s "$out" "$want" || fail "$name: printed $(od -c "$out" | head -5), not $(od -c "$want" | head -5)"
  rm -f "$want"
  tail -n 1 "$err" | grep -Eq '^prompt: [0-9]+ tokens, [0-9.]+ tokens/s; decode: 12 tokens, [0-9.]+ tokens/s' ||
    fail "$name: no tokens/s line: $(cat "$err")"
}
check_greedy llama3_rope "$ref/tiny_llama"
check_greedy default_rope "$ref/tiny_llama.gguf"
check_greedy llama3_rope "$ref/tiny_llama_rope_freqs.gguf"  # llama3 scaling as rope_freqs
check_greedy llama3_rope "$ref/tiny_llama" --threads 1 --temperature 0
# bfloat16 weights computed in float32 and as stored
check_greedy qwen2 "$ref/tiny_qwen2" --dtype float32
"$ember" generate --model "$ref/tiny_qwen2" --prompt "$prompt" --tokens 4 > /dev/null 2> "$err" ||
  fail "bfloat16: $(cat "$err")"
grep -q "bfloat16" "$err" || fail "the bfloat16 model did not compute in bfloat16: $(cat "$err")"

# GPT-2 (tests/reference/fixtures/gpt2, gpt2_reference.py): transformers' greedy text.
gpt2=$(dirname "$0")/../reference/fixtures/gpt2
gpt2_field() { python3 -c "import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))[sys.argv[2]])" "$gpt2/expected.json" "$1"; }
gpt2_prompt=$(gpt2_field cli_prompt)
"$ember" generate --model "$gpt2/tiny_gpt2" --prompt "$gpt2_prompt" --max-new-tokens 12 > "$out" 2> "$err" ||
  fail "gpt2: generate exited non-zero: $(cat "$err")"
want=$(mktemp)
{ printf '%s' "$gpt2_prompt"; gpt2_field cli_text; printf '\n'; } > "$want"
cmp -s "$out" "$want" || fail "gpt2: printed $(od -c "$out" | head -5), not $(od -c "$want" | head -5)"
grep -q "GPT2LMHeadModel, 2 layers" "$err" || fail "gpt2: no model line: $(cat "$err")"
# the same model as a GGUF file (general.architecture gpt2)
"$ember" generate --model "$gpt2/tiny_gpt2.gguf" --prompt "$gpt2_prompt" --max-new-tokens 12 > "$out" 2> "$err" ||
  fail "gpt2 gguf: generate exited non-zero: $(cat "$err")"
cmp -s "$out" "$want" || fail "gpt2 gguf: printed $(od -c "$out" | head -5), not $(od -c "$want" | head -5)"
rm -f "$want"

# Weight-only quantization: it runs and the model line says so (the text may differ from
# float's: the tests of test_llama.cpp and test_gpt2.cpp check the values).
for model in "$ref/tiny_llama" "$ref/tiny_llama.gguf" "$gpt2/tiny_gpt2"; do
  "$ember" generate --model "$model" --prompt "$prompt" --tokens 6 --quantize int8 > "$out" 2> "$err" ||
    fail "--quantize int8 $model: $(cat "$err")"
  grep -q "(int8 weights)" "$err" || fail "--quantize int8 $model: not int8: $(cat "$err")"
done

# Sampling: the same seed, the same text; another seed, another text.
sample() { "$ember" generate --model "$ref/tiny_llama" --prompt "$prompt" --tokens 24 --temperature 1.2 --top-k 40 --top-p 0.95 --seed "$1" 2> /dev/null; }
a=$(sample 1) || fail "sampling failed"
[ "$a" = "$(sample 1)" ] || fail "sampling with one seed differs between runs"
[ "$a" != "$(sample 2)" ] || fail "two seeds sampled the same text"

# Bad input: one error line, exit 1.
bad() {  # bad WHAT PATTERN ARGS...
  local what=$1 pattern=$2
  shift 2
  "$ember" generate "$@" > /dev/null 2> "$err"
  status=$?
  [ "$status" -eq 1 ] || fail "$what: exit $status"
  [ "$(grep -c . "$err")" -eq 1 ] && grep -q "^ember: error: .*$pattern" "$err" ||
    fail "$what: expected one error line with '$pattern', got: $(cat "$err")"
}
empty=$(mktemp -d)
trap 'rm -f "$out" "$err"; rm -rf "$empty"' EXIT
bad "empty folder" "has no config.json" --model "$empty" --prompt x
cp "$ref/tiny_llama/config.json" "$ref/tiny_llama/tokenizer.json" "$empty/"
bad "no weights" "model.safetensors" --model "$empty" --prompt x
bad "GGUF without a tokenizer" "no tokenizer" --model "$ref/../gguf/llama_tiny.gguf" --prompt x
bad "not a model" "not a valid GGUF file" --model "$ref/expected.json" --prompt x
bad "both sources" "Exactly 1 option" --model "$ref/tiny_llama" --checkpoint x
bad "top-p out of range" "top-p" --model "$ref/tiny_llama" --top-p 1.5
bad "missing model" "neither a folder nor a file" --model /nonexistent --prompt x
bad "unknown quantization" "quantize" --model "$ref/tiny_llama" --quantize int4
echo "generate --model: greedy equals transformers (folder, GGUF, float32/bfloat16), sampling seeded, errors named"
