// tools/ember/gpt_data.cpp: vocabulary, text file, split and batches for the GPT.
#include "gpt_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

Vocabulary Vocabulary::of_text(std::string_view text) {
  bool seen[256] = {};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::string chars;
  for (int u = 0; u < 256; ++u)
    if (seen[u]) chars.push_back(static_cast<char>(u));
  return of_chars(chars);
}

Tokens Vocabulary::encode_bytes(std::string_view text, const std::string& what) const {
  Tokens ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int id = index_[static_cast<unsigned char>(text[i])];
    EMBER_CHECK_KIND(Value, id >= 0, what, " has ", printable(text[i]), " at position ", i,
                     ", which is not in the model's vocabulary of ", size(),
                     " characters; use only characters of the training text");
    ids[i] = static_cast<uint8_t>(id);
  }
  return ids;
}

std::vector<int64_t> Vocabulary::encode(std::string_view text, const std::string& what) const {
  const Tokens bytes = encode_bytes(text, what);
  return std::vector<int64_t>(bytes.begin(), bytes.end());
}

TextFile::TextFile(const std::string& path) {
  const std::string hint =
      "; pass a text file with --data (the default needs Debian's `fortunes` package)";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK_KIND(IO, fd >= 0, "cannot read the text file '", path, "': ", std::strerror(errno),
                   hint);
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!regular || st.st_size == 0) {
    ::close(fd);
    EMBER_CHECK_KIND(IO, regular, "'", path, "' is not a regular file (",
                     S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket", ")", hint);
    EMBER_THROW(IO, "the text file '", path, "' is empty", hint);
  }
  size_ = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  EMBER_CHECK_KIND(IO, map != MAP_FAILED, "cannot map the text file '", path,
                   "' into memory: ", std::strerror(map_error));
  ::madvise(map, size_, MADV_SEQUENTIAL);
  data_ = static_cast<const char*>(map);
}

TextFile::~TextFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

TextSplits split_text(Tokens tokens, int64_t block_size) {
  const auto n = static_cast<int64_t>(tokens.size()), n_train = n * 9 / 10;
  EMBER_CHECK_KIND(Value, n_train > block_size && n - n_train > block_size, "the text has ", n,
                   " characters: too short for --block-size ", block_size,
                   " (each of the 90% train and 10% validation parts needs more than a block); "
                   "use a longer text or a smaller --block-size");
  return {std::move(tokens), static_cast<size_t>(n_train)};
}

uint64_t splitmix64_at(uint64_t seed, uint64_t n) {
  uint64_t z = seed + (n + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

BatchSampler::BatchSampler(TokenSpan tokens, int64_t batch_size, int64_t block_size, uint64_t seed,
                           uint64_t position, uint64_t skip)
    : tokens_(tokens),
      batch_size_(batch_size),
      block_size_(block_size),
      seed_(seed),
      position_(position),
      skip_(skip) {}

void BatchSampler::next(Tensor& x, Tensor& y) {
  const auto range = static_cast<uint64_t>(tokens_.size()) - static_cast<uint64_t>(block_size_);
  std::vector<int64_t> xs, ys;
  xs.reserve(static_cast<size_t>(batch_size_ * block_size_));
  ys.reserve(xs.capacity());
  for (int64_t b = 0; b < batch_size_; ++b) {
    auto start = tokens_.begin() + static_cast<int64_t>(splitmix64_at(seed_, position_++) % range);
    xs.insert(xs.end(), start, start + block_size_);
    ys.insert(ys.end(), start + 1, start + 1 + block_size_);
  }
  x = from_vector(xs, Shape{batch_size_, block_size_});
  y = from_vector(ys, Shape{batch_size_, block_size_});
  position_ += skip_;
}

}  // namespace ember::cli
