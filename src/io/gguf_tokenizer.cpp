// io/gguf_tokenizer.cpp: a GGUF file's tokenizer.ggml.* metadata turned into the tokenizer.json
// of the same byte-level BPE tokenizer -- vocabulary, merges, control and user-defined tokens as
// added tokens, the pre-tokenizer that llama.cpp's tokenizer.ggml.pre names, BOS by
// tokenizer.ggml.add_bos_token -- so one tokenizer implementation (data::BpeTokenizer) reads
// both.
#include <algorithm>
#include <nlohmann/json.hpp>

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

}  // namespace

GgufTokenizer gguf_tokenizer(const GgufFile& f) {
  const GgufValue* model_v = f.find("tokenizer.ggml.model");
  EMBER_CHECK_KIND(Value, model_v,
                   "[gguf_tokenizer] the file has no tokenizer "
                   "(tokenizer.ggml.model); give a Hugging Face folder with tokenizer.json");
  const std::string model = model_v->to_string();
  EMBER_CHECK_KIND(Value, model == "gpt2", "[gguf_tokenizer] tokenizer.ggml.model is '", model,
                   "': ember reads byte-level BPE tokenizers (\"gpt2\"); SentencePiece (\"llama\") "
                   "and other kinds are not supported yet");
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
      added.push_back({{"id", i},
                       {"content", t},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", type == 4},
                       {"special", type == 3}});
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
  json post = nullptr;
  if (add_bos) {
    const std::string bos = tokens[out.bos_token_id].to_string();
    post = {
        {"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "B"}, {"type_id", 0}}}}}},
        {"special_tokens", {{bos, {{"id", bos}, {"ids", {out.bos_token_id}}, {"tokens", {bos}}}}}}};
  }
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
