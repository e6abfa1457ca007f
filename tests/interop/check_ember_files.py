"""tests/interop/check_ember_files.py DIR: loads the files ember wrote (interop_check write DIR)
with numpy.load and safetensors.numpy.load_file and checks dtypes, shapes and values exactly.
"""
import os
import sys
import zipfile

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

from fixture_values import DTYPES, empty, scalar, values

out = sys.argv[1]
failures = []


def check(what: str, actual: np.ndarray, expected: np.ndarray) -> None:
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        failures.append(f"{what}: {actual.dtype}{actual.shape} != {expected.dtype}{expected.shape}")
    elif not np.array_equal(actual, expected):
        failures.append(f"{what}: values differ:\n{actual}\n!=\n{expected}")
    else:
        print(f"ok {what}")


for d in DTYPES:
    check(f"{d}.npy", np.load(os.path.join(out, f"{d}.npy")), values(d))
check("scalar.npy", np.load(os.path.join(out, "scalar.npy")), scalar())
check("empty.npy", np.load(os.path.join(out, "empty.npy")), empty())

for name, method in [("stored.npz", zipfile.ZIP_STORED), ("compressed.npz", zipfile.ZIP_DEFLATED)]:
    path = os.path.join(out, name)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None, f"{name}: bad CRC"
        infos = z.infolist()
        if [i.filename for i in infos] != [f"{d}.npy" for d in DTYPES]:
            failures.append(f"{name}: members {[i.filename for i in infos]}")
        if any(i.compress_type != method for i in infos):
            failures.append(f"{name}: compression {[i.compress_type for i in infos]} != {method}")
    with np.load(path, allow_pickle=False) as npz:
        if list(npz.keys()) != DTYPES:
            failures.append(f"{name}: keys {list(npz.keys())}")
        for d in DTYPES:
            check(f"{name}[{d}]", npz[d], values(d))

path = os.path.join(out, "all.safetensors")
tensors = load_file(path)
for d in DTYPES:
    check(f"all.safetensors[{d}]", tensors[d], values(d))
with safe_open(path, framework="numpy") as f:
    if f.metadata() != {"who": "ember"}:
        failures.append(f"all.safetensors: metadata {f.metadata()}")

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
