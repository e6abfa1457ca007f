// data/bpe_unavailable.cpp: the byte-level BPE tokenizer in builds without PCRE2
// (EMBER_MINIMAL_DEPS): loading one throws, saying what to install.
#include "ember/data/bpe.h"
#include "ember/error.h"

namespace ember::data {

struct BpeTokenizer::Impl {};

namespace {
[[noreturn]] void unavailable() {
  EMBER_THROW(NotImplemented,
              "[BpeTokenizer] this ember was built without PCRE2 (EMBER_MINIMAL_DEPS), which the "
              "byte-level BPE tokenizer's pre-tokenizer regexes need; install libpcre2-dev and "
              "rebuild");
}
}  // namespace

BpeTokenizer BpeTokenizer::from_file(const std::string&) {
  unavailable();
}
BpeTokenizer BpeTokenizer::from_json(const std::string&, const std::string&) {
  unavailable();
}
std::vector<int64_t> BpeTokenizer::encode(const std::string&, bool) const {
  unavailable();
}
std::string BpeTokenizer::decode(const std::vector<int64_t>&, bool) const {
  unavailable();
}
std::string BpeTokenizer::decode_bytes(const std::vector<int64_t>&, bool, bool) const {
  unavailable();
}
int64_t BpeTokenizer::token_to_id(const std::string&) const {
  unavailable();
}
const std::string& BpeTokenizer::id_to_token(int64_t) const {
  unavailable();
}
bool BpeTokenizer::is_special(int64_t) const {
  unavailable();
}
int64_t BpeTokenizer::vocab_size() const {
  unavailable();
}
std::string BpeDecodeStream::step(int64_t) {
  unavailable();
}
std::string BpeDecodeStream::flush() {
  unavailable();
}

}  // namespace ember::data
