// tests/test_bpe.cpp: the BPE tokenizer against Hugging Face `tokenizers` -- the tokenizer.json
// files and reference ids/decodes of tests/reference/fixtures/bpe, written by bpe_reference.py
// (byte-level: GPT-2, Llama 3, Qwen2 and Digits styles) and spm_reference.py (SentencePiece-style
// with byte fallback: Llama 2 and Metaspace styles) -- and by hand: round trips, the streaming
// decoder, special tokens, Split's behaviours, and bad files refused.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/bpe_text.h"
#include "ember/data/bpe.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::throws_error;

const std::string kDir = std::string(EMBER_REFERENCE_DIR) + "/fixtures/bpe/";
const char* const kStyles[] = {"gpt2", "llama3", "qwen2", "digits", "llama2", "metaspace"};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json reference(const std::string& style) {
  return nlohmann::json::parse(read_text(kDir + style + ".reference.json"));
}

data::BpeTokenizer load(const std::string& style) {
  return data::BpeTokenizer::from_file(kDir + style + ".tokenizer.json");
}

std::vector<int64_t> ids_of(const nlohmann::json& j) {
  return j.get<std::vector<int64_t>>();
}

TEST(Bpe, IdsAndDecodesEqualTokenizersOnTheCorpus) {
  size_t strings = 0;
  for (const char* style : kStyles) {
    SCOPED_TRACE(style);
    const auto ref = reference(style);
    const auto tok = load(style);
    EXPECT_EQ(tok.vocab_size(), ref["vocab_size"].get<int64_t>());
    for (const auto& c : ref["cases"]) {
      const std::string text = c["text"].get<std::string>();
      SCOPED_TRACE(text);
      EXPECT_EQ(tok.encode(text, true), ids_of(c["ids"]));
      EXPECT_EQ(tok.encode(text, false), ids_of(c["ids_plain"]));
      EXPECT_EQ(tok.decode(ids_of(c["ids"]), false), c["decode"].get<std::string>());
      EXPECT_EQ(tok.decode(ids_of(c["ids"]), true), c["decode_skip"].get<std::string>());
      ++strings;
    }
    // Id lists that cut characters apart decode with U+FFFD where `tokenizers` puts it.
    for (const auto& d : ref["decodes"])
      EXPECT_EQ(tok.decode(ids_of(d["ids"])), d["text"].get<std::string>()) << d["ids"].dump();
  }
  EXPECT_GE(strings, 4u * 60u);
}

TEST(Bpe, DecodeOfEncodeGivesTheTextBack) {
  // Llama 3 style: no normalizer and no token that strips spaces, so every text comes back.
  const auto tok = load("llama3");
  const auto llama3 = reference("llama3");  // kept: a range-for over a temporary's member dangles
  for (const auto& c : llama3["cases"]) {
    const std::string text = c["text"].get<std::string>();
    // special tokens in the text come back too when decoding keeps them
    EXPECT_EQ(tok.decode(tok.encode(text, false), false), text);
  }
}

