// data/bpe.cpp: the byte-level BPE tokenizer of ember/data/bpe.h -- tokenizer.json read with
// nlohmann-json, added tokens matched leftmost-longest, merges applied lowest rank first with a
// priority queue per word (and a cache of words), the post-processor's templates, the ByteLevel
// decoder and the streaming decoder. The regexes and byte mapping are in data/bpe_text.cpp.
#include "ember/data/bpe.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "data/bpe_text.h"
#include "ember/error.h"

namespace ember::data {

namespace {

using nlohmann::json;

struct AddedToken {
  std::string content;
  std::string pattern;  // as matched: NFC of the content for normalized tokens under NFC
  int32_t id = 0;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = false;
};

// One element of a post-processor template: fixed ids, or the encoded text ($A).
struct TemplatePiece {
  bool is_text = false;
  std::vector<int32_t> ids;
};

// A word cache of this many entries at most (then words are merged each time).
constexpr size_t kCacheCapacity = 10000;
constexpr size_t kCacheMaxWordBytes = 256;

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

struct BpeTokenizer::Impl {
  std::string source;
  // The model.
  std::unordered_map<std::string, int32_t> vocab;
  std::vector<std::string> model_tokens;  // by id ("" where no token has the id)
  std::vector<char> model_has;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges;  // (a, b) -> (rank, merged)
  std::array<int32_t, 0x144> char_id{};  // byte-level character -> id (-1 none)
  bool ignore_merges = false, fuse_unk = false;
  int32_t unk_id = -1;
  // Added tokens: those matched on the raw text, and those matched after normalization.
  std::vector<AddedToken> added;
  // Indices into `added` by first byte, longest first: matched on the raw text, and after
  // normalization.
  using AddedIndex = std::array<std::vector<size_t>, 256>;
  AddedIndex raw_added, normalized_added;
  bool any_raw = false, any_normalized = false;
  std::unordered_map<int32_t, size_t> added_by_id;
  std::unique_ptr<bpe::Regex> word_char;  // \w, for single_word tokens
  // The normalizer: NFC, Prepend (`to` before non-empty text), Replace (`from` -> `to`), in order.
  struct NormalizerStep {
    enum class Kind { Nfc, Prepend, Replace } kind;
    std::string from, to;
  };
  std::vector<NormalizerStep> normalizers;
  std::string normalize(std::string text) const;
  // Byte-level BPE (a ByteLevel pre-tokenizer: tokens spell bytes as GPT-2's characters) or
  // SentencePiece-style BPE (tokens spell text, a space as "\u2581"; with byte_fallback, a
  // character outside the vocabulary is its bytes' tokens "<0xAB>").
  bool byte_level = false, byte_fallback = false;
  std::array<int32_t, 256> byte_token{};  // "<0xAB>" -> id (-1 none)
  // The SentencePiece-style decoder: per token, Replace steps and Metaspace's replacement; byte
  // tokens as their bytes (ByteFallback); the text's first `strip_leading` spaces removed (Strip
  // after Fuse, or Metaspace's prepended space).
  std::vector<std::pair<std::string, std::string>> decode_replace;
  bool decode_bytes_of_byte_tokens = false;
  int strip_leading = 0;
  int byte_of_token(int64_t id) const;  // the byte of a "<0xAB>" token, else -1
  // A run of byte tokens' bytes as ByteFallback decodes it: the text, or U+FFFD per byte when
  // the run is not UTF-8.
  static std::string byte_run_text(const std::string& run);
  // `text` without the first strip_leading spaces (the start of a decoded text).
  std::string strip_start(std::string text) const;
  std::string token_text(const std::string& token) const;
  std::vector<bpe::PreTokenizerStep> steps;
  std::vector<std::vector<TemplatePiece>> templates;  // applied in turn with add_special_tokens
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;

