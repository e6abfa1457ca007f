#!/usr/bin/env bash
# tests/interop/run_torch.sh CHECKER VENV OUT_DIR: ember against PyTorch itself (Debian's
# python3-torch) -- ember's files and model state dicts loaded in PyTorch, PyTorch's in ember.
# Fails when the environment (scripts/python-env.sh) is missing; exits 77 (skipped) only when
# EMBER_SKIP_PYTHON_TESTS=1.
set -uo pipefail
checker=$1 venv=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
py="$venv/bin/python"
if [ "${EMBER_SKIP_PYTHON_TESTS:-0}" = 1 ]; then
  echo "EMBER_SKIP_PYTHON_TESTS=1: skipped"
  exit 77
fi
if ! "$py" -c "import torch, numpy, safetensors" 2>/dev/null; then
  echo "FAIL: no Python environment with torch, numpy and safetensors at $venv; install" \
       "python3-torch and run 'bash scripts/python-env.sh' (or set EMBER_SKIP_PYTHON_TESTS=1)"
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/from_ember" "$out/from_torch"
fail() { echo "FAIL: $*"; exit 1; }
"$checker" write "$out/from_ember" || fail "ember could not write its files"
"$checker" write-models "$out/from_ember" || fail "ember could not write its models"
"$py" "$here/torch_check.py" check "$out/from_ember" || fail "PyTorch could not load what ember wrote"
"$py" "$here/torch_check.py" write "$out/from_torch" || fail "torch_check.py write"
"$checker" read-models "$out/from_torch" || fail "ember could not load PyTorch's models"
rm -rf "$out"
echo "interop with PyTorch: all checks passed"
