#!/usr/bin/env python3
"""bench/ddp_step_torch.py: PyTorch's side of `ember_ddp_bench step` -- the same MLPs (mlp:
784-256-10, wide: 784-1024-1024-1024-10), SGD with momentum, cross-entropy on fixed random data,
the median of the timed steps after 5 warm-up steps; plain when WORLD_SIZE is unset, else through
torch.nn.parallel.DistributedDataParallel on a Gloo group (as started by `ember run`).

  ddp_step_torch.py MODEL BATCH [STEPS]
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def make(name):
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def main():
    name, batch = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    torch.set_num_threads(1)
    ddp = "WORLD_SIZE" in os.environ
    if ddp:
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = make(name)
    net = nn.parallel.DistributedDataParallel(model) if ddp else model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(batch, 784), torch.randint(0, 10, (batch,))
    times = []
    for i in range(steps + 5):
        t0 = time.perf_counter()
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        if i >= 5:
            times.append(time.perf_counter() - t0)
    if not ddp or dist.get_rank() == 0:
        params = sum(p.numel() for p in model.parameters())
        print(f"step {name} batch {batch} params {params} {'ddp' if ddp else 'single'} "
              f"{statistics.median(times) * 1e3:.4f} ms", flush=True)
    if ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