  template <class Fn>
  void split_added(std::string_view text, const AddedIndex& tokens, bool any, Fn&& emit) const;
  void encode_word(const std::string& word, std::vector<int32_t>& out) const;
  std::vector<int32_t> merge_word(const std::string& word) const;
  const std::string* token_of(int64_t id) const;
};

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  EMBER_THROW(Value, "[BpeTokenizer] ", source, ": ", what);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK_KIND(IO, in.good(), "[BpeTokenizer] cannot open ", path,
                   "; pass the path of a tokenizer.json file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_whitespace_at(std::string_view s, size_t i) {
  return bpe::is_unicode_whitespace(bpe::utf8_decode(s, i));
}

// The start of the UTF-8 character that ends at byte `end` (end > 0).
size_t char_start_before(std::string_view s, size_t end) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

void parse_normalizer(const json& n, BpeTokenizer::Impl& m) {
  if (n.is_null()) return;
  using Step = BpeTokenizer::Impl::NormalizerStep;
  const std::string type = n.at("type").get<std::string>();
  if (type == "NFC") {
    m.normalizers.push_back({Step::Kind::Nfc, "", ""});
  } else if (type == "Sequence") {
    for (const json& each : n.at("normalizers")) parse_normalizer(each, m);
  } else if (type == "Prepend") {
    m.normalizers.push_back({Step::Kind::Prepend, "", n.at("prepend").get<std::string>()});
  } else if (type == "Replace") {
    const json& pattern = n.at("pattern");
    EMBER_CHECK(pattern.contains("String") && !pattern["String"].get<std::string>().empty(),
                "[BpeTokenizer] ", m.source, ": a Replace normalizer's pattern must be ",
                "{\"String\": \"...\"} (not empty); regex patterns are not supported, got ",
                pattern.dump());
    m.normalizers.push_back({Step::Kind::Replace, pattern["String"].get<std::string>(),
                             n.at("content").get<std::string>()});
  } else {
    fail(m.source, "normalizer " + type +
                       " is not supported by BpeTokenizer (NFC, Prepend and Replace are, alone or "
                       "in a Sequence)");
  }
}

bpe::SplitBehavior parse_behavior(const std::string& b, const std::string& source) {
  if (b == "Removed") return bpe::SplitBehavior::Removed;
  if (b == "Isolated") return bpe::SplitBehavior::Isolated;
  if (b == "MergedWithPrevious") return bpe::SplitBehavior::MergedWithPrevious;
  if (b == "MergedWithNext") return bpe::SplitBehavior::MergedWithNext;
  if (b == "Contiguous") return bpe::SplitBehavior::Contiguous;
  fail(source, "Split behavior \"" + b +
                   "\" is unknown (Removed, Isolated, MergedWithPrevious, MergedWithNext or "
                   "Contiguous)");
}

void parse_pre_tokenizer(const json& p, BpeTokenizer::Impl& m, bool& byte_level,
                         std::shared_ptr<const bpe::Regex>& gpt2) {
  const std::string type = p.at("type").get<std::string>();
  bpe::PreTokenizerStep step;
  if (type == "Sequence") {
    for (const json& each : p.at("pretokenizers")) parse_pre_tokenizer(each, m, byte_level, gpt2);
    return;
  }
  if (type == "Split") {
    const json& pattern = p.at("pattern");
    const bool regex = pattern.contains("Regex");
    EMBER_CHECK(regex || pattern.contains("String"), "[BpeTokenizer] ", m.source,
                ": a Split pre_tokenizer's pattern must be {\"Regex\": ...} or {\"String\": ...}, "
                "not ",
                pattern.dump());
    step.regex = std::make_shared<const bpe::Regex>(
        pattern.at(regex ? "Regex" : "String").get<std::string>(), !regex,
        m.source + ": pre_tokenizer Split");
    step.behavior = parse_behavior(p.at("behavior").get<std::string>(), m.source);
    step.invert = p.value("invert", false);
  } else if (type == "Digits") {
    // Rust's char::is_numeric (categories Nd, Nl, No) is \p{N}; runs of digits stay together
    // unless individual_digits.
    step.regex = std::make_shared<const bpe::Regex>(
        p.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", false,
        m.source + ": pre_tokenizer Digits");
  } else if (type == "ByteLevel") {
    byte_level = true;
    step.kind = bpe::PreTokenizerStep::Kind::ByteLevel;
    step.add_prefix_space = p.value("add_prefix_space", true);
    if (p.value("use_regex", true)) {
      if (!gpt2)
        gpt2 = std::make_shared<const bpe::Regex>(bpe::kGpt2Pattern, false,
                                                  m.source + ": pre_tokenizer ByteLevel");
      step.regex = gpt2;
    }
  } else if (type == "Metaspace") {
    step.kind = bpe::PreTokenizerStep::Kind::Metaspace;
    step.replacement = p.value("replacement", std::string("\u2581"));
    EMBER_CHECK(!step.replacement.empty(), "[BpeTokenizer] ", m.source,
                ": the Metaspace pre_tokenizer's replacement is empty");
    const std::string scheme = p.contains("prepend_scheme") ? p["prepend_scheme"].get<std::string>()
                               : p.value("add_prefix_space", true) ? "always"
                                                                   : "never";
    using Prepend = bpe::PreTokenizerStep::Prepend;
    if (scheme == "always")
      step.prepend = Prepend::Always;
    else if (scheme == "first")
      step.prepend = Prepend::First;
    else if (scheme == "never")
      step.prepend = Prepend::Never;
    else
      fail(m.source,
           "Metaspace prepend_scheme \"" + scheme + "\" is unknown (always, first or never)");
    if (p.value("split", true))
      step.regex = std::make_shared<const bpe::Regex>(step.replacement, true,
                                                      m.source + ": pre_tokenizer Metaspace");
  } else {
    fail(m.source, "pre_tokenizer " + type +
                       " is not supported by BpeTokenizer (ByteLevel, Metaspace, Split, Digits and "
                       "Sequence are)");
  }
  m.steps.push_back(std::move(step));
}

std::vector<int32_t> template_ids(const json& special_tokens, const std::string& name,
                                  const BpeTokenizer::Impl& m) {
  EMBER_CHECK(special_tokens.contains(name), "[BpeTokenizer] ", m.source,
              ": the post_processor's template names the special token \"", name,
              "\" but its special_tokens do not list it");
  std::vector<int32_t> ids;
  for (const json& id : special_tokens.at(name).at("ids")) ids.push_back(id.get<int32_t>());
  return ids;
}

void parse_post_processor(const json& p, BpeTokenizer::Impl& m) {
  if (p.is_null()) return;
  const std::string type = p.at("type").get<std::string>();
  if (type == "ByteLevel") return;  // offsets only
  if (type == "Sequence") {
    for (const json& each : p.at("processors")) parse_post_processor(each, m);
    return;
  }
  std::vector<TemplatePiece> pieces;
  if (type == "TemplateProcessing") {
    const json specials = p.value("special_tokens", json::object());
    for (const json& piece : p.at("single")) {
      if (piece.contains("SpecialToken")) {
        pieces.push_back(
            {false, template_ids(specials, piece["SpecialToken"].at("id").get<std::string>(), m)});
      } else {
        const std::string seq = piece.at("Sequence").at("id").get<std::string>();
        EMBER_CHECK(seq == "A", "[BpeTokenizer] ", m.source,
                    ": the post_processor's single template holds sequence $", seq,
                    "; a single text can only be $A");
        pieces.push_back({true, {}});
      }
    }
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    pieces.push_back({false, {p.at("cls").at(1).get<int32_t>()}});
    pieces.push_back({true, {}});
    pieces.push_back({false, {p.at("sep").at(1).get<int32_t>()}});
  } else {
    fail(m.source, "post_processor " + type +
                       " is not supported by BpeTokenizer (TemplateProcessing, ByteLevel, "
                       "RobertaProcessing, BertProcessing and Sequence are)");
  }
  m.templates.push_back(std::move(pieces));
}

// The decoder, checked against the kind of tokenizer: ByteLevel for byte-level BPE; Replace,
// ByteFallback, Fuse, Strip (of leading spaces, after Fuse) and Metaspace for SentencePiece-style.
void parse_decoder(const json& d, BpeTokenizer::Impl& m, bool& fused) {
  const std::string type = d.is_null() ? "null" : d.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const json& each : d.at("decoders")) parse_decoder(each, m, fused);
    return;
  }
  if (m.byte_level) {
    if (type == "ByteLevel") return;
    fail(m.source, "decoder " + type +
                       " is not supported for a byte-level BPE tokenizer (ByteLevel is: a "
                       "tokenizer.json with a ByteLevel pre_tokenizer names it as its decoder)");
  }
  if (type == "null") return;  // the tokens' text joined
  if (type == "Replace") {
    const json& pattern = d.at("pattern");
    EMBER_CHECK(pattern.contains("String") && !pattern["String"].get<std::string>().empty(),
                "[BpeTokenizer] ", m.source,
                ": a Replace decoder's pattern must be {\"String\": \"...\"}, got ",
                pattern.dump());
    m.decode_replace.emplace_back(pattern["String"].get<std::string>(),
                                  d.at("content").get<std::string>());
  } else if (type == "ByteFallback") {
    m.decode_bytes_of_byte_tokens = true;
  } else if (type == "Fuse") {
    fused = true;
  } else if (type == "Strip") {
    const std::string content = d.at("content").get<std::string>();
    const int start = d.value("start", 0), stop = d.value("stop", 0);
    EMBER_CHECK(
        content == " " && stop == 0 && start >= 0 && start <= 16 && (fused || start == 0),
        "[BpeTokenizer] ", m.source, ": the Strip decoder ", d.dump(),
        " is not supported (leading spaces of the fused text are: after Fuse, content \" \", "
        "stop 0)");
    m.strip_leading += start;
  } else if (type == "Metaspace") {
    const std::string replacement = d.value("replacement", std::string("\u2581"));
    m.decode_replace.emplace_back(replacement, " ");
    const std::string scheme = d.contains("prepend_scheme") ? d["prepend_scheme"].get<std::string>()
                               : d.value("add_prefix_space", true) ? "always"
                                                                   : "never";
    if (scheme != "never") m.strip_leading += 1;
  } else {
    fail(m.source, "decoder " + type +
                       " is not supported for a SentencePiece-style BPE tokenizer (Replace, "
                       "ByteFallback, Fuse, Strip and Metaspace are)");
  }
}