TEST(Bpe, SpecialTokensAreMatchedWholeAndAddedByTheTemplate) {
  const auto gpt2 = load("gpt2");
  const int64_t eot = gpt2.token_to_id("<|endoftext|>");
  EXPECT_TRUE(gpt2.is_special(eot));
  EXPECT_EQ(gpt2.id_to_token(eot), "<|endoftext|>");
  const auto ids = gpt2.encode("Hello<|endoftext|>world");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), eot), 1);
  EXPECT_EQ(gpt2.decode(ids), "Hello<|endoftext|>world");
  EXPECT_EQ(gpt2.decode(ids, true), "Helloworld");
  // Not a whole special token: split like text.
  const auto partial = gpt2.encode("<|endoftext");
  EXPECT_EQ(std::count(partial.begin(), partial.end(), eot), 0);
  // A non-special added token decodes even when special tokens are skipped.
  const int64_t user = gpt2.token_to_id("<user>");
  EXPECT_FALSE(gpt2.is_special(user));
  EXPECT_EQ(gpt2.decode(gpt2.encode("a <user> said"), true), "a <user> said");
  // <mask> strips the spaces on its left.
  EXPECT_EQ(gpt2.decode(gpt2.encode("fill   <mask> here")), "fill<mask> here");
  // <r> strips those on its right; "fox" is matched only as a whole word.
  EXPECT_EQ(gpt2.decode(gpt2.encode("<r>   x")), "<r>x");
  const int64_t fox = gpt2.token_to_id("fox");
  const auto foxes = gpt2.encode("fox firefox foxes fox_1 fox.");
  EXPECT_EQ(std::count(foxes.begin(), foxes.end(), fox), 2);

  const auto llama = load("llama3");
  const int64_t bos = llama.token_to_id("<|begin_of_text|>");
  EXPECT_EQ(llama.encode("Hi", true).front(), bos);
  EXPECT_NE(llama.encode("Hi", false).front(), bos);
  EXPECT_EQ(llama.encode("", true), std::vector<int64_t>{bos});
  EXPECT_TRUE(llama.encode("", false).empty());
  const auto digits = load("digits");
  const auto wrapped = digits.encode("12", true);
  EXPECT_EQ(wrapped.front(), digits.token_to_id("<s>"));
  EXPECT_EQ(wrapped.back(), digits.token_to_id("</s>"));
  // <s> "Ġ1" "Ġ2" </s>: Digits isolates each digit, and ByteLevel puts a space before every
  // piece it is given.
  EXPECT_EQ(wrapped.size(), 4u);
  EXPECT_EQ(digits.id_to_token(wrapped[2]),
            "\xC4\xA0"
            "2");
}

// Whether `s` is well-formed UTF-8 (no U+FFFD hiding a cut character either).
bool whole_utf8(const std::string& s) {
  return data::bpe::utf8_invalid_at(s) == s.size() && s.find("\xEF\xBF\xBD") == std::string::npos;
}

TEST(Bpe, StreamingDecodeReturnsOnlyWholeCharacters) {
  for (const char* style : kStyles) {
    SCOPED_TRACE(style);
    const auto tok = load(style);
    const std::string text =
        "Emoji: 😀 ✨🚀 👨‍👩‍👧‍👦 日本語 🇫🇷 done";
    const auto ids = tok.encode(text, true);
    data::BpeDecodeStream stream(tok, true);
    std::string joined;
    size_t held_back = 0;  // steps that returned nothing: the token ended inside a character
    for (int64_t id : ids) {
      const std::string piece = stream.step(id);
      EXPECT_TRUE(whole_utf8(piece)) << piece;
      held_back += piece.empty();
      joined += piece;
    }
    EXPECT_EQ(stream.flush(), "");
    EXPECT_EQ(joined, tok.decode(ids, true));
    // The Digits style adds a space before the text (ByteLevel's add_prefix_space).
    EXPECT_EQ(joined, std::string(style) == "digits" ? " " + text : text);
    EXPECT_GT(held_back, 0u);  // the small vocabularies cut emoji over several tokens
  }
  // The reference's id lists (lone tokens, random runs): what the stream returns, joined, is
  // decode()'s text, U+FFFD included.
  for (const char* style : kStyles) {
    const auto tok = load(style);
    const auto ref = reference(style);
    for (const auto& d : ref["decodes"]) {
      data::BpeDecodeStream stream(tok);
      std::string joined;
      for (int64_t id : ids_of(d["ids"])) joined += stream.step(id);
      joined += stream.flush();
      EXPECT_EQ(joined, d["text"].get<std::string>()) << style << " " << d["ids"].dump();
    }
  }
}

