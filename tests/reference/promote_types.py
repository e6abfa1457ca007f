#!/usr/bin/env python3
"""tests/reference/promote_types.py: writes promote_types.txt, PyTorch's torch.promote_types and
torch.can_cast for every ordered pair of the real dtypes ember has or will have. tests/test_dtype.cpp
checks ember's promotion table and can_cast against it for every pair of ember's dtypes (pairs
naming a dtype ember does not have yet are skipped by name). Run once with Debian's python3-torch:
    /usr/bin/python3 tests/reference/promote_types.py > tests/reference/promote_types.txt
"""
import torch

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]


def name(t):
    return str(t).removeprefix("torch.")


print(f"# torch {torch.__version__}: a b promote_types(a, b) can_cast(a, b)")
for a in DTYPES:
    for b in DTYPES:
        print(name(a), name(b), name(torch.promote_types(a, b)), int(torch.can_cast(a, b)))