void parse_model(const json& model, BpeTokenizer::Impl& m) {
  EMBER_CHECK(model.is_object(), "[BpeTokenizer] ", m.source, " has no \"model\" object");
  const std::string type = model.value("type", model.contains("merges") ? "BPE" : "");
  EMBER_CHECK(type == "BPE", "[BpeTokenizer] ", m.source, " holds a ",
              type.empty() ? "(no model type)" : type,
              " model; BpeTokenizer reads BPE models (WordPieceTokenizer reads WordPiece ones)");
  m.byte_fallback = model.value("byte_fallback", false);
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json& a = model.contains(affix) ? model[affix] : json();
    EMBER_CHECK(a.is_null() || a.get<std::string>().empty(), "[BpeTokenizer] ", m.source,
                ": the model's ", affix, " (", a.dump(),
                ") is not supported; byte-level and SentencePiece-style BPE have none");
  }
  const json& dropout = model.contains("dropout") ? model["dropout"] : json();
  EMBER_CHECK(dropout.is_null() || dropout.get<double>() == 0.0, "[BpeTokenizer] ", m.source,
              ": BPE dropout (", dropout.dump(),
              ") makes encoding random and is not supported; set it to null");
  m.ignore_merges = model.value("ignore_merges", false);
  m.fuse_unk = model.value("fuse_unk", false);

  EMBER_CHECK(model.contains("vocab") && model["vocab"].is_object(), "[BpeTokenizer] ", m.source,
              ": \"model\".\"vocab\" must be an object of token: id");
  for (const auto& [token, id] : model["vocab"].items()) {
    EMBER_CHECK(
        id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < (int64_t{1} << 31),
        "[BpeTokenizer] ", m.source, ": the id of token \"", token,
        "\" must be a whole number from 0 to 2^31 - 1, not ", id.dump());
    const auto i = id.get<int32_t>();
    m.vocab[token] = i;
    if (static_cast<size_t>(i) >= m.model_tokens.size()) {
      m.model_tokens.resize(static_cast<size_t>(i) + 1);
      m.model_has.resize(static_cast<size_t>(i) + 1, 0);
    }
    m.model_tokens[i] = token;
    m.model_has[i] = 1;
  }
  const json& unk = model.contains("unk_token") ? model["unk_token"] : json();
  if (!unk.is_null()) {
    auto it = m.vocab.find(unk.get<std::string>());
    EMBER_CHECK(it != m.vocab.end(), "[BpeTokenizer] ", m.source, ": the unk_token ", unk.dump(),
                " is not in the vocabulary");
    m.unk_id = it->second;
  }
  m.byte_token.fill(-1);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = m.vocab.find(name);
    if (it != m.vocab.end()) m.byte_token[b] = it->second;
  }
  m.char_id.fill(-1);
  for (uint32_t cp = 0; cp < 0x144; ++cp) {
    const int b = bpe::byte_of_char(cp);
    if (b < 0) continue;
    auto it = m.vocab.find(bpe::byte_char(static_cast<unsigned char>(b)));
    if (it != m.vocab.end()) m.char_id[cp] = it->second;
  }

  EMBER_CHECK(model.contains("merges") && model["merges"].is_array(), "[BpeTokenizer] ", m.source,
              ": the BPE model has no \"merges\" list; a tokenizer.json of `tokenizers` holds "
              "one (as [\"a b\", ...] or [[\"a\", \"b\"], ...])");
  const json& merges = model["merges"];
  m.merges.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& merge = merges[rank];
    std::string a, b;
    if (merge.is_string()) {
      const std::string s = merge.get<std::string>();
      const size_t space = s.find(' ');
      EMBER_CHECK(space != std::string::npos && s.find(' ', space + 1) == std::string::npos,
                  "[BpeTokenizer] ", m.source, ": merge ", rank, " (\"", s,
                  "\") must be two tokens separated by one space");
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else {
      EMBER_CHECK(
          merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string(),
          "[BpeTokenizer] ", m.source, ": merge ", rank, " (", merge.dump(),
          ") must be \"a b\" or [\"a\", \"b\"]");
      a = merge[0].get<std::string>();
      b = merge[1].get<std::string>();
    }
    int32_t ids[3];
    const std::string names[3] = {a, b, a + b};
    for (int k = 0; k < 3; ++k) {
      auto it = m.vocab.find(names[k]);
      EMBER_CHECK(it != m.vocab.end(), "[BpeTokenizer] ", m.source, ": merge ", rank, " (\"", a,
                  "\" + \"", b, "\") ", k < 2 ? "names" : "makes", " the token \"", names[k],
                  "\", which is not in the vocabulary; the file is damaged or its merges belong "
                  "to another vocabulary");
      ids[k] = it->second;
    }
    m.merges[pair_key(ids[0], ids[1])] = {static_cast<int32_t>(rank), ids[2]};
  }
}

