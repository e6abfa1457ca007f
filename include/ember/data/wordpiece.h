// ember/data/wordpiece.h: the BERT tokenizer of a Hugging Face tokenizer.json -- the
// BertNormalizer (control characters dropped, whitespace made spaces, spaces around CJK
// ideographs, accents stripped by NFD, lower-casing), the BertPreTokenizer (whitespace and
// punctuation splits), greedy longest-match WordPiece with its "##" continuation prefix, and
// [CLS] ... [SEP] with truncation -- giving the ids the `tokenizers` package gives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::data {

struct Encoding {
  std::vector<int64_t> ids;         // [CLS] tokens... [SEP]
  std::vector<std::string> tokens;  // the same as strings
};

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;  // tokenizer.json's null means: as lowercase
  bool lowercase = true;
};

class WordPieceTokenizer {
 public:
  // Reads tokenizer.json (model type WordPiece, normalizer BertNormalizer or none,
  // pre_tokenizer BertPreTokenizer); errors name the file and what is missing or unsupported.
  static WordPieceTokenizer from_file(const std::string& path);
  // From a vocabulary (token -> id) and options, for tests and vocab.txt users.
  WordPieceTokenizer(std::unordered_map<std::string, int64_t> vocab,
                     BertNormalizerOptions normalizer = {}, std::string unk_token = "[UNK]",
                     std::string prefix = "##", int64_t max_input_chars_per_word = 100);

  // The normalized text split into words and punctuation (before WordPiece).
  std::vector<std::string> pre_tokenize(const std::string& text) const;
  // [CLS] + WordPiece tokens + [SEP], the tokens cut so that the whole is at most max_length
  // (0: no limit). Throws on text that is not valid UTF-8.
  Encoding encode(const std::string& text, int64_t max_length = 0) const;
  // Several texts padded to the longest with pad_id: input_ids and attention_mask (N, L) int64.
  std::pair<Tensor, Tensor> encode_batch(const std::vector<std::string>& texts,
                                         int64_t max_length = 0) const;

  int64_t token_to_id(const std::string& token) const;  // throws for an unknown token
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  // The largest id a token (or pad_id) has: a model's embedding table must be larger.
  int64_t max_id() const {
    int64_t m = pad_id;
    for (const auto& [token, id] : vocab_) m = std::max(m, id);
    return m;
  }
  // tokenizer.json's truncation.max_length (0 when it sets none).
  int64_t truncation_max_length = 0;
  int64_t pad_id = 0;

 private:
  std::unordered_map<std::string, int64_t> vocab_;
  BertNormalizerOptions normalizer_;
  std::string unk_, prefix_;
  int64_t max_chars_;
  void word_piece(const std::string& word, Encoding& out) const;
};

}  // namespace ember::data
