#!/usr/bin/env python3
"""tests/reference/gpt2_reference.py: a tiny random GPT-2 (Hugging Face's GPT2LMHeadModel) for
tests/test_gpt2.cpp and tests/cli/generate_lm.sh -- its folder (config.json, model.safetensors,
and the byte-level BPE tokenizer.json of fixtures/bpe/gpt2 so that `ember generate --model` runs
it), and what transformers computes with it: float32 logits of a prompt, greedy continuations
alone and in a left-padded batch, and the text of a greedy continuation of a text prompt (eos
from config.json). Writes tests/reference/fixtures/gpt2/. Also tiny_gpt2.gguf: the same model and
tokenizer as llama.cpp's converter lays out a GPT-2 (general.architecture gpt2, the Conv1D weights
transposed to (out, in) rows, tokenizer.ggml.* with pre "gpt-2"), with an output.weight equal to
token_embd.weight; written later, from the committed folder, with `--gguf-only`, which writes
only it.

Run with torch and transformers from PyPI (this file was run with torch 2.15.0, transformers
5.25.0, tokenizers 0.23.3): /tmp/gpt2-venv/bin/python tests/reference/gpt2_reference.py
"""
import json
import os
import shutil
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "gpt2")
BPE = os.path.join(HERE, "fixtures", "bpe")
sys.path.insert(0, HERE)
import gguf_reference as gr  # noqa: E402  (the GGUF container writer)


