// tools/ember/gpt_data.cpp: vocabulary, text file, split and batches for the GPT.
#include "gpt_data.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "ember/creation.h"
#include "ember/error.h"

namespace ember::cli {

namespace {

std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 32 && u < 127) return std::string("'") + c + "'";
  std::ostringstream os;
  os << "byte " << static_cast<int>(u);
  return os.str();
}

}  // namespace

Vocabulary Vocabulary::of_chars(const std::string& chars) {
  Vocabulary v;
  std::fill(std::begin(v.index_), std::end(v.index_), -1);
  for (size_t i = 0; i < chars.size(); ++i) {
    const auto u = static_cast<unsigned char>(chars[i]);
    EMBER_CHECK_KIND(Value, i == 0 || static_cast<unsigned char>(chars[i - 1]) < u,
                     "a vocabulary must be sorted distinct characters; ", printable(chars[i]),
                     " at position ", i, " breaks that");
    v.index_[u] = static_cast<int>(i);
  }
  v.chars_ = chars;
  return v;
}

Vocabulary Vocabulary::of_text(const std::string& text) {
  bool seen[256] = {};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::string chars;
  for (int u = 0; u < 256; ++u)
    if (seen[u]) chars.push_back(static_cast<char>(u));
  return of_chars(chars);
}

std::vector<int64_t> Vocabulary::encode(const std::string& text, const std::string& what) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    EMBER_CHECK_KIND(Value, contains(text[i]), what, " has ", printable(text[i]), " at position ",
                     i, ", which is not in the model's vocabulary of ", size(),
                     " characters; use only characters of the training text");
    ids.push_back(index_[static_cast<unsigned char>(text[i])]);
  }
  return ids;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK_KIND(IO, in.good(), "cannot read the text file '", path,
                   "'; pass an existing file with --data (the default needs Debian's `fortunes` "
                   "package)");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EMBER_CHECK_KIND(IO, !text.empty(), "the text file '", path, "' is empty");
  return text;
}

TextSplits split_text(const std::vector<int64_t>& tokens, int64_t block_size) {
  const auto n = static_cast<int64_t>(tokens.size()), n_train = n * 9 / 10;
  EMBER_CHECK_KIND(Value, n_train > block_size && n - n_train > block_size, "the text has ", n,
                   " characters: too short for --block-size ", block_size,
                   " (each of the 90% train and 10% validation parts needs more than a block); "
                   "use a longer text or a smaller --block-size");
  return {std::vector<int64_t>(tokens.begin(), tokens.begin() + n_train),
          std::vector<int64_t>(tokens.begin() + n_train, tokens.end())};
}

uint64_t splitmix64_at(uint64_t seed, uint64_t n) {
  uint64_t z = seed + (n + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

BatchSampler::BatchSampler(const std::vector<int64_t>& tokens, int64_t batch_size,
                           int64_t block_size, uint64_t seed, uint64_t position, uint64_t skip)
    : tokens_(&tokens),
      batch_size_(batch_size),
      block_size_(block_size),
      seed_(seed),
      position_(position),
      skip_(skip) {}

void BatchSampler::next(Tensor& x, Tensor& y) {
  const auto range = static_cast<uint64_t>(tokens_->size()) - static_cast<uint64_t>(block_size_);
  std::vector<int64_t> xs, ys;
  xs.reserve(static_cast<size_t>(batch_size_ * block_size_));
  ys.reserve(xs.capacity());
  for (int64_t b = 0; b < batch_size_; ++b) {
    auto start = tokens_->begin() + static_cast<int64_t>(splitmix64_at(seed_, position_++) % range);
    xs.insert(xs.end(), start, start + block_size_);
    ys.insert(ys.end(), start + 1, start + 1 + block_size_);
  }
  x = from_vector(xs, Shape{batch_size_, block_size_});
  y = from_vector(ys, Shape{batch_size_, block_size_});
  position_ += skip_;
}

}  // namespace ember::cli
