// io/gguf_tokenizer.cpp: a GGUF file's tokenizer.ggml.* metadata turned into the tokenizer.json
// of the same tokenizer -- byte-level BPE ("gpt2": vocabulary, merges, the pre-tokenizer that
// llama.cpp's tokenizer.ggml.pre names) or SentencePiece BPE ("llama": vocabulary and scores, the
// merges derived from them as transformers does, byte fallback, Metaspace); control and
// user-defined tokens as added tokens, BOS by tokenizer.ggml.add_bos_token -- so one tokenizer
// implementation (data::BpeTokenizer) reads both kinds of file.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ember/error.h"
#include "ember/io/gguf.h"

namespace ember::io {

namespace {

using nlohmann::json;

// The pre-tokenizer regexes of the tokenizers these names stand for (their tokenizer.json).
const char* const kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", true},
          {"use_regex", use_regex}};
}

json split_then_bytes(const char* regex) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern", {{"Regex", regex}}},
             {"behavior", "Isolated"},
             {"invert", false}},
            byte_level(false)}}};
}

int64_t id_or(const GgufFile& f, const char* key, int64_t fallback) {
  const GgufValue* v = f.find(key);
  return v ? v->to_int() : fallback;
}

// An added_tokens entry of tokenizer.json.
json added_token(int64_t id, const std::string& content, bool normalized, bool special) {
  return {{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", normalized}, {"special", special}};
}

json template_with_bos(const std::string& bos, int64_t id) {
  return {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"pair",
           {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
            {{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "B"}, {"type_id", 0}}}}}},
          {"special_tokens", {{bos, {{"id", bos}, {"ids", {id}}, {"tokens", {bos}}}}}}};
}

// The offsets of the UTF-8 characters of `s` after the first (where it can be cut in two).
std::vector<size_t> cut_points(const std::string& s) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) cuts.push_back(i);
  return cuts;
}

// The merges a SentencePiece BPE vocabulary implies, as transformers derives them for a GGUF
// file (tokenization_utils_base.generate_merges): every cut of a token into two tokens of the
// vocabulary, those of one token ordered by the halves' ids, all of them by the token's score,
// then the halves' lengths in characters, highest first (a stable sort). Tokens longer than 1 KiB
// are not cut (no real vocabulary has them; it bounds the work on a hostile file).
json spm_merges(const std::vector<std::string>& tokens, const std::vector<double>& scores,
                const std::unordered_map<std::string, int64_t>& vocab) {
  struct Merge {
    int64_t left, right;
    double score;
    size_t left_chars, right_chars;
  };
  std::vector<Merge> merges;
  auto chars = [](std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (size_t i = 0; i < tokens.size(); ++i) {  // the tokens are distinct
    const std::string& t = tokens[i];
    if (t.size() > 1024) continue;
    std::vector<Merge> local;
    for (size_t cut : cut_points(t)) {
      auto l = vocab.find(t.substr(0, cut)), r = vocab.find(t.substr(cut));
      if (l != vocab.end() && r != vocab.end())
        local.push_back({l->second, r->second, scores[i], chars(l->first), chars(r->first)});
    }
    std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return a.left != b.left ? a.left < b.left : a.right < b.right;
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.left_chars != b.left_chars) return a.left_chars > b.left_chars;
    return a.right_chars > b.right_chars;
  });
  json out = json::array();
  for (const Merge& m : merges) out.push_back({tokens[m.left], tokens[m.right]});
  return out;
}

