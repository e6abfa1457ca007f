"""fuzz/make_corpus.py: regenerates the seed corpus in fuzz/corpus/<reader>/ -- a few tiny valid
files written by numpy, safetensors, pickle and torch (the committed .pt fixtures), and a few
invalid ones. Run with the interop tests'
Python environment: .venv/bin/python fuzz/make_corpus.py
"""
import collections
import gzip
import io
import os
import pickle
import struct
import zipfile

import numpy as np
from safetensors.numpy import save

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(reader: str, name: str, data: bytes) -> None:
    os.makedirs(os.path.join(here, reader), exist_ok=True)
    with open(os.path.join(here, reader, name), "wb") as f:
        f.write(data)


def npy(a: np.ndarray, version=None) -> bytes:
    b = io.BytesIO()
    if version:
        np.lib.format.write_array(b, a, version=version)
    else:
        np.save(b, a)
    return b.getvalue()


a = np.arange(6, dtype=np.float32).reshape(2, 3)
put("npy", "valid_f4", npy(a))
put("npy", "valid_fortran_f8", npy(np.asfortranarray(a.astype(np.float64))))
put("npy", "valid_big_endian_i4", npy(np.array([1, -2, 3], dtype=">i4")))
put("npy", "valid_v2_bool", npy(np.array([True, False]), version=(2, 0)))
put("npy", "valid_v3_u1", npy(np.array([[7]], dtype=np.uint8), version=(3, 0)))
put("npy", "valid_scalar_i8", npy(np.array(5, dtype=np.int64)))
put("npy", "valid_empty", npy(np.zeros((0, 3), dtype=np.float32)))
put("npy", "invalid_truncated", npy(a)[:-3])
put("npy", "invalid_object",
    npy(a).replace(b"'<f4'", b"'|O8'"))
put("npy", "valid_f2", npy(np.array([1, 2], dtype=np.float16)))
put("npy", "invalid_c8", npy(np.array([1, 2], dtype=np.complex64)))
put("npy", "invalid_magic", b"\x93NUMPZ" + npy(a)[6:])

arrays = {"w": a, "b": np.array([1, 2], dtype=np.int32), "m": np.array([True])}
for name, compressed in [("valid_stored", False), ("valid_deflated", True)]:
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    put("npz", name, b.getvalue())
b = io.BytesIO()
np.savez(b)
put("npz", "valid_empty", b.getvalue())
b = io.BytesIO()
np.savez(b, **arrays)
put("npz", "invalid_truncated", b.getvalue()[:-30])
b = io.BytesIO()
with zipfile.ZipFile(b, "w") as z:
    z.writestr("readme.txt", "not an array")
put("npz", "invalid_member", b.getvalue())

st = save({"w": a, "i": np.array([1, 2], dtype=np.int64), "m": np.array([True, False])},
          metadata={"k": "v"})
put("safetensors", "valid_three", st)
put("safetensors", "valid_empty", save({}))
put("safetensors", "invalid_header_length", struct.pack("<Q", 1 << 40) + st[8:])
put("safetensors", "invalid_truncated", st[:-5])
hdr = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}'
put("safetensors", "invalid_overlap", struct.pack("<Q", len(hdr)) + hdr + bytes(8))
hdr = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]'
put("safetensors", "invalid_json", struct.pack("<Q", len(hdr)) + hdr + bytes(8))

labels = struct.pack(">II", 0x801, 3) + bytes([1, 2, 9])
images = struct.pack(">IIII", 0x803, 2, 2, 2) + bytes(range(8))
put("idx", "valid_labels", labels)
put("idx", "valid_images", images)
put("idx", "valid_labels_gzip", gzip.compress(labels, mtime=0))
put("idx", "invalid_truncated", images[:-2])
put("idx", "invalid_extra", labels + b"x")
put("idx", "invalid_magic", struct.pack(">II", 0x901, 1) + b"\x00")
put("idx", "invalid_gzip", gzip.compress(images, mtime=0)[:-6])

# pickles as PyTorch checkpoints hold them (the tensors' globals come with the .pt reader)
values = collections.OrderedDict([("w", [1, -2, 3.5, True, None]), ("n", {7: ("x", 2**40)})])
shared = [1, 2]
for protocol in (2, 4, 5):
    put("pickle", f"valid_p{protocol}", pickle.dumps(values, protocol=protocol))
put("pickle", "valid_memo", pickle.dumps({"a": shared, "b": shared}, protocol=4))
put("pickle", "invalid_system", b"\x80\x02cposix\nsystem\nX\x02\x00\x00\x00id\x85R.")
put("pickle", "invalid_truncated", pickle.dumps(values, protocol=4)[:-9])
put("pickle", "invalid_memo", b"\x80\x02h\x09.")
put("pickle", "invalid_deep", b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".")
put("pickle", "invalid_huge_string", b"\x80\x04\x8d" + b"\xff" * 8 + b".")
# torch.save files (the fixtures torch 1.13 wrote for the .pt reader) and damaged ones
pt_dir = os.path.join(os.path.dirname(here), "..", "tests", "reference", "fixtures", "pt")


def pt(name: str) -> bytes:
    with open(os.path.join(pt_dir, name), "rb") as f:
        return f.read()


for name in ("views_zip", "dtypes_legacy_p2", "nested", "parameter"):
    put("pt", f"valid_{name}", pt(name + ".pt"))
views = pt("views_zip.pt")
legacy = pt("views_legacy.pt")
put("pt", "invalid_malicious", pt("malicious.pt"))
put("pt", "invalid_complex", pt("complex.pt"))
put("pt", "invalid_zip_truncated", views[: len(views) // 2])
put("pt", "invalid_legacy_truncated", legacy[:-40])
# a storage the pickle says holds 24 floats, cut to 12 in both directory entries
put("pt", "invalid_short_storage", views.replace(b"K\x18t", b"K\x30t", 1))
print("corpus written to", here)
