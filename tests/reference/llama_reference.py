#!/usr/bin/env python3
"""tests/reference/llama_reference.py: tiny random decoder language models and what transformers
computes with them, for ember's LlamaForCausalLM and its generation (issue 35).

Run once with transformers from PyPI (4.46.3 was used, over Debian's torch 1.13):
    python3 -m venv --system-site-packages VENV && VENV/bin/pip install transformers==4.46.3
    VENV/bin/python tests/reference/llama_reference.py
Writes into tests/reference/fixtures/llama/:

- tiny_llama/: a Hugging Face folder (config.json, generation_config.json, model.safetensors in
  float32, tokenizer.json -- the llama3-style fixture tokenizer of bpe_reference.py) of a 2-layer
  LlamaForCausalLM with grouped-query attention (4 heads, 2 key/value heads), head_dim 16 apart
  from hidden_size / heads (8), separate lm_head, llama3 rope scaling;
- tiny_qwen2/: a 2-layer Qwen2ForCausalLM in bfloat16 (q/k/v biases, one key/value head, tied
  embeddings, the qwen2-style fixture tokenizer);
- tiny_llama.gguf: tiny_llama's weights (F32) and tokenizer as llama.cpp's converter writes them
  (general.architecture llama, q/k rows permuted, tokenizer.ggml.* with pre "llama-bpe"),
  without rope scaling -- the file format has none -- so it must compute the default_rope case;
- tiny_llama_rope_freqs.gguf: the same with the rope_freqs.weight tensor llama.cpp's converter
  adds for llama3 rope scaling (the factors each inverse frequency is divided by, computed here
  as the converter computes them), so it must compute the llama3_rope case. Written later, from
  the committed folder, with `--rope-freqs-only` (transformers 5.25), which writes only it;
- expected.safetensors + expected.json: for each case (a folder and config.json fields changed
  over it: each rope scaling kind, the dtype transformers computed in) the logits of a prompt at a
  few positions, and greedy continuations: one prompt alone, and two prompts in one batch with left
  padding and an attention mask, as transformers' generate gives them; and for `ember generate`,
  the text of the greedy continuation of CLI_PROMPT (decoded, special tokens skipped).
"""
import json
import math
import os
import shutil
import sys

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from transformers import (AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM)
import transformers.generation.utils as generation_utils

# Debian's torch 1.13 cannot import torch.distributed.fsdp under Python 3.11 (a dataclass with a
# mutable default), which generate() imports only to ask whether the model is FSDP-wrapped.
generation_utils.is_fsdp_managed_module = lambda module: False

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_reference as gr  # noqa: E402  (the GGUF container writer)
OUT = os.path.join(HERE, "fixtures", "llama")
BPE = os.path.join(HERE, "fixtures", "bpe")

PROMPT = ("The quick brown fox jumps over the lazy dog; café, naïve, 日本語 and 12345 digits "
          "sit in code: def f(x): return x*2")
BATCH = ["Hello world, this is a longer prompt for the batch", "Short one"]
POSITIONS = [0, 1, 7, 16, 31, -1]
NEW_TOKENS = 12
CLI_PROMPT = "The quick brown fox"


def randomize(model, std):
    # Weights wider than transformers' init (std 0.02), so that logits differ clearly between
    # tokens and greedy continuations do not repeat one token.
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def write_folder(model, folder, tokenizer_file, eos):
    path = os.path.join(OUT, folder)
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path, safe_serialization=True)
    shutil.copy(os.path.join(BPE, tokenizer_file), os.path.join(path, "tokenizer.json"))
    with open(os.path.join(path, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 0, "eos_token_id": eos, "do_sample": False}, f, indent=1)
    return path


def pad_batch(tok, texts, pad_id):
    encs = [tok.encode(t).ids for t in texts]
    width = max(len(e) for e in encs)
    ids = [[pad_id] * (width - len(e)) + e for e in encs]
    mask = [[0] * (width - len(e)) + [1] * len(e) for e in encs]
    return torch.tensor(ids), torch.tensor(mask)


