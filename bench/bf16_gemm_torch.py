"""bench/bf16_gemm_torch.py: PyTorch's bfloat16 GEMM rates at the shapes of ember_bench's
BM_Bf16Gemm and BM_Bf16Linear rows, for a side-by-side reading on the same machine (run it right
after ember_bench, same thread count). Prints the median GFLOP/s of each shape.

Usage: python3 bench/bf16_gemm_torch.py [--threads N] [--repeats R]
"""

import argparse
import statistics
import time

import torch


def rate(fn, flops, repeats):
    fn()
    samples = []
    for _ in range(repeats):
        iters, t0 = 0, time.perf_counter()
        while True:
            fn()
            iters += 1
            elapsed = time.perf_counter() - t0
            if elapsed > 0.2:
                break
        samples.append(flops * iters / elapsed / 1e9)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    opt = parser.parse_args()
    torch.set_num_threads(opt.threads)
    print(f"torch {torch.__version__}, {opt.threads} threads, GFLOP/s (median of {opt.repeats})")
    for n in (1024, 4096):
        a = torch.randn(n, n).bfloat16()
        b = torch.randn(n, n).bfloat16()
        print(f"bf16 mm {n}: {rate(lambda: torch.mm(a, b), 2.0 * n ** 3, opt.repeats):.0f}")
    for m in (1, 16, 64):
        for k in (512, 4096):
            for n in (512, 4096):
                x = torch.randn(m, k).bfloat16()
                w = torch.randn(n, k).bfloat16()
                with torch.inference_mode():
                    r = rate(lambda: torch.nn.functional.linear(x, w), 2.0 * m * k * n, opt.repeats)
                print(f"bf16 linear m={m} k={k} n={n}: {r:.0f}")


if __name__ == "__main__":
    main()
