"""tests/interop/make_fixtures.py OUT_DIR: writes .npy, .npz and .safetensors files with numpy and
the safetensors package, for ember to read (interop_check read OUT_DIR).
"""
import os
import sys

import numpy as np
from safetensors.numpy import save_file

from fixture_values import DTYPES, empty, scalar, values

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
arrays = {d: values(d) for d in DTYPES}

for d, a in arrays.items():
    np.save(os.path.join(out, f"{d}.npy"), a)
    np.save(os.path.join(out, f"{d}_fortran.npy"), np.asfortranarray(a))
    np.save(os.path.join(out, f"{d}_big_endian.npy"), a.astype(a.dtype.newbyteorder(">")))
for version in [(2, 0), (3, 0)]:
    with open(os.path.join(out, f"float32_v{version[0]}.npy"), "wb") as f:
        np.lib.format.write_array(f, arrays["float32"], version=version)
np.save(os.path.join(out, "scalar.npy"), scalar())
np.save(os.path.join(out, "empty.npy"), empty())
np.savez(os.path.join(out, "stored.npz"), **arrays)
np.savez_compressed(os.path.join(out, "compressed.npz"), **arrays)
save_file(arrays, os.path.join(out, "all.safetensors"), metadata={"who": "numpy"})

# Sanity: the Fortran and big-endian files really are what their names say.
with open(os.path.join(out, "float64_fortran.npy"), "rb") as f:
    assert b"'fortran_order': True" in f.read(128)
with open(os.path.join(out, "float64_big_endian.npy"), "rb") as f:
    assert b"'descr': '>f8'" in f.read(128)
print(f"wrote fixtures with numpy {np.__version__} to {out}")