TEST(Bpe, StreamingDecodeOfAnEmojiOneByteAtATime) {
  const auto tok = load("gpt2");
  // 😀 is F0 9F 98 80: its bytes' tokens one by one.
  std::vector<int64_t> bytes;
  for (unsigned char b : std::string("😀"))
    bytes.push_back(tok.token_to_id(data::bpe::byte_char(b)));
  data::BpeDecodeStream stream(tok);
  EXPECT_EQ(stream.step(bytes[0]), "");
  EXPECT_EQ(stream.step(bytes[1]), "");
  EXPECT_EQ(stream.step(bytes[2]), "");
  EXPECT_EQ(stream.step(bytes[3]), "😀");
  // A lead byte then ASCII: the cut character is U+FFFD, the ASCII comes out.
  EXPECT_EQ(stream.step(bytes[0]), "");
  EXPECT_EQ(stream.step(tok.token_to_id("a")),
            "\xEF\xBF\xBD"
            "a");
  EXPECT_EQ(stream.step(bytes[0]), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(tok.decode({bytes[0], bytes[1]}), "\xEF\xBF\xBD");
}

TEST(BpeText, SplitBehavioursAsTokenizers) {
  // `tokenizers`' Split("-", behavior, invert) on "the-final--countdown-".
  using data::bpe::SplitBehavior;
  const data::bpe::Regex dash("-", true, "test");
  const std::string s = "the-final--countdown-";
  using V = std::vector<std::string>;
  EXPECT_EQ(split(s, dash, SplitBehavior::Removed, false), (V{"the", "final", "countdown"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::Removed, true), (V{"-", "-", "-", "-"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::Isolated, false),
            (V{"the", "-", "final", "-", "-", "countdown", "-"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::MergedWithPrevious, false),
            (V{"the-", "final-", "-", "countdown-"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::MergedWithPrevious, true),
            (V{"the", "-final", "-", "-countdown", "-"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::MergedWithNext, false),
            (V{"the", "-final", "-", "-countdown", "-"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::MergedWithNext, true),
            (V{"the-", "final-", "-", "countdown-"}));
  EXPECT_EQ(split(s, dash, SplitBehavior::Contiguous, false),
            (V{"the", "-", "final", "--", "countdown", "-"}));
  // Empty matches cut the text too.
  const data::bpe::Regex digits_or_empty(R"(\p{N}+|x*)", false, "test");
  EXPECT_EQ(split("ab12c", digits_or_empty, SplitBehavior::Isolated, false),
            (V{"a", "b", "12", "c"}));
  // Unicode classes: CJK is \p{L}, Arabic-Indic digits are \p{N}; inverted, the matches stay
  // and the rest is removed.
  const data::bpe::Regex letters(R"(\p{L}+|\p{N}+)", false, "test");
  EXPECT_EQ(split("日本١٢!", letters, SplitBehavior::Removed, true), (V{"日本", "١٢"}));
  EXPECT_EQ(split("日本١٢!", letters, SplitBehavior::Removed, false), (V{"!"}));
}

TEST(BpeText, ByteToUnicodeTable) {
  EXPECT_EQ(data::bpe::byte_char('A'), "A");
  EXPECT_EQ(data::bpe::byte_char(' '), "\xC4\xA0");   // Ġ (U+0120)
  EXPECT_EQ(data::bpe::byte_char('\n'), "\xC4\x8A");  // Ċ (U+010A)
  EXPECT_EQ(data::bpe::byte_char(0xAD), "\xC5\x83");  // U+0143, the last
  EXPECT_EQ(data::bpe::byte_char(0xA1), "\xC2\xA1");  // ¡ stands for itself
  for (int b = 0; b < 256; ++b) {
    const std::string& c = data::bpe::byte_char(static_cast<unsigned char>(b));
    EXPECT_EQ(data::bpe::byte_of_char(data::bpe::utf8_decode(c, 0)), b);
  }
}

// The gpt2 fixture's JSON with `edit` applied, loaded.
template <class Edit>
void load_edited(Edit&& edit) {
  auto j = nlohmann::json::parse(read_text(kDir + "gpt2.tokenizer.json"));
  edit(j);
  data::BpeTokenizer::from_json(j.dump(), "edited.json");
}

TEST(Bpe, BadTokenizerFilesAreRefused) {
  EXPECT_TRUE(throws_error([] { load_edited([](auto& j) { j["model"]["type"] = "WordPiece"; }); },
                           ErrorKind::Value, {"edited.json", "WordPiece", "BPE"}));
  EXPECT_TRUE(throws_error([] { load_edited([](auto& j) { j["model"].erase("merges"); }); },
                           ErrorKind::Value, {"edited.json", "no \"merges\""}));
  EXPECT_TRUE(
      throws_error([] { load_edited([](auto& j) { j["model"]["merges"].push_back("Ġqqq zzz"); }); },
                   ErrorKind::Value, {"merge", "\"Ġqqq\"", "not in the vocabulary"}));
  EXPECT_TRUE(
      throws_error([] { load_edited([](auto& j) { j["model"]["merges"][3] = "nospace"; }); },
                   ErrorKind::Value, {"merge 3", "two tokens"}));
  EXPECT_TRUE(throws_error(
      [] {
        load_edited([](auto& j) {
          j["pre_tokenizer"] = {
              {"type", "Sequence"},
              {"pretokenizers",
               {{{"type", "Split"},
                 {"pattern", {{"Regex", "(\\p{L}+"}}},
                 {"behavior", "Isolated"},
                 {"invert", false}},
                {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
        });
      },
      ErrorKind::Value, {"edited.json", "Split", "does not compile", "(\\p{L}+"}));
  EXPECT_TRUE(throws_error(
      [] {
        load_edited([](auto& j) {
          j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}};
        });
      },
      ErrorKind::Value, {"decoder ByteLevel", "SentencePiece-style"}));
  EXPECT_TRUE(throws_error([] { load_edited([](auto& j) { j["model"]["byte_fallback"] = true; }); },
                           ErrorKind::Value, {"byte_fallback", "ByteLevel"}));
  // SentencePiece-style files: what is not read is named.
  auto load_llama2 = [](auto edit) {
    auto j = nlohmann::json::parse(read_text(kDir + "llama2.tokenizer.json"));
    edit(j);
    return data::BpeTokenizer::from_json(j.dump(), "edited.json");
  };
  EXPECT_TRUE(
      throws_error([&] { load_llama2([](auto& j) { j["decoder"]["decoders"][3]["stop"] = 1; }); },
                   ErrorKind::Value, {"Strip decoder", "stop 0"}));
  EXPECT_TRUE(throws_error(
      [&] {
        load_llama2([](auto& j) {
          j["normalizer"]["normalizers"][1]["pattern"] = {{"Regex", " +"}};
        });
      },
      ErrorKind::Value, {"Replace normalizer", "regex patterns are not supported"}));
  EXPECT_TRUE(throws_error(
      [&] {
        load_llama2([](auto& j) {
          j["pre_tokenizer"] = {{"type", "Metaspace"}, {"prepend_scheme", "sometimes"}};
        });
      },
      ErrorKind::Value, {"prepend_scheme", "sometimes"}));
  EXPECT_TRUE(
      throws_error([&] { load_llama2([](auto& j) {
                           j["decoder"] = {{"type", "ByteLevel"}};
                         }); },
                   ErrorKind::Value, {"decoder ByteLevel", "SentencePiece-style"}));
  EXPECT_TRUE(
      throws_error([] { load_edited([](auto& j) {
                          j["normalizer"] = {{"type", "NFKC"}};
                        }); },
                   ErrorKind::Value, {"normalizer NFKC", "NFC"}));
  EXPECT_TRUE(throws_error([] { load_edited([](auto& j) { j["decoder"] = nullptr; }); },
                           ErrorKind::Value, {"decoder null", "ByteLevel"}));
  EXPECT_TRUE(throws_error([] { load_edited([](auto& j) { j["model"]["vocab"] = 3; }); },
                           ErrorKind::Value, {"vocab"}));
  EXPECT_TRUE(throws_error([] { data::BpeTokenizer::from_json("{\"model\": ", "cut.json"); },
                           ErrorKind::Value, {"cut.json", "not valid JSON"}));
  EXPECT_TRUE(throws_error([] { data::BpeTokenizer::from_file(kDir + "absent.json"); },
                           ErrorKind::IO, {"absent.json"}));
  const auto tok = load("gpt2");
  EXPECT_TRUE(throws_error([&] { tok.encode("bad \xC3 utf-8"); }, ErrorKind::Value,
                           {"encode", "not valid UTF-8", "byte 4"}));
  EXPECT_TRUE(throws_error(
      [&] {
        tok.decode({5, 1 << 20});
      },
      ErrorKind::Index, {"decode", "1048576"}));
  EXPECT_TRUE(
      throws_error([&] { tok.token_to_id("no such token"); }, ErrorKind::Index, {"no such token"}));
}

TEST(Bpe, LongTextsEncodeInLinearTime) {
  // 2000 copies of the corpus' first strings: a word cache and per-word merging keep this quick.
  const auto tok = load("llama3");
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "The quick brown fox jumps over the lazy dog 12345. Café 日本語 😀\n";
  const auto ids = tok.encode(text, false);
  EXPECT_EQ(tok.decode(ids), text);
  // One long word (no spaces) merges without quadratic blow-up.
  const std::string word(20000, 'a');
  EXPECT_EQ(tok.decode(tok.encode(word, false)), word);
}

}  // namespace
}  // namespace ember
