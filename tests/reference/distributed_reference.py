#!/usr/bin/env python3
"""tests/reference/distributed_reference.py: what PyTorch's own data-parallel pieces give, written
once into distributed_reference.json for tests/data/test_sampler.cpp and tests/distributed/:

- DistributedSampler's index lists (torch.utils.data.distributed.DistributedSampler) for dataset
  sizes, world sizes, ranks, shuffle, seeds, epochs and drop_last, including padding that
  repeats the order more than once;
- torch.randperm(n) from a torch.Generator seeded with s (its head and a checksum);
- DistributedDataParallel's bucket assignment
  (torch.distributed._compute_bucket_assignment_by_size over the parameters in reverse order,
  with the limits [1 MiB, bucket_cap_mb]) for a few parameter lists.

Run with Debian's python3-torch (1.13):  python3 distributed_reference.py > distributed_reference.json
"""
import json

import torch
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler


def sampler_cases():
    cases = []
    for n in (0, 1, 7, 10, 23, 100):
        for world in (1, 2, 3, 4):
            for shuffle in (False, True):
                for drop_last in (False, True):
                    for seed, epoch in ((0, 0), (0, 3), (1234, 1), (2**40 + 5, 2)):
                        if not shuffle and (seed, epoch) != (0, 0):
                            continue
                        for rank in range(world):
                            s = DistributedSampler(range(n), num_replicas=world, rank=rank,
                                                   shuffle=shuffle, seed=seed, drop_last=drop_last)
                            s.set_epoch(epoch)
                            cases.append({"n": n, "world": world, "rank": rank, "shuffle": shuffle,
                                          "seed": seed, "epoch": epoch, "drop_last": drop_last,
                                          "len": len(s), "indices": list(iter(s))})
    return cases


def randperm_cases():
    out = []
    for n, seed in ((1, 0), (2, 0), (10, 0), (10, 1), (60000, 7), (1000, 2**33 + 9)):
        g = torch.Generator()
        g.manual_seed(seed)
        perm = torch.randperm(n, generator=g).tolist()
        # Long permutations as their head and a checksum (sum of i * perm[i]) to keep the file small.
        out.append({"n": n, "seed": seed, "head": perm[:32],
                    "weighted_sum": sum(i * p for i, p in enumerate(perm))})
    return out


def bucket_cases():
    out = []
    shapes_list = [
        # an MLP 784-256-128-10 in float32
        [(256, 784), (256,), (128, 256), (128,), (10, 128), (10,)],
        # many small and a few large parameters
        [(1000, 1000), (10,), (300, 300), (5,), (2000, 600), (7,), (100,), (64, 64, 3, 3)],
        # one parameter larger than every limit
        [(4096, 2048), (3,)],
    ]
    for shapes in shapes_list:
        for cap_mb in (25.0, 1.0, 4.0):
            params = [torch.zeros(s) for s in shapes]
            reversed_params = list(reversed(params))
            limits = [1024 * 1024, int(cap_mb * 1024 * 1024)]
            indices = list(reversed(range(len(params))))
            result = dist._compute_bucket_assignment_by_size(
                reversed_params, limits, [False] * len(params), indices)
            buckets = result[0] if isinstance(result, tuple) else result
            out.append({"shapes": [list(s) for s in shapes], "bucket_cap_mb": cap_mb,
                        "buckets": [list(b) for b in buckets]})
    return out


if __name__ == "__main__":
    print(json.dumps({"torch": torch.__version__, "sampler": sampler_cases(),
                      "randperm": randperm_cases(), "buckets": bucket_cases()},
                     separators=(",", ":")))
