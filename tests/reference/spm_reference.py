#!/usr/bin/env python3
"""Writes SentencePiece-style BPE tokenizers into tests/reference/fixtures/bpe/ with what the
Hugging Face `tokenizers` package gives on bpe_reference.py's hard strings, for tests/test_bpe.cpp
(the same reference layout as the byte-level styles there).

The styles, laid out as the tokenizer.json files of real models have them:
  llama2    Llama 2 / TinyLlama: normalizer Prepend("\u2581") + Replace(" ", "\u2581"), no
            pre-tokenizer, BPE with byte_fallback and fuse_unk (unk "<unk>"), the 256 byte tokens
            "<0x00>".."<0xFF>" at ids 3..258, decoder Replace + ByteFallback + Fuse + Strip(1, 0),
            "<s> $A" template; <unk>, <s>, </s> special added tokens
  metaspace Mistral-style: Metaspace(prepend_scheme "first", split) pre-tokenizer, no normalizer,
            decoder ByteFallback + Metaspace, no template

A vocabulary trained on bpe_reference.py's text with few characters (limit_alphabet), so that
accents, CJK and emoji fall back to byte tokens; the model JSON is then written by hand with the
special and byte tokens first, as Llama's file has them.

Also llama2_tokenizer.gguf: the llama2 vocabulary as a GGUF file's SentencePiece tokenizer
(tokenizer.ggml.model "llama", tokens, scores falling with the id, token types, no merges, no
tensors), and llama2_gguf.reference.json: what transformers' GGUF loader makes of it -- the merges
it derives from the scores and the ids and decodes of its tokenizer on the same strings.

Needs `tokenizers`, and for the GGUF part `transformers`, `gguf` and numpy, from PyPI (this file
was run with tokenizers 0.23.3, transformers 5.25.0, gguf 0.19.0):
    /tmp/spm-venv/bin/python tests/reference/spm_reference.py
"""
import json
import os
import random

from tokenizers import Tokenizer, pre_tokenizers, trainers, models

from bpe_reference import HARD_STRINGS, OUT, TRAINING_TEXT, cases_of

SPACE = "\u2581"
SPECIALS = ["<unk>", "<s>", "</s>"]


def trained_pieces():
    """Vocabulary and merges of a Metaspace-split BPE trained on the text."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=500, min_frequency=2, show_progress=False,
                                  limit_alphabet=70)
    tok.train_from_iterator(TRAINING_TEXT.splitlines(), trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    return [t for t, _ in vocab], model["merges"]


def tokenizer_json(style, pieces, merges):
    tokens = SPECIALS + [f"<0x{b:02X}>" for b in range(256)] + pieces
    vocab = {t: i for i, t in enumerate(tokens)}
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(SPECIALS)]
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>",
             "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
             "byte_fallback": True, "ignore_merges": False, "vocab": vocab, "merges": merges}
    j = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
         "model": model}
    if style == "llama2":
        j["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]}
        j["pre_tokenizer"] = None
        j["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
        j["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    else:
        j["normalizer"] = None
        j["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPACE,
                              "prepend_scheme": "first", "split": True}
        j["post_processor"] = None
        j["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "ByteFallback"},
            {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first",
             "split": True}]}
    return j


def reference_of(tok, strings, rng):
    cases = cases_of(tok, strings)
    decodes = []
    for i in tok.encode("Emoji: 😀 ✨🚀 日本 done", add_special_tokens=False).ids:
        decodes.append({"ids": [i], "text": tok.decode([i])})
    size = tok.get_vocab_size(with_added_tokens=True)
    for _ in range(30):
        ids = [rng.randrange(size) for _ in range(rng.randrange(1, 12))]
        decodes.append({"ids": ids, "text": tok.decode(ids, skip_special_tokens=False)})
    # runs of byte tokens, valid UTF-8 and not
    for run in ([0xE6, 0x97, 0xA5], [0xE6, 0x97], [0xF0, 0x9F, 0x98, 0x80, 0x41], [0xFF]):
        ids = [3 + b for b in run]
        decodes.append({"ids": ids, "text": tok.decode(ids)})
    return {"tokenizers_version": __import__("tokenizers").__version__,
            "vocab_size": size, "cases": cases, "decodes": decodes}


def write_gguf_reference(j, strings, rng):
    """The llama2 vocabulary as a GGUF SentencePiece tokenizer, and transformers' reading of it."""
    import gguf_reference as gr
    from transformers import AutoTokenizer
    tokens = [t for t, _ in sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])]
    types = [2 if t == "<unk>" else 3 if t in SPECIALS else 6 if t.startswith("<0x") else 1
             for t in tokens]
    scores = [0.0 if ty != 1 else -float(i) for i, ty in enumerate(types)]
    meta = [("general.architecture", gr.STRING, "llama"),
            ("tokenizer.ggml.model", gr.STRING, "llama"),
            ("tokenizer.ggml.tokens", gr.ARRAY, (gr.STRING, tokens)),
            ("tokenizer.ggml.scores", gr.ARRAY, (gr.F32, scores)),
            ("tokenizer.ggml.token_type", gr.ARRAY, (gr.I32, types)),
            ("tokenizer.ggml.bos_token_id", gr.U32, 1), ("tokenizer.ggml.eos_token_id", gr.U32, 2),
            ("tokenizer.ggml.unknown_token_id", gr.U32, 0)]
    path = os.path.join(OUT, "llama2_tokenizer.gguf")
    with open(path, "wb") as f:
        f.write(gr.gguf(3, meta, []))
    tok = AutoTokenizer.from_pretrained(OUT, gguf_file="llama2_tokenizer.gguf")
    backend = tok.backend_tokenizer
    ref = reference_of(backend, strings, rng)
    ref["transformers_version"] = __import__("transformers").__version__
    ref["merges"] = json.loads(backend.to_str())["model"]["merges"]
    with open(os.path.join(OUT, "llama2_gguf.reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("llama2_tokenizer.gguf: merges derived", len(ref["merges"]))


def main():
    rng = random.Random(36)
    pieces, merges = trained_pieces()
    strings = HARD_STRINGS + ["<s>Hello</s>", "Hello <s> world", "  two leading", "<unk>"]
    for style in ["llama2", "metaspace"]:
        j = tokenizer_json(style, pieces, merges)
        path = os.path.join(OUT, f"{style}.tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(j, ensure_ascii=False, separators=(",", ":")) + "\n")
        tok = Tokenizer.from_file(path)
        ref = reference_of(tok, strings, rng)
        with open(os.path.join(OUT, f"{style}.reference.json"), "w", encoding="utf-8") as f:
            json.dump(ref, f, ensure_ascii=False, indent=1)
            f.write("\n")
        if style == "llama2":
            write_gguf_reference(j, strings, rng)
        print(style, "vocab", ref["vocab_size"], "merges", len(merges))


if __name__ == "__main__":
    main()