void parse_added_tokens(const json& list, BpeTokenizer::Impl& m) {
  if (list.is_null()) return;
  for (const json& t : list) {
    AddedToken a;
    a.content = t.at("content").get<std::string>();
    const auto id = t.at("id").get<int64_t>();
    EMBER_CHECK(id >= 0 && id < (int64_t{1} << 31) && !a.content.empty(), "[BpeTokenizer] ",
                m.source, ": added token ", t.dump(),
                " needs a non-empty content and an id from 0 to 2^31 - 1");
    a.id = static_cast<int32_t>(id);
    a.special = t.value("special", false);
    a.single_word = t.value("single_word", false);
    a.lstrip = t.value("lstrip", false);
    a.rstrip = t.value("rstrip", false);
    a.normalized = t.value("normalized", !a.special);
    a.pattern = a.normalized ? m.normalize(a.content) : a.content;
    if (a.pattern.empty()) a.pattern = a.content;
    m.added_by_id[a.id] = m.added.size();
    m.added.push_back(std::move(a));
  }
  std::vector<size_t> order(m.added.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return m.added[x].pattern.size() > m.added[y].pattern.size();
  });
  for (size_t i : order) {
    const AddedToken& a = m.added[i];
    (a.normalized ? m.normalized_added : m.raw_added)[static_cast<unsigned char>(a.pattern[0])]
        .push_back(i);
    (a.normalized ? m.any_normalized : m.any_raw) = true;
  }
  for (const AddedToken& a : m.added)
    if (a.single_word && !m.word_char)
      m.word_char = std::make_unique<bpe::Regex>(R"(\w)", false, m.source + ": single_word");
}

