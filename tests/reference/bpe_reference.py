#!/usr/bin/env python3
"""Writes tests/reference/fixtures/bpe/: small byte-level BPE tokenizer.json files trained by the
Hugging Face `tokenizers` package on the text below (written for this test; no licence needed),
and, for each, what `tokenizers` gives on a corpus of hard strings -- ids with and without the
special tokens of the post-processor, decodes with and without skipping special tokens, and the
decodes of id lists that cut characters apart -- for tests/test_bpe.cpp.

The styles:
  gpt2    ByteLevel pre-tokenizer with its own regex, merges in the "a b" string form,
          added tokens (special <|endoftext|>, a non-special one, ones that strip spaces on
          their left or right, one matched only as a whole word)
  llama3  Split on the Llama 3 pattern (Isolated) + ByteLevel(use_regex=false), ignore_merges,
          <|begin_of_text|> added by TemplateProcessing, merges in the [["a", "b"]] form
  qwen2   NFC normalizer, Split on the Qwen2 pattern (single digits) + ByteLevel(use_regex=false)
  digits  Digits(individual_digits) + ByteLevel(add_prefix_space), a template with BOS and EOS

Needs only `tokenizers` from PyPI (this file was run with tokenizers 0.23.3):
    python3 -m venv /tmp/bpe-venv && /tmp/bpe-venv/bin/pip install tokenizers
    /tmp/bpe-venv/bin/python tests/reference/bpe_reference.py
"""
import json
import os
import random

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
from tokenizers import processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "bpe")

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

TRAINING_TEXT = """\
The quick brown fox jumps over the lazy dog. The dog doesn't mind; it's sleeping.
We'll see what they've done, and I'm sure you'd agree that they're right.
Tokenizers split text into words, then words into pieces that a model has seen before.
Numbers like 2024, 3.14159, 1,000,000 and 42 appear in text, as do dates: 2026-12-05.
Café, naïve, résumé, façade, jalapeño, Zürich, São Paulo, Kraków, Ångström, œuvre.
Le cœur a ses raisons que la raison ne connaît point. Über den Wolken. ¿Qué tal?
日本語のテキストも少し含まれています。東京は大きな都市です。
中文文本也在这里。我们今天学习分词器。你好，世界！
한국어 문장도 있습니다. 안녕하세요.
Ελληνικά γράμματα και русский текст тоже здесь. Привет, мир!
Emoji: 😀 😂 👍 🎉 ❤️ 👨‍👩‍👧‍👦 🇫🇷 👋🏽 ✨🚀
def tokenize(text: str) -> list[int]:
    ids = []
    for word in text.split():
        ids.append(vocab.get(word, 0))
    return ids

int main(int argc, char** argv) {
  std::vector<int64_t> v{1, 2, 3};
  return v.size() == 3 ? 0 : 1;
}
    indented by four spaces
\t\ttabs and\ttabs
trailing spaces   
multiple   spaces    between     words
line one
line two

line four after a blank line
Windows line\r\nendings\r\n
""" * 3

HARD_STRINGS = [
    "",
    " ",
    "   ",
    "\n",
    "\n\n\n",
    "\r\n",
    "\t",
    "Hello world",
    " Hello world",
    "Hello  world",
    "Hello world ",
    "Hello world   ",
    "The quick brown fox jumps over the lazy dog.",
    "don't can't won't I'm you're we've they'll she'd it's",
    "DON'T I'M YOU'RE WE'VE THEY'LL SHE'D IT'S",
    "O'Neil's 'quoted' text''",
    "Café naïve résumé façade jalapeño Zürich",
    "Cafe\u0301 nai\u0308ve",  # decomposed accents: NFC composes them
    "Ångström Å Å",
    "日本語のテキスト",
    "中文文本也在这里。",
    "你好，世界！",
    "한국어 문장",
    "Привет, мир! Ελληνικά",
    "😀",
    "😀😂👍",
    "Emoji: 😀 ✨🚀 done",
    "👨‍👩‍👧‍👦 family",
    "🇫🇷🇯🇵 flags",
    "👋🏽 wave",
    "❤️ heart",
    "12345678901234567890",
    "3.14159 1,000,000 2026-12-05",
    "x=42; y = 7*6",
    "١٢٣ ٤٥٦",  # Arabic-Indic digits
    "１２３ full width",
    "Ⅻ roman ½ fraction",
    "def f(x):\n    return x ** 2\n",
    "int main() {\n\treturn 0;\n}\n",
    "if (a && b || !c) { x += 1; }",
    "    four leading spaces",
    "trailing newline\n",
    "a\n\nb\n\n\nc",
    "line\r\nwindows\r\n",
    "mixed \t \n  whitespace",
    "\u00a0non-breaking\u00a0space",
    "ideographic\u3000space",
    "zero\u200bwidth\u200djoiner",
    "control\x00\x01\x1fchars\x7f",
    "replacement \ufffd char",
    "<|endoftext|>",
    "Hello<|endoftext|>world",
    "Hello <|endoftext|> world",
    "<|endoftext|><|endoftext|>",
    "<|endoftext",
    "<|begin_of_text|>Hi<|eot_id|>",
    "<|im_start|>user\nHi<|im_end|>",
    "a <user> said hi",
    "fill   <mask> here",
    "<r>   right-stripped <r>\u3000x",
    "the fox, foxes, firefox, fox_1 and 日fox fox",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "email@example.com https://example.org/path?q=1&r=2#frag",
    "¿Qué tal? ¡Hola!",
    "Le cœur a ses raisons",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙",
    "ﬁ ligature ﬀ",
    "The dog doesn't mind; it's sleeping.\nWe'll see.",
]

