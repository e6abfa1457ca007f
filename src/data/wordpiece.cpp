// data/wordpiece.cpp: the BERT tokenizer of ember/data/wordpiece.h. Unicode properties
// (categories, canonical decomposition, lower case) come from utf8proc; tokenizer.json is read
// with nlohmann-json.
#include "ember/data/wordpiece.h"

#include <utf8proc.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/creation.h"
#include "ember/error.h"

namespace ember::data {

namespace {

using Codepoints = std::vector<int32_t>;

Codepoints decode_utf8(const std::string& text) {
  Codepoints out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    EMBER_CHECK(n > 0 && cp >= 0, "[WordPieceTokenizer] the text is not valid UTF-8 (at byte ",
                text.size() - static_cast<size_t>(left), ")");
    out.push_back(cp);
    p += n;
    left -= n;
  }
  return out;
}

void append_utf8(int32_t cp, std::string& out) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// The two-letter Unicode general category ("Mn", "Zs", "Cc", ...).
std::string category(int32_t cp) {
  return utf8proc_category_string(cp);
}
bool is_whitespace(int32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029 ||
         category(cp) == "Zs";
}
bool is_control(int32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return category(cp)[0] == 'C';
}
bool is_punctuation(int32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126))
    return true;
  return category(cp)[0] == 'P';
}
// The CJK Unified Ideographs blocks (and their extensions and compatibility forms).
bool is_chinese(int32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

Codepoints normalize(const Codepoints& in, const BertNormalizerOptions& o) {
  Codepoints out;
  out.reserve(in.size());
  for (int32_t cp : in) {
    if (o.clean_text) {
      if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
      if (is_whitespace(cp)) cp = ' ';
    }
    if (o.handle_chinese_chars && is_chinese(cp)) {
      out.insert(out.end(), {' ', cp, ' '});
      continue;
    }
    out.push_back(cp);
  }
  if (o.strip_accents) {
    Codepoints stripped;
    for (int32_t cp : out) {
      utf8proc_int32_t parts[8];
      int boundclass = 0;
      const utf8proc_ssize_t n =
          utf8proc_decompose_char(cp, parts, 8, UTF8PROC_DECOMPOSE, &boundclass);
      if (n <= 0 || n > 8) {
        stripped.push_back(cp);
        continue;
      }
      for (utf8proc_ssize_t i = 0; i < n; ++i)
        if (category(parts[i]) != "Mn") stripped.push_back(parts[i]);
    }
    out = std::move(stripped);
  }
  if (o.lowercase)
    for (int32_t& cp : out) cp = utf8proc_tolower(cp);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK_KIND(IO, in.good(), "[WordPieceTokenizer] cannot open ", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::unordered_map<std::string, int64_t> vocab,
                                       BertNormalizerOptions normalizer, std::string unk_token,
                                       std::string prefix, int64_t max_input_chars_per_word)
    : vocab_(std::move(vocab)),
      normalizer_(normalizer),
      unk_(std::move(unk_token)),
      prefix_(std::move(prefix)),
      max_chars_(max_input_chars_per_word) {
  for (const char* special : {"[CLS]", "[SEP]"})
    EMBER_CHECK(vocab_.count(special), "[WordPieceTokenizer] the vocabulary lacks ", special);
  EMBER_CHECK(vocab_.count(unk_), "[WordPieceTokenizer] the vocabulary lacks the unknown token ",
              unk_);
  if (vocab_.count("[PAD]")) pad_id = vocab_.at("[PAD]");
}

namespace {

// tokenizer.json's fields (nlohmann's type_error for a wrong type).
WordPieceTokenizer tokenizer_from_json(const nlohmann::json& j, const std::string& path) {
  EMBER_CHECK_KIND(Value, j.is_object(), "[WordPieceTokenizer] ", path, " must hold a JSON object");
  const auto& model = j.value("model", nlohmann::json::object());
  EMBER_CHECK(model.value("type", "") == "WordPiece", "[WordPieceTokenizer] ", path, " holds a ",
              model.value("type", "(no model type)"),
              " model; only WordPiece (BERT) tokenizers are supported");
  std::unordered_map<std::string, int64_t> vocab;
  EMBER_CHECK_KIND(Value, model.contains("vocab") && model["vocab"].is_object(),
                   "[WordPieceTokenizer] ", path,
                   ": \"model\".\"vocab\" must be an object of "
                   "token: id");
  for (const auto& [token, id] : model.at("vocab").items()) {
    EMBER_CHECK_KIND(
        Value,
        id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < (int64_t{1} << 31),
        "[WordPieceTokenizer] ", path, ": the id of token \"", token,
        "\" must be a whole number from 0 to 2^31 - 1, not ", id.dump());
    vocab[token] = id.get<int64_t>();
  }
  BertNormalizerOptions norm{false, false, false, false};
  const auto& n = j.value("normalizer", nlohmann::json());
  if (!n.is_null()) {
    EMBER_CHECK(n.value("type", "") == "BertNormalizer", "[WordPieceTokenizer] ", path,
                ": normalizer ", n.value("type", "?"), " is not supported (BertNormalizer is)");
    norm.clean_text = n.value("clean_text", true);
    norm.handle_chinese_chars = n.value("handle_chinese_chars", true);
    norm.lowercase = n.value("lowercase", true);
    const auto& strip = n.value("strip_accents", nlohmann::json());
    norm.strip_accents = strip.is_null() ? norm.lowercase : strip.get<bool>();
  }
  const auto& pre = j.value("pre_tokenizer", nlohmann::json());
  EMBER_CHECK(pre.is_null() || pre.value("type", "") == "BertPreTokenizer", "[WordPieceTokenizer] ",
              path, ": pre_tokenizer ", pre.value("type", "?"),
              " is not supported (BertPreTokenizer is)");
  WordPieceTokenizer t(std::move(vocab), norm, model.value("unk_token", "[UNK]"),
                       model.value("continuing_subword_prefix", "##"),
                       model.value("max_input_chars_per_word", 100));
  const auto& trunc = j.value("truncation", nlohmann::json());
  if (trunc.is_object()) t.truncation_max_length = trunc.value("max_length", 0);
  const auto& pad = j.value("padding", nlohmann::json());
  if (pad.is_object()) t.pad_id = pad.value("pad_id", t.pad_id);
  EMBER_CHECK_KIND(Value, t.truncation_max_length >= 0 && t.pad_id >= 0, "[WordPieceTokenizer] ",
                   path, ": truncation.max_length (", t.truncation_max_length,
                   ") and padding.pad_id (", t.pad_id, ") must not be negative");
  return t;
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::IO, "[WordPieceTokenizer] " + path + " is not valid JSON: " + e.what());
  }
  // A field of the wrong type (nlohmann's type_error) is an error naming the file.
  try {
    return tokenizer_from_json(j, path);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Value, "[WordPieceTokenizer] " + path +
                                      " has a field of the wrong type or a missing one: " +
                                      e.what() + "; it is not a tokenizer.json of `tokenizers`");
  }
}