def run_case(name, folder, overrides, dtype, tensors, cases, pad_id):
    path = os.path.join(OUT, folder)
    config = json.load(open(os.path.join(path, "config.json")))
    config.update(overrides)
    cls = {"llama": LlamaConfig, "qwen2": Qwen2Config}[config["model_type"]]
    cfg = cls.from_dict(config)
    model = AutoModelForCausalLM.from_pretrained(path, config=cfg, torch_dtype=dtype).eval()
    tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
    ids = torch.tensor([tok.encode(PROMPT).ids])
    with torch.no_grad():
        logits = model(ids).logits[0].float()
        positions = [p % ids.shape[1] for p in POSITIONS]
        tensors[name + ".logits"] = logits[positions].contiguous()
        one = model.generate(ids[:, :9], max_new_tokens=NEW_TOKENS, do_sample=False,
                             pad_token_id=pad_id, eos_token_id=None)
        bids, bmask = pad_batch(tok, BATCH, pad_id)
        batch = model.generate(bids, attention_mask=bmask, max_new_tokens=NEW_TOKENS,
                               do_sample=False, pad_token_id=pad_id, eos_token_id=None)
        cli_ids = torch.tensor([tok.encode(CLI_PROMPT).ids])
        cli = model.generate(cli_ids, max_new_tokens=NEW_TOKENS, do_sample=False,
                             pad_token_id=pad_id, eos_token_id=None)
    cli_text = tok.decode(cli[0, cli_ids.shape[1]:].tolist(), skip_special_tokens=True)
    cases.append({
        "cli_prompt": CLI_PROMPT, "cli_text": cli_text,
        "name": name, "folder": folder, "config": overrides,
        "dtype": str(dtype).replace("torch.", ""),
        "prompt_ids": ids[0].tolist(), "positions": positions,
        "greedy_prompt": ids[0, :9].tolist(), "greedy": one[0, 9:].tolist(),
        "batch_prompts": bids.tolist(), "batch_mask": bmask.tolist(),
        "batch_greedy": batch[:, bids.shape[1]:].tolist(),
    })


def rope_theta(c):
    """config.rope_theta, or transformers 5's rope_parameters["rope_theta"]."""
    theta = getattr(c, "rope_theta", None)
    return theta if theta is not None else c.rope_parameters["rope_theta"]


def llama3_rope_factors(c):
    """llama.cpp's converter's rope_freqs for a llama3 rope_scaling: per inverse frequency, 1 above
    the high-frequency bound, the factor below the low one, the smoothed inverse between."""
    r = getattr(c, "rope_scaling", None) or c.rope_parameters
    dim = c.head_dim
    freqs = 1.0 / (rope_theta(c) ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = r["factor"], r["low_freq_factor"], r["high_freq_factor"]
    old = r["original_max_position_embeddings"]
    out = []
    for f in freqs.tolist():
        wavelen = 2 * math.pi / f
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return out


def write_gguf(model, tokenizer_file, path, rope_freqs=None):
    """The Llama's weights and tokenizer as a GGUF file (all F32), as llama.cpp's converter lays
    them out; with rope_freqs, also the rope_freqs.weight tensor of those factors."""
    c = model.config
    tj = json.load(open(os.path.join(BPE, tokenizer_file)))
    vocab = sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    special = {a["id"] for a in tj["added_tokens"] if a["special"]}
    merges = [" ".join(m) if isinstance(m, list) else m for m in tj["model"]["merges"]]
    meta = [("general.architecture", gr.STRING, "llama"), ("general.name", gr.STRING, "tiny"),
            ("llama.context_length", gr.U32, c.max_position_embeddings),
            ("llama.embedding_length", gr.U32, c.hidden_size),
            ("llama.block_count", gr.U32, c.num_hidden_layers),
            ("llama.feed_forward_length", gr.U32, c.intermediate_size),
            ("llama.attention.head_count", gr.U32, c.num_attention_heads),
            ("llama.attention.head_count_kv", gr.U32, c.num_key_value_heads),
            ("llama.attention.key_length", gr.U32, c.head_dim),
            ("llama.attention.value_length", gr.U32, c.head_dim),
            ("llama.attention.layer_norm_rms_epsilon", gr.F32, c.rms_norm_eps),
            ("llama.rope.freq_base", gr.F32, rope_theta(c)),
            ("llama.vocab_size", gr.U32, c.vocab_size),
            ("tokenizer.ggml.model", gr.STRING, "gpt2"),
            ("tokenizer.ggml.pre", gr.STRING, "llama-bpe"),
            ("tokenizer.ggml.tokens", gr.ARRAY, (gr.STRING, [t for t, _ in vocab])),
            ("tokenizer.ggml.token_type", gr.ARRAY,
             (gr.I32, [3 if i in special else 1 for _, i in vocab])),
            ("tokenizer.ggml.merges", gr.ARRAY, (gr.STRING, merges)),
            ("tokenizer.ggml.bos_token_id", gr.U32, 0), ("tokenizer.ggml.eos_token_id", gr.U32, 1),
            ("tokenizer.ggml.eot_token_id", gr.U32, 2),
            ("tokenizer.ggml.add_bos_token", gr.BOOL, True)]
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight":
             "output_norm.weight", "lm_head.weight": "output.weight"}
    parts = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
             "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    tensors = []
    for name, t in model.state_dict().items():
        a = t.float().numpy()
        if name in names:
            gname = names[name]
        else:
            layer, rest = name[len("model.layers."):].split(".", 1)
            part = rest.rsplit(".", 1)[0]
            gname = f"blk.{layer}.{parts[part]}.weight"
            if part == "self_attn.q_proj":
                a = gr.permute(a, c.num_attention_heads)
            elif part == "self_attn.k_proj":
                a = gr.permute(a, c.num_key_value_heads)
        tensors.append((gname, "F32", a.shape, a.astype("<f4").tobytes()))
    if rope_freqs is not None:
        a = torch.tensor(rope_freqs, dtype=torch.float32).numpy()
        tensors.append(("rope_freqs.weight", "F32", a.shape, a.astype("<f4").tobytes()))
    with open(path, "wb") as f:
        f.write(gr.gguf(3, meta, tensors))