// A "llama" (SentencePiece BPE) vocabulary with its scores, as transformers turns a GGUF file's
// into a tokenizer: BPE with byte fallback over the derived merges, Metaspace prepending "\u2581"
// to the text's first piece (tokenizer.ggml.add_space_prefix false: to none), the decoder of
// Llama's tokenizer.json, BOS by tokenizer.ggml.add_bos_token (default true).
GgufTokenizer sentencepiece_tokenizer(const GgufFile& f) {
  const auto& token_values = f.at("tokenizer.ggml.tokens").to_array().items;
  const GgufValue* scores_v = f.find("tokenizer.ggml.scores");
  EMBER_CHECK_KIND(Value, scores_v,
                   "[gguf_tokenizer] a SentencePiece (\"llama\") tokenizer needs "
                   "tokenizer.ggml.scores, which the file lacks");
  const auto& score_values = scores_v->to_array().items;
  const GgufValue* types_v = f.find("tokenizer.ggml.token_type");
  const auto* types = types_v ? &types_v->to_array().items : nullptr;
  EMBER_CHECK_KIND(Value,
                   score_values.size() == token_values.size() &&
                       (!types || types->size() == token_values.size()),
                   "[gguf_tokenizer] tokenizer.ggml.scores has ", score_values.size(),
                   " entries and tokenizer.ggml.token_type ", types ? types->size() : 0, " for ",
                   token_values.size(), " tokens");
  std::vector<std::string> tokens;
  std::vector<double> scores;
  std::unordered_map<std::string, int64_t> ids;
  json vocab = json::object(), added = json::array();
  for (size_t i = 0; i < token_values.size(); ++i) {
    tokens.push_back(token_values[i].to_string());
    scores.push_back(score_values[i].to_double());
    EMBER_CHECK_KIND(Value, std::isfinite(scores.back()), "[gguf_tokenizer] token ", i,
                     " has the score ", scores.back(),
                     " in tokenizer.ggml.scores; scores are finite");
    EMBER_CHECK_KIND(Value, ids.emplace(tokens.back(), static_cast<int64_t>(i)).second,
                     "[gguf_tokenizer] token '", tokens.back(),
                     "' appears twice in tokenizer.ggml.tokens");
    vocab[tokens.back()] = i;
    const int64_t type = types ? (*types)[i].to_int() : 1;
    if (type == 3 || type == 4)
      added.push_back(added_token(static_cast<int64_t>(i), tokens.back(), false, type == 3));
  }
  // The tokens the file names BOS, EOS, unknown and padding are special, as transformers makes
  // them (its tokenizer's bos_token and so on), whatever their type.
  std::vector<int64_t> named;
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}) {
    const int64_t id = id_or(f, key, -1);
    if (id < 0 || id >= static_cast<int64_t>(tokens.size()) ||
        std::find(named.begin(), named.end(), id) != named.end())
      continue;
    named.push_back(id);
    const int64_t type = types ? (*types)[static_cast<size_t>(id)].to_int() : 1;
    if (type != 3 && type != 4)
      added.push_back(added_token(id, tokens[static_cast<size_t>(id)], false, true));
  }
  const GgufValue* prefix_v = f.find("tokenizer.ggml.add_space_prefix");
  const bool prefix = prefix_v ? prefix_v->to_bool() : true;
  json decoders = {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                   {{"type", "ByteFallback"}},
                   {{"type", "Fuse"}}};
  if (prefix) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});

  GgufTokenizer out;
  out.bos_token_id = id_or(f, "tokenizer.ggml.bos_token_id", -1);
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    const int64_t id = id_or(f, key, -1);
    if (id >= 0 && std::find(out.eos_token_ids.begin(), out.eos_token_ids.end(), id) ==
                       out.eos_token_ids.end())
      out.eos_token_ids.push_back(id);
  }
  const GgufValue* add_bos_v = f.find("tokenizer.ggml.add_bos_token");
  const bool add_bos = (add_bos_v ? add_bos_v->to_bool() : true) && out.bos_token_id >= 0 &&
                       out.bos_token_id < static_cast<int64_t>(tokens.size());
  const json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Metaspace"},
        {"replacement", "\u2581"},
        {"prepend_scheme", prefix ? "first" : "never"},
        {"split", false}}},
      {"post_processor",
       add_bos ? template_with_bos(tokens[out.bos_token_id], out.bos_token_id) : json(nullptr)},
      {"decoder", {{"type", "Sequence"}, {"decoders", decoders}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", spm_merges(tokens, scores, ids)}}}};
  out.json = tokenizer.dump();
  return out;
}

}  // namespace