std::vector<std::string> WordPieceTokenizer::pre_tokenize(const std::string& text) const {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (int32_t cp : normalize(decode_utf8(text), normalizer_)) {
    if (is_whitespace(cp)) {
      flush();
    } else if (is_punctuation(cp)) {
      flush();
      append_utf8(cp, word);
      flush();
    } else {
      append_utf8(cp, word);
    }
  }
  flush();
  return words;
}

void WordPieceTokenizer::word_piece(const std::string& word, Encoding& out) const {
  const Codepoints cps = decode_utf8(word);
  const auto n = static_cast<int64_t>(cps.size());
  auto piece = [&](int64_t from, int64_t to) {
    std::string s = from > 0 ? prefix_ : "";
    for (int64_t i = from; i < to; ++i) append_utf8(cps[i], s);
    return s;
  };
  std::vector<std::string> pieces;
  bool known = n <= max_chars_;
  for (int64_t start = 0; known && start < n;) {
    int64_t end = n;
    for (; end > start; --end)
      if (vocab_.count(piece(start, end))) break;
    if (end == start) {
      known = false;
      break;
    }
    pieces.push_back(piece(start, end));
    start = end;
  }
  if (!known) pieces = {unk_};
  for (std::string& p : pieces) {
    out.ids.push_back(vocab_.at(p));
    out.tokens.push_back(std::move(p));
  }
}

Encoding WordPieceTokenizer::encode(const std::string& text, int64_t max_length) const {
  EMBER_CHECK(max_length == 0 || max_length >= 2, "[WordPieceTokenizer] max_length ", max_length,
              " leaves no room for [CLS] and [SEP]");
  Encoding body;
  for (const std::string& w : pre_tokenize(text)) word_piece(w, body);
  const size_t room = max_length > 0 ? static_cast<size_t>(max_length - 2) : body.ids.size();
  Encoding out;
  out.ids.push_back(vocab_.at("[CLS]"));
  out.tokens.emplace_back("[CLS]");
  for (size_t i = 0; i < std::min(room, body.ids.size()); ++i) {
    out.ids.push_back(body.ids[i]);
    out.tokens.push_back(body.tokens[i]);
  }
  out.ids.push_back(vocab_.at("[SEP]"));
  out.tokens.emplace_back("[SEP]");
  return out;
}

std::pair<Tensor, Tensor> WordPieceTokenizer::encode_batch(const std::vector<std::string>& texts,
                                                           int64_t max_length) const {
  std::vector<Encoding> encodings;
  size_t longest = 0;
  for (const std::string& t : texts) {
    encodings.push_back(encode(t, max_length));
    longest = std::max(longest, encodings.back().ids.size());
  }
  const auto n = static_cast<int64_t>(texts.size()), l = static_cast<int64_t>(longest);
  std::vector<int64_t> ids(static_cast<size_t>(n * l), pad_id), mask(ids.size(), 0);
  for (size_t i = 0; i < encodings.size(); ++i)
    for (size_t j = 0; j < encodings[i].ids.size(); ++j) {
      ids[i * longest + j] = encodings[i].ids[j];
      mask[i * longest + j] = 1;
    }
  return {from_vector<int64_t>(ids, Shape{n, l}), from_vector<int64_t>(mask, Shape{n, l})};
}

int64_t WordPieceTokenizer::token_to_id(const std::string& token) const {
  auto it = vocab_.find(token);
  EMBER_CHECK_KIND(Index, it != vocab_.end(), "[WordPieceTokenizer] '", token,
                   "' is not in the vocabulary");
  return it->second;
}

}  // namespace ember::data
