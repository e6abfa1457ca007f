"""tests/interop/fixture_values.py: the arrays both sides of the interop tests write and expect.

interop_check.cpp computes the same values; keep the two in step.
"""
import numpy as np

DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"]


def values(dtype: str) -> np.ndarray:
    """A (2, 3, 4) array of `dtype` with values that are exact in every dtype (bfloat16 included:
    the floating values are multiples of 0.25 below 13)."""
    base = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    if dtype in ("float32", "float64", "float16"):
        v = base * 0.75 - 5
    elif dtype == "int32":
        v = base * 100003 - 1000000
    elif dtype == "int64":
        v = (base - 12) * 2.0**40 + 7
    elif dtype == "uint8":
        v = base * 11 % 256
    else:
        v = base % 3 == 0
    return v.astype(dtype)


def scalar() -> np.ndarray:
    return np.array(2.5, dtype=np.float64)


def empty() -> np.ndarray:
    return np.zeros((0, 3), dtype=np.float32)
