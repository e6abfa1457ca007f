// ember/data/bpe.h: the byte-level BPE tokenizer of a Hugging Face tokenizer.json (GPT-2,
// Llama 3, Qwen2, SmolLM): added and special tokens matched first, the NFC normalizer, the
// pre-tokenizer (Split on a regex with Unicode classes, Digits, ByteLevel with its byte-to-unicode
// mapping), BPE merges by rank, the TemplateProcessing post-processor (BOS/EOS) and the ByteLevel
// decoder, plus a decoder that streams complete UTF-8 as ids arrive -- giving the ids and text the
// `tokenizers` package gives. SentencePiece-style BPE (Metaspace, byte fallback) is not read.
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
  // The bytes `ids` stand for, before any UTF-8 repair (may end inside a character).
  std::string decode_bytes(const std::vector<int64_t>& ids, bool skip_special_tokens = false) const;

  int64_t token_to_id(const std::string& token) const;  // throws for an unknown token
  const std::string& id_to_token(int64_t id) const;     // throws for an unknown id
  bool is_special(int64_t id) const;                    // a special added token
  // Model vocabulary plus the added tokens outside it (`get_vocab_size(with_added_tokens)`).
  int64_t vocab_size() const;

  struct Impl;

 private:
  explicit BpeTokenizer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;  // immutable after loading, but for a word cache it locks
};

// Decodes ids one at a time, returning only whole UTF-8 characters: the bytes of an emoji split
// over several tokens come out with the token that completes it. Everything step() and flush()
// return, joined, equals tokenizer.decode(all ids).
class BpeDecodeStream {
 public:
  explicit BpeDecodeStream(BpeTokenizer tokenizer, bool skip_special_tokens = false)
      : tokenizer_(std::move(tokenizer)), skip_special_(skip_special_tokens) {}
  // The text that `id` completes ("" while a character is still incomplete); bytes that can no
  // longer become UTF-8 come out as U+FFFD.
  std::string step(int64_t id);
  // What is left (an incomplete character, as U+FFFD); the stream can then go on.
  std::string flush();

 private:
  BpeTokenizer tokenizer_;
  bool skip_special_;
  std::string pending_;  // bytes of a character not yet complete
};

}  // namespace ember::data