def main():
    if "--rope-freqs-only" in sys.argv:
        llama = LlamaForCausalLM.from_pretrained(os.path.join(OUT, "tiny_llama"))
        write_gguf(llama, "llama3.tokenizer.json", os.path.join(OUT, "tiny_llama_rope_freqs.gguf"),
                   llama3_rope_factors(llama.config))
        return
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    llama = LlamaForCausalLM(LlamaConfig(
        vocab_size=700, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=64,
        rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False, bos_token_id=0,
        eos_token_id=1, rope_scaling={"rope_type": "llama3", "factor": 4.0,
                                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 16}))
    randomize(llama, 0.25)
    write_folder(llama, "tiny_llama", "llama3.tokenizer.json", [1, 2])
    write_gguf(llama, "llama3.tokenizer.json", os.path.join(OUT, "tiny_llama.gguf"))
    write_gguf(llama, "llama3.tokenizer.json", os.path.join(OUT, "tiny_llama_rope_freqs.gguf"),
               llama3_rope_factors(llama.config))

    qwen = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=700, hidden_size=32, intermediate_size=80, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=128,
        rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, bos_token_id=0,
        eos_token_id=0, use_sliding_window=False))
    randomize(qwen, 0.25)
    qwen = qwen.to(torch.bfloat16)
    write_folder(qwen, "tiny_qwen2", "qwen2.tokenizer.json", 0)

    tensors, cases = {}, []
    run_case("llama3_rope", "tiny_llama", {}, torch.float32, tensors, cases, 3)
    run_case("default_rope", "tiny_llama", {"rope_scaling": None}, torch.float32, tensors, cases,
             3)
    run_case("linear_rope", "tiny_llama", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}},
             torch.float32, tensors, cases, 3)
    run_case("dynamic_rope", "tiny_llama",
             {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
              "max_position_embeddings": 24}, torch.float32, tensors, cases, 3)
    run_case("qwen2", "tiny_qwen2", {}, torch.float32, tensors, cases, 3)
    run_case("qwen2_bf16", "tiny_qwen2", {}, torch.bfloat16, tensors, cases, 3)
    save_file(tensors, os.path.join(OUT, "expected.safetensors"))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"transformers": __import__("transformers").__version__,
                   "torch": torch.__version__, "prompt": PROMPT, "batch": BATCH,
                   "new_tokens": NEW_TOKENS, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
