#!/usr/bin/env python3
"""tests/reference/half_conversions.py: writes half_conversions.txt, PyTorch's float32 -> bfloat16
and float32 -> float16 conversions (Tensor.to) for a sweep of float32 bit patterns and the
rounding cases around them: ties to even and odd, the values next to ties, float16's subnormals,
its overflow threshold, infinities and zeros. Each line: float32 bits, bfloat16 bits, float16 bits
(hex). NaN inputs are left out: PyTorch's vectorized CPU path gives bfloat16 0xffff for them while
c10::BFloat16 gives 0x7fc0, so ember's NaN rule (0x7fc0, and float16 0x7e00 with the sign) is
checked by tests/test_half.cpp itself. Run once with Debian's python3-torch:
    /usr/bin/python3 tests/reference/half_conversions.py > tests/reference/half_conversions.txt
"""
import torch

bits = set()
for i in range(1024):
    bits.add((i * 0x001FFFFF) & 0xFFFFFFFF)  # a sweep over every exponent and sign
for hi in list(range(0x0000, 0x10000, 0x0301)) + [0x7F7F, 0xFF7F, 0x0080, 0x0001]:
    for lo in (0x7FFF, 0x8000, 0x8001):  # bfloat16: just below, at and above the tie
        bits.add(hi << 16 | lo)
        bits.add((hi | 1) << 16 | lo)
for e in range(100, 144):  # float16: ties at every exponent from below subnormal to overflow
    dropped = 13 + max(0, 113 - e)  # float32 mantissa bits float16 drops at this exponent
    tie = 1 << (dropped - 1) if dropped <= 24 else 0
    for m in range(0, 1 << 23, 1 << 21):
        for kept_odd in (0, 1 << dropped if dropped < 23 else 0):
            base = e << 23 | ((m | kept_odd) & ~((1 << min(dropped, 23)) - 1) & 0x7FFFFF)
            for lo in (tie - 1, tie, tie + 1):
                if lo >= 0:
                    bits.add(base | lo)
                    bits.add(0x80000000 | base | lo)
for v in (0x477FEFFF, 0x477FF000, 0x477FE000, 0x7F800000, 0xFF800000, 0, 0x80000000, 1, 0x33000000,
          0x33000001, 0x32FFFFFF, 0x387FC000, 0x38800000):
    bits.add(v)

nan = lambda b: (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0
values = sorted(b for b in bits if not nan(b))
t = torch.tensor(values, dtype=torch.int64).to(torch.int32).view(torch.float32)
bf = t.to(torch.bfloat16).view(torch.int16).tolist()
hf = t.to(torch.float16).view(torch.int16).tolist()
print(f"# torch {torch.__version__}: float32 bfloat16 float16 (bits, hex)")
for b, x, y in zip(values, bf, hf):
    print(f"{b:08x} {x & 0xFFFF:04x} {y & 0xFFFF:04x}")