std::shared_ptr<BpeTokenizer::Impl> parse_tokenizer(const json& j, const std::string& source) {
  auto m = std::make_shared<BpeTokenizer::Impl>();
  m->source = source;
  EMBER_CHECK(j.is_object(), "[BpeTokenizer] ", source, " must hold a JSON object");
  parse_model(j.contains("model") ? j["model"] : json(), *m);
  parse_normalizer(j.value("normalizer", json()), *m);
  bool byte_level = false;
  std::shared_ptr<const bpe::Regex> gpt2;
  const json pre = j.value("pre_tokenizer", json());
  if (!pre.is_null()) parse_pre_tokenizer(pre, *m, byte_level, gpt2);
  m->byte_level = byte_level;
  EMBER_CHECK(!byte_level || !m->byte_fallback, "[BpeTokenizer] ", source,
              ": byte_fallback with a ByteLevel pre_tokenizer is not supported (byte-level BPE "
              "spells every byte already)");
  parse_post_processor(j.value("post_processor", json()), *m);
  bool fused = false;
  parse_decoder(j.value("decoder", json()), *m, fused);
  parse_added_tokens(j.value("added_tokens", json()), *m);
  return m;
}

}  // namespace

BpeTokenizer BpeTokenizer::from_json(const std::string& json_text, const std::string& source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::Value, "[BpeTokenizer] " + source + " is not valid JSON: " + e.what());
  }
  try {
    return BpeTokenizer(parse_tokenizer(j, source));
  } catch (const json::exception& e) {
    throw Error(ErrorKind::Value, "[BpeTokenizer] " + source +
                                      " has a field of the wrong type or a missing one: " +
                                      e.what() + "; it is not a tokenizer.json of `tokenizers`");
  }
}

BpeTokenizer BpeTokenizer::from_file(const std::string& path) {
  return from_json(read_file(path), path);
}

