#!/usr/bin/env python3
"""bench/allreduce_torch.py: PyTorch's own Gloo all-reduce (torch.distributed, backend "gloo") on
the same sizes and with the same method as `ember_ddp_bench allreduce` (a barrier, then one timed
all_reduce of float32 ones; the median of 20 runs, 5 from 64 MiB up), for bench/ddp_bench.sh.
Started by `ember run` (or torchrun), which sets MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE.

  allreduce_torch.py [MiB ...]
"""
import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1, 4, 16, 64, 256]
    dist.init_process_group("gloo")
    world, rank = dist.get_world_size(), dist.get_rank()
    for mib in sizes:
        n = mib * (1 << 20) // 4
        t = torch.ones(n)
        dist.all_reduce(t)
        times = []
        for _ in range(5 if mib >= 64 else 20):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - t0)
        s = statistics.median(times)
        algbw = n * 4 / s / 1e9
        busbw = algbw * 2 * (world - 1) / world
        if rank == 0:
            print(f"allreduce {mib} MiB {s * 1e3:.4f} ms algbw {algbw:.3f} GB/s "
                  f"busbw {busbw:.3f} GB/s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
