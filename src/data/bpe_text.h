// data/bpe_text.h: the text machinery of the BPE tokenizer (ember/data/bpe.h) -- PCRE2 regexes
// with Unicode classes, the pre-tokenizer steps (Split with its five behaviours, Digits,
// ByteLevel, Metaspace), the GPT-2 byte-to-unicode mapping, NFC, and UTF-8 checking and repair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::data::bpe {

// A pattern compiled by PCRE2 with UTF and UCP (so \p{L}, \p{N}, \s and \w are Unicode's), JIT
// compiled when the library can. Shared read-only between threads.
class Regex {
 public:
  // literal: the pattern is a plain string. `where` names the pattern in errors (a bad pattern
  // throws, with PCRE2's message and offset).
  Regex(const std::string& pattern, bool literal, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // The [begin, end) byte spans of the successive matches in `text` (valid UTF-8), as a
  // left-to-right scan finds them; an empty match moves the scan on by one character.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;
  // Whether the pattern matches at the start of `text`.
  bool matches_at_start(std::string_view text) const;

 private:
  void* code_;  // pcre2_code
  std::string where_;
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// One step of the pre-tokenizer, applied to every piece the steps before it left.
struct PreTokenizerStep {
  enum class Kind { Split, ByteLevel, Metaspace } kind = Kind::Split;
  // Split's pattern; ByteLevel's GPT-2 pattern (use_regex); Metaspace's replacement (split).
  std::shared_ptr<const Regex> regex;
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;
  bool add_prefix_space = false;  // ByteLevel
  // Metaspace: spaces become `replacement`, which is put in front of a piece that does not start
  // with it (always, or only for the text's first piece, or never); `regex` set: the piece is
  // then split before each replacement (MergedWithNext).
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  std::string replacement;
};

// The GPT-2 pre-tokenizer pattern that ByteLevel(use_regex=true) splits with.
extern const char* const kGpt2Pattern;

// `piece` split by `regex` as `tokenizers`' Split does; empty parts are dropped.
std::vector<std::string> split(std::string_view piece, const Regex& regex, SplitBehavior behavior,
                               bool invert);
// The words of a piece of text after every step; `first`: the piece starts the text (no added
// token before it), which Metaspace's "first" prepend scheme asks.
std::vector<std::string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, std::string piece,
                                      bool first = true);

// Every occurrence of `from` in `text` replaced by `to` (from not empty).
std::string replace_all(std::string text, const std::string& from, const std::string& to);

// The byte-to-unicode mapping: each byte as the UTF-8 of the character standing for it.
const std::string& byte_char(unsigned char byte);
// The byte a character stands for (-1: none), by code point.
int byte_of_char(uint32_t cp);
std::string byte_level_map(std::string_view bytes);

// NFC (utf8proc); builds without utf8proc throw, saying so.
std::string nfc(const std::string& text);

// The length of the UTF-8 character starting at text[i] (text valid UTF-8), and its code point.
size_t utf8_length(unsigned char lead);
uint32_t utf8_decode(std::string_view text, size_t i);
// The offset of the first byte of `text` that is not valid UTF-8 (text.size(): all valid).
size_t utf8_invalid_at(std::string_view text);
// Appends the text of `bytes` to `out`, each ill-formed part as U+FFFD (the maximal-subpart rule
// of Rust's from_utf8_lossy). Unless `final`, an incomplete character at the end is left; the
// number of bytes used is returned.
size_t utf8_repair(std::string_view bytes, std::string& out, bool final);
// Unicode's White_Space property.
bool is_unicode_whitespace(uint32_t cp);

}  // namespace ember::data::bpe