# Added tokens per style: (content, special, extra AddedToken options).
STYLES = {
    "gpt2": dict(added=[("<|endoftext|>", True, {}), ("<user>", False, {}),
                        ("<mask>", True, {"lstrip": True}), ("<r>", True, {"rstrip": True}),
                        ("fox", False, {"single_word": True})]),
    "llama3": dict(added=[("<|begin_of_text|>", True, {}), ("<|end_of_text|>", True, {}),
                          ("<|eot_id|>", True, {})]),
    "qwen2": dict(added=[("<|endoftext|>", True, {}), ("<|im_start|>", True, {}),
                         ("<|im_end|>", True, {})]),
    "digits": dict(added=[("<s>", True, {}), ("</s>", True, {})]),
}


def build(style):
    tok = Tokenizer(models.BPE(ignore_merges=(style == "llama3")))
    if style == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    elif style == "llama3":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    elif style == "qwen2":
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    added = STYLES[style]["added"]
    trainer = trainers.BpeTrainer(vocab_size=700, min_frequency=2, show_progress=False,
                                  special_tokens=[c for c, special, _ in added if special],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TRAINING_TEXT.splitlines(keepends=True), trainer)
    for content, special, options in added:
        token = AddedToken(content, special=special, normalized=not special, **options)
        if special:
            tok.add_special_tokens([token])
        else:
            tok.add_tokens([token])
    if style == "gpt2":
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    elif style == "llama3":
        bos = "<|begin_of_text|>"
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
            special_tokens=[(bos, tok.token_to_id(bos))])
    elif style == "digits":
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    return tok


def cases_of(tok, strings):
    """What `tok` gives for each string: ids with and without the template, and decodes."""
    cases = []
    for s in strings:
        with_special = tok.encode(s, add_special_tokens=True).ids
        plain = tok.encode(s, add_special_tokens=False).ids
        cases.append({"text": s, "ids": with_special, "ids_plain": plain,
                      "decode": tok.decode(with_special, skip_special_tokens=False),
                      "decode_skip": tok.decode(with_special, skip_special_tokens=True)})
    return cases


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(35)
    for style in STYLES:
        tok = build(style)
        j = json.loads(tok.to_str())
        if style == "gpt2":  # the older "a b" form of merges, as GPT-2's own file has it
            j["model"]["merges"] = [" ".join(pair) for pair in j["model"]["merges"]]
        text = json.dumps(j, ensure_ascii=False, indent=None, separators=(",", ":"))
        path = os.path.join(OUT, f"{style}.tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        tok = Tokenizer.from_file(path)  # what ember reads, read back
        cases = cases_of(tok, HARD_STRINGS)
        # Id lists that cut multi-byte characters apart: lone tokens, and random runs.
        decodes = []
        emoji_ids = tok.encode("Emoji: 😀 ✨🚀 日本 done", add_special_tokens=False).ids
        for i in emoji_ids:
            decodes.append({"ids": [i], "text": tok.decode([i])})
        size = tok.get_vocab_size(with_added_tokens=True)
        for _ in range(20):
            ids = [rng.randrange(size) for _ in range(rng.randrange(1, 12))]
            decodes.append({"ids": ids, "text": tok.decode(ids, skip_special_tokens=False)})
        ref = {"tokenizers_version": __import__("tokenizers").__version__,
               "vocab_size": size, "cases": cases, "decodes": decodes}
        with open(os.path.join(OUT, f"{style}.reference.json"), "w", encoding="utf-8") as f:
            json.dump(ref, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print(style, "vocab", size, "merges", len(j["model"]["merges"]))


if __name__ == "__main__":
    main()
