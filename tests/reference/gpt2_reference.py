#!/usr/bin/env python3
"""tests/reference/gpt2_reference.py: a tiny random GPT-2 (Hugging Face's GPT2LMHeadModel) for
tests/test_gpt2.cpp and tests/cli/generate_lm.sh -- its folder (config.json, model.safetensors,
and the byte-level BPE tokenizer.json of fixtures/bpe/gpt2 so that `ember generate --model` runs
it), and what transformers computes with it: float32 logits of a prompt, greedy continuations
alone and in a left-padded batch, and the text of a greedy continuation of a text prompt (eos
from config.json). Writes tests/reference/fixtures/gpt2/.

Run with torch and transformers from PyPI (this file was run with torch 2.15.0, transformers
5.25.0, tokenizers 0.23.3): /tmp/gpt2-venv/bin/python tests/reference/gpt2_reference.py
"""
import json
import os
import shutil

import torch
from transformers import GPT2Config, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "gpt2")
BPE = os.path.join(HERE, "fixtures", "bpe")


def main():
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
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print("wrote", OUT, "vocab", vocab, "greedy", greedy, batch_greedy)


if __name__ == "__main__":
    main()
