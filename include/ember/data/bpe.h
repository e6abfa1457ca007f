// ember/data/bpe.h: the BPE tokenizer of a Hugging Face tokenizer.json -- byte-level BPE (GPT-2,
// Llama 3, Qwen2, SmolLM) and SentencePiece-style BPE with byte fallback (Llama 2, TinyLlama,
// Mistral): added and special tokens matched first, the normalizers NFC, Prepend and Replace, the
// pre-tokenizer (Split on a regex with Unicode classes, Digits, ByteLevel with its byte-to-unicode
// mapping, Metaspace), BPE merges by rank (characters outside the vocabulary as their bytes'
// "<0xAB>" tokens under byte_fallback), the TemplateProcessing post-processor (BOS/EOS) and the
// decoders (ByteLevel; Replace, ByteFallback, Fuse, Strip, Metaspace), plus a decoder that streams
// complete UTF-8 as ids arrive -- giving the ids and text the `tokenizers` package gives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::data {

class BpeTokenizer {
 public:
  // Reads tokenizer.json (model type BPE with a ByteLevel pre-tokenizer); errors name the file
  // and what is missing, malformed or unsupported.
  static BpeTokenizer from_file(const std::string& path);
  // The same from the file's text; `source` names it in errors.
  static BpeTokenizer from_json(const std::string& json_text,
                                const std::string& source = "tokenizer.json");

  // The ids of `text` (valid UTF-8); add_special_tokens applies the post-processor's template
  // (e.g. Llama 3's <|begin_of_text|>). Added and special tokens in the text are always matched.
  std::vector<int64_t> encode(const std::string& text, bool add_special_tokens = true) const;
  // The text of `ids`; bytes that do not form UTF-8 become U+FFFD, as in `tokenizers`.
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = false) const;
  // The bytes `ids` stand for, before any UTF-8 repair (may end inside a character);
  // `continuing`: the ids follow others already decoded, so the decoder's rules for the start of
  // a text (SentencePiece's leading space removed) do not apply.
  std::string decode_bytes(const std::vector<int64_t>& ids, bool skip_special_tokens = false,
                           bool continuing = false) const;

  int64_t token_to_id(const std::string& token) const;  // throws for an unknown token
  const std::string& id_to_token(int64_t id) const;     // throws for an unknown id
  bool is_special(int64_t id) const;                    // a special added token
  // Model vocabulary plus the added tokens outside it (`get_vocab_size(with_added_tokens)`).
  int64_t vocab_size() const;

  struct Impl;

 private:
  friend class BpeDecodeStream;
  explicit BpeTokenizer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;  // immutable after loading, but for a word cache it locks
};

// Decodes ids one at a time, returning only whole UTF-8 characters: the bytes of an emoji split
// over several tokens come out with the token that completes it (with SentencePiece's byte
// fallback, a run of byte tokens comes out with the token after it, or at flush()). Everything
// step() and flush() return, joined, equals tokenizer.decode(all ids).
class BpeDecodeStream {
 public:
  // continuing: the ids follow text already shown (a prompt), so the start-of-text rules of
  // decode_bytes do not apply to the first of them.
  explicit BpeDecodeStream(BpeTokenizer tokenizer, bool skip_special_tokens = false,
                           bool continuing = false)
      : tokenizer_(std::move(tokenizer)),
        skip_special_(skip_special_tokens),
        continuing_(continuing) {}
  // The text that `id` completes ("" while a character is still incomplete); bytes that can no
  // longer become UTF-8 come out as U+FFFD.
  std::string step(int64_t id);
  // What is left (an incomplete character, as U+FFFD); the stream can then go on.
  std::string flush();

 private:
  BpeTokenizer tokenizer_;
  bool skip_special_;
  bool continuing_;      // a token has been decoded (or the stream continues a text)
  std::string pending_;  // bytes of a character not yet complete, or of a run of byte tokens
};

}  // namespace ember::data
