#!/usr/bin/env python3
"""Writes tests/reference/tiny_bert/: a small random BertModel saved by Hugging Face
`transformers` as a sentence-transformers folder (config.json, model.safetensors, tokenizer.json,
modules.json, sentence_bert_config.json, 1_Pooling/config.json), and bert_reference.json with
what `tokenizers`, `transformers` and `sentence-transformers` compute on fixed texts -- token
ids, the attention mask, BertModel's last hidden state and pooler output for the padded batch,
and the sentence embeddings -- for tests/test_bert.cpp.

Needs transformers and sentence-transformers from PyPI, e.g. in a virtual environment over
Debian's python3-torch (this file was run with torch 1.13, transformers 4.36.2,
sentence-transformers 2.7.0, tokenizers 0.15.2):
    python3 -m venv --system-site-packages /tmp/hf
    /tmp/hf/bin/pip install transformers==4.36.2 scikit-learn pillow
    /tmp/hf/bin/pip install --no-deps sentence-transformers==2.7.0
    /tmp/hf/bin/python tests/reference/bert_reference.py
"""
import json
import os
import shutil

import torch
from sentence_transformers import SentenceTransformer, models
from transformers import BertConfig, BertModel, BertTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny_bert")

WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "run", "##s", "##ing", "##ed", "play",
         "cafe", "naive", "resume", "hello", "world", "un", "##believ", "##able", "x", "##y",
         "中", "文", "is", "good", "bad", "what", "?", "!", ",", ".", "'", "-", "(", ")", "a",
         "##a", "##b", "b", "1", "2", "##3", "test"]
TEXTS = [
    "The cat sat on the mat.",
    "Dogs running, cats played!",
    "Unbelievable: naïve café résumé",
    "hello   world\t(what?)",
    "中文 is good",
    "xyzzy qqq 123",
    "A" * 120,
    "",
]


def main():
    torch.manual_seed(0)
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    for w in WORDS:
        if w not in vocab:
            vocab.append(w)
    vocab_file = os.path.join(OUT, "vocab.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file, do_lower_case=True)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
                        type_vocab_size=2)
    model = BertModel(config).eval()
    with torch.no_grad():  # a visible pooler and non-trivial LayerNorms
        for name, p in model.named_parameters():
            if "LayerNorm" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    transformer_dir = os.path.join(OUT, "hf")
    model.save_pretrained(transformer_dir, safe_serialization=True)
    tokenizer.save_pretrained(transformer_dir)
    word = models.Transformer(transformer_dir, max_seq_length=16)
    st = SentenceTransformer(modules=[word, models.Pooling(16, "mean"), models.Normalize()])
    shutil.rmtree(OUT)
    st.save(OUT)
    for extra in ["special_tokens_map.json", "tokenizer_config.json", "vocab.txt", "README.md",
                  "config_sentence_transformers.json"]:
        path = os.path.join(OUT, extra)
        if os.path.exists(path):
            os.remove(path)

    batch = tokenizer(TEXTS, padding=True, truncation=True, max_length=16, return_tensors="pt")
    with torch.no_grad():
        out = BertModel.from_pretrained(OUT).eval()(**batch)
        embeddings = SentenceTransformer(OUT).encode(TEXTS, convert_to_tensor=True)
    reference = {
        "texts": TEXTS,
        "tokens": [tokenizer.convert_ids_to_tokens(ids) for ids in
                   tokenizer(TEXTS, truncation=True, max_length=16)["input_ids"]],
        "input_ids": batch["input_ids"].tolist(),
        "attention_mask": batch["attention_mask"].tolist(),
        "last_hidden_state": out.last_hidden_state.reshape(-1).tolist(),
        "hidden_shape": list(out.last_hidden_state.shape),
        "pooler_output": out.pooler_output.reshape(-1).tolist(),
        "embeddings": embeddings.reshape(-1).tolist(),
    }
    with open(os.path.join(HERE, "bert_reference.json"), "w") as f:
        json.dump(reference, f, indent=0, ensure_ascii=False)


if __name__ == "__main__":
    main()
