#!/usr/bin/env bash
# scripts/python-env.sh: the Python environments the interop tests use -- .venv with the pinned
# packages of tests/interop/requirements.txt, and .venv-torch: Debian's python3 with its
# python3-torch and python3-numpy (scripts/install-deps.sh --tests) plus the packages of
# tests/interop/requirements-torch.txt. Does nothing for an environment already up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3  # Debian's, with python3-venv

# make_venv DIR REQUIREMENTS [VENV OPTIONS...]
make_venv() {
  local dir=$1 requirements=$2
  shift 2
  if [ -x "$dir/bin/python" ] && cmp -s "$requirements" "$dir/ember-requirements.txt"; then
    return 0
  fi
  echo "creating $dir ($("$python" --version)) with $(grep -v '^#' "$requirements" | tr '\n' ' ')"
  rm -rf "$dir"
  "$python" -m venv "$@" "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$dir/ember-requirements.txt"
}

make_venv .venv tests/interop/requirements.txt
if "$python" -c "import torch" 2>/dev/null; then
  make_venv .venv-torch tests/interop/requirements-torch.txt --system-site-packages
else
  echo "python-env: no PyTorch in $python (python3-torch); the PyTorch interop test will fail"
fi
