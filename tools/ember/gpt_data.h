// tools/ember/gpt_data.h: the GPT's text -- a vocabulary of the sorted distinct bytes of a file,
// its 90/10 train/validation split, and batches of random windows drawn by a splitmix64 counter
// (the reference script in tests/reference/ draws the same windows from the same seed).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::cli {

// The default corpus: fortune cookies from Debian's `fortunes` package.
inline constexpr const char* kDefaultGptText = "/usr/share/games/fortunes/cookie";

// Token ids of a text, one byte each: a vocabulary has at most 256 characters. A corpus costs
// its size in memory once, not eight times (int64) or more.
using Tokens = std::vector<uint8_t>;
using TokenSpan = std::span<const uint8_t>;

class Vocabulary {
 public:
  Vocabulary() = default;
  // The sorted set of the bytes of text.
  static Vocabulary of_text(std::string_view text);
  // From the string chars() gave (as stored in a checkpoint).
  static Vocabulary of_chars(const std::string& chars);
  int64_t size() const { return static_cast<int64_t>(chars_.size()); }
  const std::string& chars() const { return chars_; }
  bool contains(char c) const { return index_[static_cast<unsigned char>(c)] >= 0; }
  // Throws, naming the character and its position, when text has one outside the vocabulary.
  std::vector<int64_t> encode(std::string_view text, const std::string& what) const;
  // The same as one byte per token (a corpus).
  Tokens encode_bytes(std::string_view text, const std::string& what) const;
  char decode(int64_t id) const { return chars_.at(static_cast<size_t>(id)); }

 private:
  std::string chars_;
  int index_[256];
};

// A text file mapped into memory read-only (its pages are the file's, not a copy); a clear
// error when it is not a regular file (a directory, /dev/zero, a pipe), cannot be read or is
// empty.
class TextFile {
 public:
  explicit TextFile(const std::string& path);
  ~TextFile();
  TextFile(const TextFile&) = delete;
  TextFile& operator=(const TextFile&) = delete;
  std::string_view text() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// The encoded text, split 90/10 without a copy: train() is the first 90%, val() the rest.
struct TextSplits {
  Tokens tokens;
  size_t n_train = 0;
  TokenSpan train() const { return TokenSpan(tokens).first(n_train); }
  TokenSpan val() const { return TokenSpan(tokens).subspan(n_train); }
};
// Splits encoded text 90/10; both parts must hold more than block_size tokens.
TextSplits split_text(Tokens tokens, int64_t block_size);

// Seeds of the batch streams of a run: training windows, and the fixed windows each evaluation
// of the train and validation losses uses.
inline constexpr uint64_t kTrainStream = 0, kEvalTrainStream = 1, kEvalValStream = 2;
inline uint64_t stream_seed(uint64_t seed, uint64_t stream) {
  return seed * 1000003 + stream;
}

// splitmix64: the n-th draw of a seed, so a sampler's state is one counter.
uint64_t splitmix64_at(uint64_t seed, uint64_t n);

// Batches of batch_size windows of block_size tokens (x) and the same shifted by one (y), the
// window starts being draws of splitmix64 modulo (tokens - block_size).
class BatchSampler {
 public:
  // skip: windows passed over after each batch (those the other ranks of a data-parallel run
  // take, so that the ranks together draw the windows of one process's batches).
  BatchSampler(TokenSpan tokens, int64_t batch_size, int64_t block_size, uint64_t seed,
               uint64_t position = 0, uint64_t skip = 0);
  // x, y: (batch_size, block_size) int64 on the CPU.
  void next(Tensor& x, Tensor& y);
  uint64_t position() const { return position_; }

 private:
  TokenSpan tokens_;
  int64_t batch_size_, block_size_;
  uint64_t seed_, position_, skip_;
};

}  // namespace ember::cli
