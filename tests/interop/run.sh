#!/usr/bin/env bash
# tests/interop/run.sh CHECKER VENV OUT_DIR numpy|torch: ember against real Python libraries.
#   numpy: numpy and safetensors write fixtures that ember reads, ember writes files they read;
#   torch: PyTorch itself (Debian's python3-torch) loads ember's files and model state dicts,
#          torch.save files ember wrote (torch.load, weights_only=True), and ember loads
#          PyTorch's models and matches their outputs.
# Fails when the Python environment (scripts/python-env.sh) is missing; exits 77 (skipped) only
# when EMBER_SKIP_PYTHON_TESTS=1.
set -uo pipefail
checker=$1 venv=$2 out=$3 suite=$4
here=$(cd "$(dirname "$0")" && pwd)
py="$venv/bin/python"
if [ "${EMBER_SKIP_PYTHON_TESTS:-0}" = 1 ]; then
  echo "EMBER_SKIP_PYTHON_TESTS=1: skipped"
  exit 77
fi
modules="numpy, safetensors"
[ "$suite" = torch ] && modules="torch, numpy, safetensors"
if ! "$py" -c "import $modules" 2>/dev/null; then
  echo "FAIL: no Python environment with $modules at $venv; create it with" \
       "'bash scripts/install-deps.sh --tests && bash scripts/python-env.sh'" \
       "(or set EMBER_SKIP_PYTHON_TESTS=1 to skip)"
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/from_python" "$out/from_ember"
fail() { echo "FAIL: $*"; exit 1; }
"$checker" write "$out/from_ember" || fail "ember could not write its files"
if [ "$suite" = torch ]; then
  "$checker" write-models "$out/from_ember" || fail "ember could not write its models"
  "$py" "$here/torch_check.py" check "$out/from_ember" || fail "PyTorch could not load what ember wrote"
  "$checker" write-pt "$out/from_ember" || fail "ember could not write its .pt files"
  "$py" "$here/pt_check.py" "$out/from_ember" || fail "torch.load could not load ember's .pt files"
  "$py" "$here/torch_check.py" write "$out/from_python" || fail "torch_check.py write"
  "$checker" read-models "$out/from_python" || fail "ember could not load PyTorch's models"
else
  "$py" "$here/make_fixtures.py" "$out/from_python" || fail "make_fixtures.py"
  "$checker" read "$out/from_python" || fail "ember could not read what numpy/safetensors wrote"
  "$py" "$here/check_ember_files.py" "$out/from_ember" || fail "numpy/safetensors could not read what ember wrote"
fi
rm -rf "$out"
echo "interop ($suite): all checks passed"
