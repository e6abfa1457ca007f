#!/usr/bin/env bash
# tests/interop/run.sh CHECKER VENV OUT_DIR: ember against real numpy and safetensors -- Python
# writes fixtures that ember reads, ember writes files that Python reads. Fails when the Python
# environment (scripts/python-env.sh) is missing; exits 77 (skipped) only when
# EMBER_SKIP_PYTHON_TESTS=1.
set -uo pipefail
checker=$1 venv=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
py="$venv/bin/python"
if [ "${EMBER_SKIP_PYTHON_TESTS:-0}" = 1 ]; then
  echo "EMBER_SKIP_PYTHON_TESTS=1: skipped"
  exit 77
fi
if ! "$py" -c "import numpy, safetensors" 2>/dev/null; then
  echo "FAIL: no Python environment with numpy and safetensors at $venv;" \
       "create it with 'bash scripts/python-env.sh' (or set EMBER_SKIP_PYTHON_TESTS=1 to skip)"
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/from_python" "$out/from_ember"
fail() { echo "FAIL: $*"; exit 1; }
"$py" "$here/make_fixtures.py" "$out/from_python" || fail "make_fixtures.py"
"$checker" read "$out/from_python" || fail "ember could not read what numpy/safetensors wrote"
"$checker" write "$out/from_ember" || fail "ember could not write its files"
"$py" "$here/check_ember_files.py" "$out/from_ember" || fail "numpy/safetensors could not read what ember wrote"
rm -rf "$out"
echo "interop: all checks passed"