GgufTokenizer gguf_tokenizer(const GgufFile& f) {
  const GgufValue* model_v = f.find("tokenizer.ggml.model");
  EMBER_CHECK_KIND(Value, model_v,
                   "[gguf_tokenizer] the file has no tokenizer "
                   "(tokenizer.ggml.model); give a Hugging Face folder with tokenizer.json");
  const std::string model = model_v->to_string();
  if (model == "llama") return sentencepiece_tokenizer(f);
  EMBER_CHECK_KIND(Value, model == "gpt2", "[gguf_tokenizer] tokenizer.ggml.model is '", model,
                   "': ember reads byte-level BPE (\"gpt2\") and SentencePiece BPE (\"llama\") "
                   "tokenizers, not this kind");
  const GgufValue* pre_v = f.find("tokenizer.ggml.pre");
  const std::string pre = pre_v ? pre_v->to_string() : "default";
  json pre_tokenizer, normalizer = nullptr;
  bool ignore_merges = false, add_bos_default = false;
  if (pre == "default" || pre == "gpt-2" || pre == "gpt2") {
    pre_tokenizer = byte_level(true);
  } else if (pre == "llama-bpe" || pre == "llama3") {
    pre_tokenizer = split_then_bytes(kLlama3Regex);
    ignore_merges = add_bos_default = true;
  } else if (pre == "qwen2") {
    pre_tokenizer = split_then_bytes(kQwen2Regex);
    normalizer = {{"type", "NFC"}};
  } else if (pre == "smollm") {
    pre_tokenizer = {
        {"type", "Sequence"},
        {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, byte_level(true)}}};
  } else {
    throw Error(ErrorKind::Value, "[gguf_tokenizer] tokenizer.ggml.pre is '" + pre +
                                      "', a pre-tokenizer ember does not know (it reads default, "
                                      "gpt-2, llama-bpe, qwen2 and smollm)");
  }

  const auto& tokens = f.at("tokenizer.ggml.tokens").to_array().items;
  const GgufValue* types_v = f.find("tokenizer.ggml.token_type");
  const auto* types = types_v ? &types_v->to_array().items : nullptr;
  EMBER_CHECK_KIND(Value, !types || types->size() == tokens.size(),
                   "[gguf_tokenizer] tokenizer.ggml.token_type has ", types ? types->size() : 0,
                   " entries for ", tokens.size(), " tokens");
  json vocab = json::object(), added = json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i].to_string();
    EMBER_CHECK_KIND(Value, !vocab.contains(t), "[gguf_tokenizer] token '", t,
                     "' appears twice in tokenizer.ggml.tokens");
    vocab[t] = i;
    // llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    const int64_t type = types ? (*types)[i].to_int() : 1;
    if (type == 3 || type == 4)
      added.push_back(added_token(static_cast<int64_t>(i), t, type == 4, type == 3));
  }
  json merges = json::array();
  if (const GgufValue* m = f.find("tokenizer.ggml.merges"))
    for (const auto& v : m->to_array().items) merges.push_back(v.to_string());

  GgufTokenizer out;
  out.bos_token_id = id_or(f, "tokenizer.ggml.bos_token_id", -1);
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    const int64_t id = id_or(f, key, -1);
    if (id >= 0 && std::find(out.eos_token_ids.begin(), out.eos_token_ids.end(), id) ==
                       out.eos_token_ids.end())
      out.eos_token_ids.push_back(id);
  }
  const GgufValue* add_bos_v = f.find("tokenizer.ggml.add_bos_token");
  const bool add_bos = (add_bos_v ? add_bos_v->to_bool() : add_bos_default) &&
                       out.bos_token_id >= 0 &&
                       out.bos_token_id < static_cast<int64_t>(tokens.size());
  const json post = add_bos
                        ? template_with_bos(tokens[out.bos_token_id].to_string(), out.bos_token_id)
                        : json(nullptr);
  const json tokenizer = {{"version", "1.0"},
                          {"added_tokens", added},
                          {"normalizer", normalizer},
                          {"pre_tokenizer", pre_tokenizer},
                          {"post_processor", post},
                          {"decoder", byte_level(true)},
                          {"model",
                           {{"type", "BPE"},
                            {"dropout", nullptr},
                            {"unk_token", nullptr},
                            {"fuse_unk", false},
                            {"byte_fallback", false},
                            {"ignore_merges", ignore_merges},
                            {"vocab", vocab},
                            {"merges", merges}}}};
  out.json = tokenizer.dump();
  return out;
}

}  // namespace ember::io