// Cuts `text` at the added tokens of `tokens` (leftmost, longest first, as `tokenizers`
// matches them), calling emit(piece, -1) for text between them and emit(content, id) for each.
template <class Fn>
void BpeTokenizer::Impl::split_added(std::string_view text, const AddedIndex& tokens, bool any,
                                     Fn&& emit) const {
  size_t done = 0;  // text before this is emitted
  for (size_t i = 0; i < text.size() && any;) {
    const AddedToken* found = nullptr;
    for (size_t k : tokens[static_cast<unsigned char>(text[i])]) {
      const std::string& c = added[k].pattern;
      if (text.compare(i, c.size(), c) == 0) {
        found = &added[k];
        break;
      }
    }
    if (!found) {
      ++i;
      continue;
    }
    size_t start = i, stop = i + found->pattern.size();
    i = stop;
    if (found->single_word) {
      const bool word_before =
          start > 0 && word_char->matches_at_start(text.substr(char_start_before(text, start)));
      const bool word_after = stop < text.size() && word_char->matches_at_start(text.substr(stop));
      if (word_before || word_after) continue;
    }
    if (found->lstrip)
      while (start > done && is_whitespace_at(text, char_start_before(text, start)))
        start = char_start_before(text, start);
    if (found->rstrip)
      while (stop < text.size() && is_whitespace_at(text, stop))
        stop += bpe::utf8_length(static_cast<unsigned char>(text[stop]));
    if (start > done) emit(text.substr(done, start - done), -1);
    emit(text.substr(start, stop - start), found->id);
    done = i = stop;
  }
  if (done < text.size()) emit(text.substr(done), -1);
}

std::vector<int32_t> BpeTokenizer::Impl::merge_word(const std::string& word) const {
  struct Symbol {
    int32_t id, prev, next;
    bool alive;
  };
  std::vector<Symbol> sym;
  sym.reserve(word.size());
  bool last_unknown = false;
  for (size_t i = 0; i < word.size();) {
    const size_t n = bpe::utf8_length(static_cast<unsigned char>(word[i]));
    const uint32_t cp = bpe::utf8_decode(word, i);
    int32_t id = -1;
    if (cp < 0x144) {
      id = char_id[cp];
    }
    if (id < 0) {
      auto it = vocab.find(word.substr(i, n));
      if (it != vocab.end()) id = it->second;
    }
    if (id < 0 && byte_fallback) {  // the character's bytes, if each has its token
      bool all = true;
      for (size_t b = i; b < i + n; ++b)
        all = all && byte_token[static_cast<unsigned char>(word[b])] >= 0;
      if (all) {
        for (size_t b = i; b < i + n; ++b) {
          const auto k = static_cast<int32_t>(sym.size());
          sym.push_back({byte_token[static_cast<unsigned char>(word[b])], k - 1, -1, true});
          if (k > 0) sym[k - 1].next = k;
        }
        i += n;
        last_unknown = false;
        continue;
      }
    }
    i += n;
    if (id < 0) {  // `tokenizers` drops the character unless there is an unknown token
      if (unk_id >= 0 && !(fuse_unk && last_unknown)) id = unk_id;
      last_unknown = true;
      if (id < 0) continue;
    } else {
      last_unknown = false;
    }
    const auto k = static_cast<int32_t>(sym.size());
    sym.push_back({id, k - 1, -1, true});
    if (k > 0) sym[k - 1].next = k;
  }

  // Lowest rank first, leftmost among equal ranks; stale entries are skipped when popped.
  struct Candidate {
    int32_t rank, pos, merged;
  };
  auto later = [](const Candidate& x, const Candidate& y) {
    return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  auto consider = [&](int32_t pos) {
    const int32_t next = sym[pos].next;
    if (next < 0) return;
    auto it = merges.find(pair_key(sym[pos].id, sym[next].id));
    if (it != merges.end()) queue.push({it->second.first, pos, it->second.second});
  };
  for (int32_t k = 0; k < static_cast<int32_t>(sym.size()); ++k) consider(k);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& s = sym[c.pos];
    if (!s.alive || s.next < 0) continue;
    auto it = merges.find(pair_key(s.id, sym[s.next].id));
    if (it == merges.end() || it->second.second != c.merged) continue;
    const int32_t right = s.next;
    s.id = c.merged;
    s.next = sym[right].next;
    if (s.next >= 0) sym[s.next].prev = c.pos;
    sym[right].alive = false;
    if (s.prev >= 0) consider(s.prev);
    consider(c.pos);
  }
  std::vector<int32_t> out;
  for (int32_t k = sym.empty() ? -1 : 0; k >= 0; k = sym[k].next) out.push_back(sym[k].id);
  return out;
}

