// data/wordpiece_unavailable.cpp: the WordPiece tokenizer in builds without utf8proc
// (EMBER_MINIMAL_DEPS): constructing one throws, saying what to install.
#include "ember/data/wordpiece.h"
#include "ember/error.h"

namespace ember::data {

namespace {
[[noreturn]] void unavailable() {
  throw Error(ErrorKind::NotImplemented,
              "[WordPieceTokenizer] this ember was built without utf8proc (EMBER_MINIMAL_DEPS); "
              "install libutf8proc-dev and rebuild");
}
}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::unordered_map<std::string, int64_t>,
                                       BertNormalizerOptions, std::string, std::string, int64_t) {
  unavailable();
}
WordPieceTokenizer WordPieceTokenizer::from_file(const std::string&) {
  unavailable();
}
std::vector<std::string> WordPieceTokenizer::pre_tokenize(const std::string&) const {
  unavailable();
}
Encoding WordPieceTokenizer::encode(const std::string&, int64_t) const {
  unavailable();
}
std::pair<Tensor, Tensor> WordPieceTokenizer::encode_batch(const std::vector<std::string>&,
                                                           int64_t) const {
  unavailable();
}
int64_t WordPieceTokenizer::token_to_id(const std::string&) const {
  unavailable();
}
void WordPieceTokenizer::word_piece(const std::string&, Encoding&) const {
  unavailable();
}

}  // namespace ember::data