def write_gguf(model, folder, path):
    """The GPT-2 and the folder's tokenizer.json as a GGUF file (all F32), as llama.cpp's
    converter lays them out."""
    c = model.config
    tj = json.load(open(os.path.join(folder, "tokenizer.json")))
    by_id = {i: t for t, i in tj["model"]["vocab"].items()}
    by_id.update({a["id"]: a["content"] for a in tj["added_tokens"]})  # added past the vocab too
    vocab = sorted(((t, i) for i, t in by_id.items()), key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    special = {a["id"] for a in tj["added_tokens"] if a["special"]}
    user = {a["id"] for a in tj["added_tokens"] if not a["special"]}  # llama.cpp: user-defined
    merges = [" ".join(m) if isinstance(m, list) else m for m in tj["model"]["merges"]]
    meta = [("general.architecture", gr.STRING, "gpt2"), ("general.name", gr.STRING, "tiny"),
            ("gpt2.context_length", gr.U32, c.n_positions),
            ("gpt2.embedding_length", gr.U32, c.n_embd),
            ("gpt2.feed_forward_length", gr.U32, 4 * c.n_embd),
            ("gpt2.block_count", gr.U32, c.n_layer),
            ("gpt2.attention.head_count", gr.U32, c.n_head),
            ("gpt2.attention.layer_norm_epsilon", gr.F32, c.layer_norm_epsilon),
            ("tokenizer.ggml.model", gr.STRING, "gpt2"),
            ("tokenizer.ggml.pre", gr.STRING, "gpt-2"),
            ("tokenizer.ggml.tokens", gr.ARRAY, (gr.STRING, [t for t, _ in vocab])),
            ("tokenizer.ggml.token_type", gr.ARRAY,
             (gr.I32, [3 if i in special else 4 if i in user else 1 for _, i in vocab])),
            ("tokenizer.ggml.merges", gr.ARRAY, (gr.STRING, merges)),
            ("tokenizer.ggml.bos_token_id", gr.U32, c.bos_token_id),
            ("tokenizer.ggml.eos_token_id", gr.U32, c.eos_token_id)]
    names = {"transformer.wte.weight": "token_embd.weight",
             "transformer.wpe.weight": "position_embd.weight",
             "transformer.ln_f.weight": "output_norm.weight",
             "transformer.ln_f.bias": "output_norm.bias"}
    parts = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
             "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
    tensors = []
    for name, t in model.state_dict().items():
        if name == "lm_head.weight" or name.endswith((".attn.bias", ".attn.masked_bias")):
            continue
        a = t.float().numpy()
        if name in names:
            gname = names[name]
        else:
            layer, rest = name[len("transformer.h."):].split(".", 1)
            part, kind = rest.rsplit(".", 1)
            gname = f"blk.{layer}.{parts[part]}.{kind}"
            if kind == "weight" and part.startswith(("attn.", "mlp.")):
                a = a.T.copy()  # Conv1D (in, out) -> (out, in) rows, as the converter stores it
        tensors.append((gname, "F32", a.shape, a.astype("<f4").tobytes()))
        if gname == "token_embd.weight":
            tensors.append(("output.weight", "F32", a.shape, a.astype("<f4").tobytes()))
    with open(path, "wb") as f:
        f.write(gr.gguf(3, meta, tensors))


def main():
    if "--gguf-only" in sys.argv:
        folder = os.path.join(OUT, "tiny_gpt2")
        write_gguf(GPT2LMHeadModel.from_pretrained(folder), folder,
                   os.path.join(OUT, "tiny_gpt2.gguf"))
        return
    torch.manual_seed(35)
    vocab = json.load(open(os.path.join(BPE, "gpt2.reference.json")))["vocab_size"]
    config = GPT2Config(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                        n_inner=None, activation_function="gelu_new", resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0, layer_norm_epsilon=1e-5,
                        bos_token_id=0, eos_token_id=0, tie_word_embeddings=True)
    model = GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # larger than the initialization's 0.02, so that logits spread out
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    folder = os.path.join(OUT, "tiny_gpt2")
    model.save_pretrained(folder, safe_serialization=True)
    shutil.copy(os.path.join(BPE, "gpt2.tokenizer.json"), os.path.join(folder, "tokenizer.json"))
    for extra in ("generation_config.json",):
        path = os.path.join(folder, extra)
        if os.path.exists(path):
            os.remove(path)

    prompt = [5, 17, 200, 33, 48, 7, 99, 310, 12, 64, 3, 150]
    with torch.no_grad():
        logits = model(torch.tensor([prompt])).logits[0]
        greedy = model.generate(torch.tensor([prompt[:5]]), max_new_tokens=10, do_sample=False,
                                pad_token_id=0, eos_token_id=None)[0, 5:].tolist()
        batch = [[3, 9, 27, 81, 243], [11, 22, 33]]
        ids = torch.tensor([[0, 0] + batch[1], batch[0]][::-1])  # row 0: full, row 1: padded
        mask = torch.tensor([[1] * 5, [0, 0, 1, 1, 1]])
        batch_greedy = model.generate(ids, attention_mask=mask, max_new_tokens=10,
                                      do_sample=False, pad_token_id=0,
                                      eos_token_id=None)[:, 5:].tolist()
    # `ember generate --model tiny_gpt2 --prompt TEXT --max-new-tokens 12` must print this.
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    cli_prompt = "The quick brown fox"
    cli_ids = tokenizer.encode(cli_prompt).ids
    with torch.no_grad():
        cli_new = model.generate(torch.tensor([cli_ids]), max_new_tokens=12, do_sample=False,
                                 pad_token_id=0)[0, len(cli_ids):].tolist()
    cli_text = tokenizer.decode(cli_new, skip_special_tokens=True)
    expected = {"cli_prompt": cli_prompt, "cli_ids": cli_new, "cli_text": cli_text,
                "transformers": __import__("transformers").__version__,
                "torch": torch.__version__, "prompt": prompt,
                "positions": [0, 5, 11], "logits": logits[[0, 5, 11]].tolist(),
                "greedy_prompt": prompt[:5], "greedy": greedy,
                "batch_prompts": batch, "batch_greedy": batch_greedy}
    write_gguf(model, folder, os.path.join(OUT, "tiny_gpt2.gguf"))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print("wrote", OUT, "vocab", vocab, "greedy", greedy, batch_greedy)


if __name__ == "__main__":
    main()
