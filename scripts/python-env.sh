#!/usr/bin/env bash
# scripts/python-env.sh: the Python environment the interop tests use -- .venv with the pinned
# packages of tests/interop/requirements.txt. Does nothing when it is already up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tests/interop/requirements.txt
if [ -x .venv/bin/python ] && cmp -s "$requirements" .venv/ember-requirements.txt; then
  exit 0
fi
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3  # Debian's, with python3-venv
echo "creating .venv ($("$python" --version)) with $(grep -v '^#' "$requirements" | tr '\n' ' ')"
"$python" -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" .venv/ember-requirements.txt
