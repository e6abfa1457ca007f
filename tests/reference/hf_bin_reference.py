#!/usr/bin/env python3
"""tests/reference/hf_bin_reference.py: tiny_bert's weights as a sharded pytorch_model.bin folder.

Writes tests/reference/fixtures/tiny_bert_bin/: pytorch_model-0000{1,2}-of-00002.bin (torch.save
of OrderedDict state_dicts, as transformers' save_pretrained(safe_serialization=False) shards
them) and pytorch_model.bin.index.json ({"metadata": {"total_size"}, "weight_map"}), from the
tensors of tests/reference/tiny_bert/model.safetensors. tests/cli/embed.sh runs `ember embed` on
tiny_bert with these in place of model.safetensors and expects the same embeddings. Run with
Debian's torch 1.13: .venv-torch/bin/python this_file
"""
import collections
import json
import os
import struct

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny_bert_bin")
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = collections.OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = bytearray(data[8 + n + start:8 + n + end])
        t = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]) if raw else torch.empty(0)
        out[name] = t.reshape(info["shape"]).clone()
    return out


def main():
    tensors = read_safetensors(os.path.join(HERE, "tiny_bert", "model.safetensors"))
    names = list(tensors)
    half = len(names) // 2
    os.makedirs(OUT, exist_ok=True)
    weight_map, total = {}, 0
    for i, part in enumerate((names[:half], names[half:]), start=1):
        file = f"pytorch_model-{i:05d}-of-00002.bin"
        shard = collections.OrderedDict((k, tensors[k]) for k in part)
        torch.save(shard, os.path.join(OUT, file))
        back = torch.load(os.path.join(OUT, file), weights_only=True)
        assert all(torch.equal(back[k], shard[k]) for k in part), file
        for k in part:
            weight_map[k] = file
            total += shard[k].numel() * shard[k].element_size()
    with open(os.path.join(OUT, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
