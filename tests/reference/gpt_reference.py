#!/usr/bin/env python3
"""tests/reference/gpt_reference.py: the character-level GPT of `ember train --model gpt` in
PyTorch (1.13: attention written as matmul, causal mask, softmax, matmul), with the same
initialization scheme, the same AdamW groups, schedule and clipping, and the same batches (windows
drawn by splitmix64, as tools/ember/gpt_data.cpp draws them).

  gpt_reference.py fixture OUT.safetensors   the test fixture: a tiny model's initial weights,
                                             the encoded text and the losses of its first steps
  gpt_reference.py train [--data FILE ...]   trains as `ember train --model gpt` does and prints
                                             the losses and tokens/s (the benchmark's reference)
"""
import argparse
import json
import math
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MASK64 = (1 << 64) - 1
TRAIN_STREAM, EVAL_TRAIN_STREAM, EVAL_VAL_STREAM = 0, 1, 2


def splitmix64_at(seed, n):
    z = (seed + (n + 1) * 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def stream_seed(seed, stream):
    return (seed * 1000003 + stream) & MASK64


class BatchSampler:
    def __init__(self, tokens, batch_size, block_size, seed, position=0):
        self.tokens, self.batch_size, self.block_size = tokens, batch_size, block_size
        self.seed, self.position = seed, position

    def next(self):
        span = len(self.tokens) - self.block_size
        starts = []
        for _ in range(self.batch_size):
            starts.append(splitmix64_at(self.seed, self.position) % span)
            self.position += 1
        x = torch.stack([self.tokens[s:s + self.block_size] for s in starts])
        y = torch.stack([self.tokens[s + 1:s + 1 + self.block_size] for s in starts])
        return x, y


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_head, self.n_embd, self.dropout = c["n_head"], c["n_embd"], c["dropout"]
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"])
        self.attn_dropout = nn.Dropout(c["dropout"])
        self.resid_dropout = nn.Dropout(c["dropout"])
        size = c["block_size"]
        self.register_buffer("causal", torch.tril(torch.ones(size, size, dtype=torch.bool)),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"])
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(c["n_embd"]), CausalSelfAttention(c)
        self.ln_2, self.mlp = nn.LayerNorm(c["n_embd"]), Mlp(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["block_size"], c["n_embd"])
        self.drop = nn.Dropout(c["dropout"])
        self.h = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"])
        proj_std = 0.02 / math.sqrt(2 * c["n_layer"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if "ln_" in name:
                    continue
                if name.endswith(".bias"):
                    p.zero_()
                else:
                    p.normal_(0.0, proj_std if "c_proj.weight" in name else 0.02)

    def forward(self, idx):
        pos = torch.arange(idx.size(1))
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)  # the head tied to wte

    @staticmethod
    def loss(logits, targets):
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def make_optimizer(model, lr, weight_decay):
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99), eps=1e-8)


def lr_at(it, lr, min_lr, warmup, decay):
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    if it > decay or decay <= warmup:
        return min_lr
    ratio = (it - warmup) / (decay - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def train_step(model, opt, sampler, grad_accum, grad_clip, lr):
    for group in opt.param_groups:
        group["lr"] = lr
    total = 0.0
    for _ in range(grad_accum):
        x, y = sampler.next()
        loss = Gpt.loss(model(x), y) / grad_accum
        loss.backward()
        total += loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return total


@torch.no_grad()
def estimate_loss(model, tokens, batch_size, eval_iters, seed):
    model.eval()
    sampler = BatchSampler(tokens, batch_size, model.config["block_size"], seed)
    total = 0.0
    for _ in range(eval_iters):
        x, y = sampler.next()
        total += Gpt.loss(model(x), y).item()
    model.train()
    return total / eval_iters


def encode_text(text):
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    return bytes(chars), torch.tensor([index[c] for c in text], dtype=torch.int64)


def split(tokens):
    n_train = len(tokens) * 9 // 10
    return tokens[:n_train], tokens[n_train:]


def save_safetensors(path, tensors, metadata):
    codes = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": codes[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# The fixture's text and configuration: small enough for a committed file of a few tens of KB.
FIXTURE_TEXT = (b"It is a truth universally acknowledged, that a single man in possession of a good "
                b"fortune, must be in want of a wife. However little known the feelings or views of "
                b"such a man may be on his first entering a neighbourhood, this truth is so well "
                b"fixed in the minds of the surrounding families, that he is considered as the "
                b"rightful property of some one or other of their daughters.\n")
FIXTURE = {"block_size": 8, "n_layer": 2, "n_head": 2, "n_embd": 16, "dropout": 0.0,
           "batch_size": 4, "grad_accum": 2, "lr": 1e-2, "warmup_iters": 2, "iters": 6,
           "weight_decay": 0.1, "grad_clip": 1.0, "seed": 7}


def write_fixture(path):
    torch.manual_seed(1234)
    chars, tokens = encode_text(FIXTURE_TEXT)
    c = dict(FIXTURE, vocab_size=len(chars))
    model = Gpt(c)
    initial = {"model." + k: v.clone() for k, v in model.state_dict().items()}
    train, val = split(tokens)
    opt = make_optimizer(model, c["lr"], c["weight_decay"])
    sampler = BatchSampler(train, c["batch_size"], c["block_size"],
                           stream_seed(c["seed"], TRAIN_STREAM))
    losses = [train_step(model, opt, sampler, c["grad_accum"], c["grad_clip"],
                         lr_at(it, c["lr"], c["lr"] / 10, c["warmup_iters"], c["iters"]))
              for it in range(c["iters"])]
    val_loss = estimate_loss(model, val, c["batch_size"], 2,
                             stream_seed(c["seed"], EVAL_VAL_STREAM))
    meta = {k: repr(v) for k, v in c.items()}
    meta.update(losses=" ".join(repr(v) for v in losses), val_loss=repr(val_loss),
                torch=torch.__version__)
    save_safetensors(path, dict(initial, tokens=tokens), meta)
    print("wrote", path, "losses", losses, "val loss", val_loss)


def run_train(args):
    torch.set_num_threads(args.threads)
    with open(args.data, "rb") as f:
        text = f.read()
    chars, tokens = encode_text(text)
    train, val = split(tokens)
    c = {"vocab_size": len(chars), "block_size": args.block_size, "n_layer": args.layers,
         "n_head": args.heads, "n_embd": args.embd, "dropout": args.dropout}
    torch.manual_seed(args.seed)
    model = Gpt(c)
    opt = make_optimizer(model, args.lr, args.weight_decay)
    sampler = BatchSampler(train, args.batch_size, args.block_size,
                           stream_seed(args.seed, TRAIN_STREAM))
    tokens_per_step = args.batch_size * args.block_size * args.grad_accum
    done, train_seconds = 0, 0.0
    while done < args.iters:
        stop = min(args.iters, (done // args.eval_interval + 1) * args.eval_interval)
        t0 = time.perf_counter()
        for it in range(done, stop):
            train_step(model, opt, sampler, args.grad_accum, 1.0,
                       lr_at(it, args.lr, args.lr / 10, args.warmup_iters, args.iters))
        seconds = time.perf_counter() - t0
        train_seconds += seconds
        tl = estimate_loss(model, train, args.batch_size, args.eval_iters,
                           stream_seed(args.seed, EVAL_TRAIN_STREAM))
        vl = estimate_loss(model, val, args.batch_size, args.eval_iters,
                           stream_seed(args.seed, EVAL_VAL_STREAM))
        print(f"iter {stop}: train loss {tl:.4f}, val loss {vl:.4f}, {seconds:.1f} s, "
              f"{tokens_per_step * (stop - done) / seconds:.0f} tokens/s", flush=True)
        done = stop
    print(f"total: {args.iters} iterations in {train_seconds:.1f} s of training, "
          f"{tokens_per_step * args.iters / train_seconds:.0f} tokens/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    fixture = sub.add_parser("fixture")
    fixture.add_argument("out")
    t = sub.add_parser("train")
    t.add_argument("--data", default="/usr/share/games/fortunes/cookie")
    for flag, default in [("--layers", 4), ("--heads", 4), ("--embd", 128), ("--block-size", 64),
                          ("--batch-size", 12), ("--iters", 2000), ("--eval-interval", 250),
                          ("--eval-iters", 50), ("--warmup-iters", 100), ("--grad-accum", 1),
                          ("--seed", 0), ("--threads", 2)]:
        t.add_argument(flag, type=int, default=default)
    for flag, default in [("--lr", 1e-3), ("--dropout", 0.0), ("--weight-decay", 0.1)]:
        t.add_argument(flag, type=float, default=default)
    args = parser.parse_args()
    if args.command == "fixture":
        write_fixture(args.out)
    else:
        run_train(args)


if __name__ == "__main__":
    sys.exit(main())
