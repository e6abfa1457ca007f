// data/bpe_text.cpp: PCRE2 regexes, pre-tokenizer steps, the byte-level mapping, NFC and UTF-8
// repair for the byte-level BPE tokenizer (data/bpe_text.h).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/bpe_text.h"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "ember/error.h"

#ifdef EMBER_HAVE_UTF8PROC
#include <utf8proc.h>
#endif

namespace ember::data::bpe {

const char* const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

pcre2_code* as_code(void* p) {
  return static_cast<pcre2_code*>(p);
}

// Match data sized for one capture (the whole match), freed on scope exit.
struct MatchData {
  explicit MatchData(const pcre2_code* code)
      : data(pcre2_match_data_create_from_pattern(code, nullptr)) {
    EMBER_CHECK_KIND(OutOfMemory, data != nullptr,
                     "[BpeTokenizer] PCRE2 match data: out of memory");
  }
  ~MatchData() { pcre2_match_data_free(data); }
  MatchData(const MatchData&) = delete;
  MatchData& operator=(const MatchData&) = delete;
  pcre2_match_data* data;
};

// pcre2_match, falling back to the interpreter when the JIT runs out of stack.
int match(const pcre2_code* code, std::string_view text, size_t from, uint32_t options,
          pcre2_match_data* md) {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  int rc = pcre2_match(code, subject, text.size(), from, options | PCRE2_NO_UTF_CHECK, md, nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(code, subject, text.size(), from, options | PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                     md, nullptr);
  return rc;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

Regex::Regex(const std::string& pattern, bool literal, const std::string& where) : where_(where) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2_LITERAL refuses PCRE2_UCP (nothing in a literal needs it).
  const uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &err, &offset, nullptr);
  EMBER_CHECK(code != nullptr, "[BpeTokenizer] ", where, ": the pattern \"", pattern,
              "\" does not compile with PCRE2 (", pcre2_message(err), " at offset ", offset,
              "); fix the pattern in tokenizer.json");
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // the interpreter serves where JIT is absent
  code_ = code;
}

Regex::~Regex() {
  pcre2_code_free(as_code(code_));
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  MatchData md(as_code(code_));
  size_t from = 0;
  while (from <= text.size()) {
    const int rc = match(as_code(code_), text, from, 0, md.data);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    EMBER_CHECK(rc >= 0, "[BpeTokenizer] ", where_, ": matching failed (", pcre2_message(rc),
                "); the text or the pattern is too complex for PCRE2's limits");
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
    out.emplace_back(ov[0], ov[1]);
    if (ov[1] > ov[0]) {
      from = ov[1];
    } else {
      if (ov[1] >= text.size()) break;
      from = ov[1] + utf8_length(static_cast<unsigned char>(text[ov[1]]));
    }
  }
  return out;
}

bool Regex::matches_at_start(std::string_view text) const {
  MatchData md(as_code(code_));
  return match(as_code(code_), text, 0, PCRE2_ANCHORED, md.data) >= 0;
}

std::vector<std::string> split(std::string_view piece, const Regex& regex, SplitBehavior behavior,
                               bool invert) {
  // The parts of the piece, matches and the text between them, as `tokenizers` lists them.
  struct Part {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Part> parts;
  size_t prev = 0;
  for (auto [b, e] : regex.find_all(piece)) {
    if (prev != b) parts.push_back({prev, b, false});
    parts.push_back({b, e, true});
    prev = e;
  }
  if (prev != piece.size()) parts.push_back({prev, piece.size(), false});
  if (invert)
    for (Part& p : parts) p.is_match = !p.is_match;

  // Each kept span with whether it is dropped.
  std::vector<Part> kept;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Removed:
      kept = parts;
      break;
    case SplitBehavior::Isolated:
      for (Part p : parts) kept.push_back({p.begin, p.end, false});
      break;
    case SplitBehavior::Contiguous:
      for (Part p : parts) {
        if (p.is_match == previous_match && !kept.empty())
          kept.back().end = p.end;
        else
          kept.push_back({p.begin, p.end, false});
        previous_match = p.is_match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (Part p : parts) {
        if (p.is_match && !previous_match && !kept.empty())
          kept.back().end = p.end;
        else
          kept.push_back({p.begin, p.end, false});
        previous_match = p.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty())
          kept.back().begin = it->begin;
        else
          kept.push_back({it->begin, it->end, false});
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  std::vector<std::string> out;
  for (const Part& p : kept)
    if (!p.is_match && p.end > p.begin) out.emplace_back(piece.substr(p.begin, p.end - p.begin));
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::vector<std::string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, std::string piece,
                                      bool first) {
  std::vector<std::string> pieces;
  if (!piece.empty()) pieces.push_back(std::move(piece));
  std::vector<std::string> next;
  for (const PreTokenizerStep& step : steps) {
    next.clear();
    for (std::string& p : pieces) {
      if (step.kind == PreTokenizerStep::Kind::Split) {
        for (std::string& s : split(p, *step.regex, step.behavior, step.invert))
          next.push_back(std::move(s));
        continue;
      }
      if (step.kind == PreTokenizerStep::Kind::Metaspace) {
        std::string m = replace_all(p, " ", step.replacement);
        const bool prepend =
            step.prepend == PreTokenizerStep::Prepend::Always ||
            (step.prepend == PreTokenizerStep::Prepend::First && first && &p == &pieces[0]);
        if (prepend && m.compare(0, step.replacement.size(), step.replacement) != 0)
          m.insert(0, step.replacement);
        if (!step.regex) {
          next.push_back(std::move(m));
          continue;
        }
        for (std::string& s : split(m, *step.regex, SplitBehavior::MergedWithNext, false))
          next.push_back(std::move(s));
        continue;
      }
      if (step.add_prefix_space && p[0] != ' ') p.insert(p.begin(), ' ');
      if (step.regex) {
        for (const std::string& s : split(p, *step.regex, SplitBehavior::Isolated, false))
          next.push_back(byte_level_map(s));
      } else {
        next.push_back(byte_level_map(p));
      }
    }
    pieces.swap(next);
  }
  return pieces;
}

namespace {

// Bytes that stand for themselves ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF); the 68 others
// map, in byte order, to U+0100 onwards.
bool byte_is_printable(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

struct ByteTables {
  std::array<std::string, 256> chars;
  std::array<int, 0x144> bytes;  // code point -> byte (-1 none)
  ByteTables() {
    bytes.fill(-1);
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = byte_is_printable(b) ? static_cast<uint32_t>(b) : next++;
      append_utf8(cp, chars[b]);
      bytes[cp] = b;
    }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

}  // namespace

const std::string& byte_char(unsigned char byte) {
  return byte_tables().chars[byte];
}

int byte_of_char(uint32_t cp) {
  return cp < 0x144 ? byte_tables().bytes[cp] : -1;
}

std::string byte_level_map(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += byte_char(static_cast<unsigned char>(c));
  return out;
}

std::string nfc(const std::string& text) {
#ifdef EMBER_HAVE_UTF8PROC
  // With an explicit length (utf8proc_NFC would stop at a NUL character).
  utf8proc_uint8_t* composed = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &composed,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  EMBER_CHECK(n >= 0, "[BpeTokenizer] NFC normalization failed: ", utf8proc_errmsg(n));
  std::string out(reinterpret_cast<const char*>(composed), static_cast<size_t>(n));
  std::free(composed);
  return out;
#else
  (void)text;
  EMBER_THROW(NotImplemented,
              "[BpeTokenizer] the tokenizer's NFC normalizer needs utf8proc, and this ember was "
              "built without it (EMBER_MINIMAL_DEPS); install libutf8proc-dev and rebuild");
#endif
}

size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

uint32_t utf8_decode(std::string_view text, size_t i) {
  const auto b = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(text[k]));
  };
  const uint32_t lead = b(i);
  switch (utf8_length(static_cast<unsigned char>(lead))) {
    case 1:
      return lead;
    case 2:
      return ((lead & 0x1F) << 6) | (b(i + 1) & 0x3F);
    case 3:
      return ((lead & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
    default:
      return ((lead & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) |
             (b(i + 3) & 0x3F);
  }
}

namespace {

// The number of bytes of the well-formed character at bytes[i], or 0 when it is ill-formed;
// `valid_prefix` gets how many bytes from i could still begin one (at least 1).
size_t utf8_char_at(std::string_view bytes, size_t i, size_t& valid_prefix) {
  const auto lead = static_cast<unsigned char>(bytes[i]);
  valid_prefix = 1;
  if (lead < 0x80) return 1;
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= bytes.size()) return 0;
    const auto c = static_cast<unsigned char>(bytes[i + k]);
    if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return 0;
    valid_prefix = k + 1;
  }
  return need;
}

}  // namespace

size_t utf8_invalid_at(std::string_view text) {
  size_t prefix = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_char_at(text, i, prefix);
    if (n == 0) return i;
    i += n;
  }
  return text.size();
}

size_t utf8_repair(std::string_view bytes, std::string& out, bool final) {
  size_t i = 0;
  while (i < bytes.size()) {
    size_t prefix = 0;
    const size_t n = utf8_char_at(bytes, i, prefix);
    if (n > 0) {
      out.append(bytes.substr(i, n));
      i += n;
      continue;
    }
    if (!final && i + prefix == bytes.size() && static_cast<unsigned char>(bytes[i]) >= 0xC2 &&
        static_cast<unsigned char>(bytes[i]) <= 0xF4)
      break;  // a character that the next bytes may complete
    out += "\xEF\xBF\xBD";
    i += prefix;
  }
  return i;
}

bool is_unicode_whitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

}  // namespace ember::data::bpe