void BpeTokenizer::Impl::encode_word(const std::string& word, std::vector<int32_t>& out) const {
  if (ignore_merges) {
    auto it = vocab.find(word);
    if (it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = word.size() <= kCacheMaxWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = cache.find(word);
    if (it != cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids = merge_word(word);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (cache.size() < kCacheCapacity) cache.emplace(word, std::move(ids));
  }
}

const std::string* BpeTokenizer::Impl::token_of(int64_t id) const {
  if (id < 0 || id >= (int64_t{1} << 31)) return nullptr;
  auto it = added_by_id.find(static_cast<int32_t>(id));
  if (it != added_by_id.end()) return &added[it->second].content;
  if (static_cast<size_t>(id) < model_tokens.size() && model_has[static_cast<size_t>(id)])
    return &model_tokens[static_cast<size_t>(id)];
  return nullptr;
}

std::string BpeTokenizer::Impl::normalize(std::string text) const {
  for (const NormalizerStep& n : normalizers) {
    switch (n.kind) {
      case NormalizerStep::Kind::Nfc:
        text = bpe::nfc(text);
        break;
      case NormalizerStep::Kind::Prepend:
        if (!text.empty()) text.insert(0, n.to);
        break;
      case NormalizerStep::Kind::Replace:
        text = bpe::replace_all(std::move(text), n.from, n.to);
        break;
    }
  }
  return text;
}

int BpeTokenizer::Impl::byte_of_token(int64_t id) const {
  if (!decode_bytes_of_byte_tokens || id < 0 || static_cast<size_t>(id) >= model_tokens.size() ||
      !model_has[static_cast<size_t>(id)])
    return -1;
  const std::string& t = model_tokens[static_cast<size_t>(id)];
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  const int b = static_cast<int>(std::strtol(t.substr(3, 2).c_str(), nullptr, 16));
  return byte_token[static_cast<size_t>(b)] == id ? b : -1;
}

std::string BpeTokenizer::Impl::byte_run_text(const std::string& run) {
  if (bpe::utf8_invalid_at(run) == run.size()) return run;
  std::string out;
  for (size_t i = 0; i < run.size(); ++i) out += "\xEF\xBF\xBD";
  return out;
}

std::string BpeTokenizer::Impl::strip_start(std::string text) const {
  size_t n = 0;
  while (n < text.size() && static_cast<int>(n) < strip_leading && text[n] == ' ') ++n;
  text.erase(0, n);
  return text;
}

std::string BpeTokenizer::Impl::token_text(const std::string& token) const {
  std::string text = token;
  for (const auto& [from, to] : decode_replace) text = bpe::replace_all(std::move(text), from, to);
  return text;
}

std::vector<int64_t> BpeTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  const Impl& m = *impl_;
  const size_t bad = bpe::utf8_invalid_at(text);
  EMBER_CHECK(bad == text.size(), "[BpeTokenizer] encode: the text is not valid UTF-8 (at byte ",
              bad, "); convert it to UTF-8 first");
  std::vector<int32_t> ids;
  bool first = true;  // no text or token before this part (Metaspace's "first" scheme)
  m.split_added(text, m.raw_added, m.any_raw, [&](std::string_view piece, int32_t id) {
    if (id >= 0) {
      ids.push_back(id);
      first = false;
      return;
    }
    const std::string normalized = m.normalize(std::string(piece));
    m.split_added(
        normalized, m.normalized_added, m.any_normalized,
        [&](std::string_view part, int32_t part_id) {
          if (part_id >= 0) {
            ids.push_back(part_id);
            first = false;
            return;
          }
          for (const std::string& word : bpe::pre_tokenize(m.steps, std::string(part), first))
            m.encode_word(word, ids);
          first = false;
        });
  });
  std::vector<int64_t> out(ids.begin(), ids.end());
  if (!add_special_tokens) return out;
  for (const auto& pieces : m.templates) {
    std::vector<int64_t> next;
    for (const TemplatePiece& p : pieces) {
      if (p.is_text)
        next.insert(next.end(), out.begin(), out.end());
      else
        next.insert(next.end(), p.ids.begin(), p.ids.end());
    }
    out.swap(next);
  }
  return out;
}

std::string BpeTokenizer::decode_bytes(const std::vector<int64_t>& ids, bool skip_special_tokens,
                                       bool continuing) const {
  const Impl& m = *impl_;
  std::string out;
  for (int64_t id : ids) {
    const std::string* token = m.token_of(id);
    EMBER_CHECK_KIND(Index, token != nullptr, "[BpeTokenizer] decode: id ", id, " is no token of ",
                     m.source, " (its ids run to ", vocab_size() - 1, " at most)");
    if (skip_special_tokens && is_special(id)) continue;
    if (!m.byte_level) {
      const int b = m.byte_of_token(id);
      if (b >= 0)
        out += static_cast<char>(b);
      else
        out += m.token_text(*token);
      continue;
    }
    // The ByteLevel decoder: each character back to its byte, unless one of them stands for no
    // byte -- then the token's own UTF-8 (as `tokenizers` does for added tokens like " x").
    std::string bytes;
    bool mapped = true;
    for (size_t i = 0; i < token->size() && mapped;) {
      const int b = bpe::byte_of_char(bpe::utf8_decode(*token, i));
      mapped = b >= 0;
      bytes += static_cast<char>(b);
      i += bpe::utf8_length(static_cast<unsigned char>((*token)[i]));
    }
    out += mapped ? bytes : *token;
  }
  return continuing ? out : m.strip_start(std::move(out));
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::string out;
  if (impl_->byte_level || !impl_->decode_bytes_of_byte_tokens) {
    bpe::utf8_repair(decode_bytes(ids, skip_special_tokens), out, true);
    return out;
  }
  // ByteFallback: a run of byte tokens that is not UTF-8 becomes one U+FFFD per byte.
  std::string text, run;
  for (int64_t id : ids) {
    const std::string piece = decode_bytes({id}, skip_special_tokens, true);
    if (impl_->byte_of_token(id) >= 0 && !(skip_special_tokens && is_special(id))) {
      run += piece;
    } else {
      text += impl_->byte_run_text(run) + piece;
      run.clear();
    }
  }
  text += impl_->byte_run_text(run);
  bpe::utf8_repair(impl_->strip_start(std::move(text)), out, true);
  return out;
}

int64_t BpeTokenizer::token_to_id(const std::string& token) const {
  for (const AddedToken& a : impl_->added)
    if (a.content == token) return a.id;
  auto it = impl_->vocab.find(token);
  EMBER_CHECK_KIND(Index, it != impl_->vocab.end(), "[BpeTokenizer] \"", token,
                   "\" is not a token of ", impl_->source);
  return it->second;
}

const std::string& BpeTokenizer::id_to_token(int64_t id) const {
  const std::string* token = impl_->token_of(id);
  EMBER_CHECK_KIND(Index, token != nullptr, "[BpeTokenizer] id ", id, " is no token of ",
                   impl_->source);
  return *token;
}

bool BpeTokenizer::is_special(int64_t id) const {
  if (id < 0 || id >= (int64_t{1} << 31)) return false;
  auto it = impl_->added_by_id.find(static_cast<int32_t>(id));
  return it != impl_->added_by_id.end() && impl_->added[it->second].special;
}

int64_t BpeTokenizer::vocab_size() const {
  auto n = static_cast<int64_t>(impl_->vocab.size());
  for (const AddedToken& a : impl_->added)
    if (!impl_->vocab.count(a.content)) ++n;
  return n;
}

std::string BpeDecodeStream::step(int64_t id) {
  const BpeTokenizer::Impl& m = *tokenizer_.impl_;
  if (!m.byte_level && m.decode_bytes_of_byte_tokens) {
    // ByteFallback turns a whole run of byte tokens into text or, when the run is not UTF-8,
    // into one U+FFFD per byte: the run is held until a token of another kind ends it.
    const std::string bytes = tokenizer_.decode_bytes({id}, skip_special_, true);
    if (m.byte_of_token(id) >= 0 && !(skip_special_ && tokenizer_.is_special(id))) {
      pending_ += bytes;
      return "";
    }
    std::string out = m.byte_run_text(pending_) + bytes;
    pending_.clear();
    if (!continuing_) out = m.strip_start(std::move(out));
    continuing_ = continuing_ || !out.empty();
    return out;
  }
  const std::string bytes = tokenizer_.decode_bytes({id}, skip_special_, continuing_);
  if (!(skip_special_ && tokenizer_.is_special(id))) continuing_ = true;
  pending_ += bytes;
  std::string out;
  pending_.erase(0, bpe::utf8_repair(pending_, out, false));
  return out;
}

std::string BpeDecodeStream::flush() {
  const BpeTokenizer::Impl& m = *tokenizer_.impl_;
  std::string out;
  if (!m.byte_level && m.decode_bytes_of_byte_tokens) {
    out = m.byte_run_text(pending_);
    if (!continuing_) out = m.strip_start(std::move(out));
    continuing_ = continuing_ || !out.empty();
  } else {
    bpe::utf8_repair(pending_, out, true);
  }
  pending_.clear();
  return out;
}

}  // namespace ember::data
