// tools/ember/sentence_encoder.cpp: reading a sentence-transformers folder and encoding texts
// with it.
#include "sentence_encoder.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/io/hf_weights.h"
#include "text_file.h"

namespace ember::cli {

namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  try {
    return nlohmann::json::parse(read_text_file(path.string(), "embed"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::IO, "[embed] " + path.string() + " is not valid JSON: " + e.what());
  }
}

// The pooling of a sentence-transformers 1_Pooling/config.json: exactly one mode set, over the
// transformer's width.
std::string read_pooling(const fs::path& path, int64_t hidden_size) {
  const nlohmann::json p = read_json(path);
  const std::pair<const char*, const char*> modes[] = {
      {"pooling_mode_cls_token", "cls"},
      {"pooling_mode_max_tokens", "max"},
      {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len"},
      {"pooling_mode_mean_tokens", "mean"}};
  std::vector<std::string> set;
  std::string pooling;
  for (const auto& [key, name] : modes) {
    if (!p.contains(key) || p[key].is_null()) continue;
    EMBER_CHECK_KIND(Value, p[key].is_boolean(), "[embed] ", path.string(), ": \"", key,
                     "\" must be true or false, not ", p[key].dump());
    if (p[key].get<bool>()) {
      set.push_back(key);
      pooling = name;
    }
  }
  for (const char* unsupported : {"pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"})
    EMBER_CHECK_KIND(Value, !p.value(unsupported, false), "[embed] ", path.string(), ": \"",
                     unsupported, "\" is not supported (cls, max, mean and mean_sqrt_len are)");
  EMBER_CHECK_KIND(Value, set.size() == 1, "[embed] ", path.string(), " sets ", set.size(),
                   " pooling modes; ember pools with exactly one of pooling_mode_cls_token, "
                   "pooling_mode_max_tokens, pooling_mode_mean_tokens and "
                   "pooling_mode_mean_sqrt_len_tokens");
  if (p.contains("word_embedding_dimension") && !p["word_embedding_dimension"].is_null()) {
    const auto& dim = p["word_embedding_dimension"];
    EMBER_CHECK_KIND(Value, dim.is_number_integer() && dim.get<int64_t>() == hidden_size,
                     "[embed] ", path.string(), ": \"word_embedding_dimension\" is ", dim.dump(),
                     ", but the transformer's hidden_size is ", hidden_size,
                     "; the pooling belongs to another model");
  }
  return pooling;
}

}  // namespace

SentenceEncoder SentenceEncoder::load(const std::string& dir_name, Device device) {
  const fs::path dir(dir_name);
  EMBER_CHECK_KIND(IO, fs::is_directory(dir), "[embed] ", dir_name,
                   " is not a directory; pass a sentence-transformers or BERT model folder");
  // modules.json names the transformer's folder, the pooling's and whether to normalize.
  fs::path transformer = dir, pooling_config;
  bool normalize = false;
  if (fs::exists(dir / "modules.json")) {
    for (const auto& m : read_json(dir / "modules.json")) {
      const std::string type = m.value("type", ""), path = m.value("path", "");
      if (type.ends_with("models.Transformer")) transformer = dir / path;
      if (type.ends_with("models.Pooling")) pooling_config = dir / path / "config.json";
      if (type.ends_with("models.Normalize")) normalize = true;
    }
  }
  for (const char* file : {"config.json", "tokenizer.json"})
    EMBER_CHECK_KIND(IO, fs::exists(transformer / file), "[embed] ", (transformer / file).string(),
                     " is missing (ember reads config.json, tokenizer.json and the weights: "
                     "model.safetensors or pytorch_model.bin, single or sharded)");
  const fs::path config_path = transformer / "config.json",
                 tokenizer_path = transformer / "tokenizer.json";
  nn::BertConfig config = nn::BertConfig::from_json(read_text_file(config_path.string(), "embed"),
                                                    config_path.string());
  // The weights' shapes bound every size the config claims before a model is built.
  io::HfWeights weights = io::load_hf_weights(transformer.string());
  config.check_weights(weights.tensors, weights.files.size() == 1
                                            ? weights.files[0]
                                            : transformer.string() + " (sharded weights)");
  data::WordPieceTokenizer tokenizer = data::WordPieceTokenizer::from_file(tokenizer_path.string());
  EMBER_CHECK_KIND(Value, tokenizer.max_id() < config.vocab_size, "[embed] ",
                   tokenizer_path.string(), " has token ids up to ", tokenizer.max_id(),
                   ", but the model's vocabulary (vocab_size in ", config_path.string(), ") has ",
                   config.vocab_size, "; the tokenizer is of another model");
  nn::BertModel model(config);
  model->load_hf_state_dict(weights.tensors);
  model->eval();
  model->to(device);
  SentenceEncoder enc(std::move(tokenizer), model, device);
  enc.normalize = normalize;
  if (!pooling_config.empty()) enc.pooling = read_pooling(pooling_config, config.hidden_size);
  enc.max_seq_length = config.max_position_embeddings;
  if (enc.tokenizer.truncation_max_length > 0)
    enc.max_seq_length = std::min(enc.max_seq_length, enc.tokenizer.truncation_max_length);
  for (const fs::path& st :
       {transformer / "sentence_bert_config.json", dir / "sentence_bert_config.json"}) {
    if (!fs::exists(st)) continue;
    const nlohmann::json s = read_json(st);
    if (!s.contains("max_seq_length") || s["max_seq_length"].is_null()) break;
    const auto& len = s["max_seq_length"];
    EMBER_CHECK_KIND(Value, len.is_number_integer() && len.get<int64_t>() > 0, "[embed] ",
                     st.string(), ": \"max_seq_length\" must be a positive whole number, not ",
                     len.dump());
    enc.max_seq_length = std::min(config.max_position_embeddings, len.get<int64_t>());
    break;
  }
  return enc;
}

Tensor SentenceEncoder::encode(const std::vector<std::string>& texts, int64_t batch_size) {
  NoGradGuard no_grad;
  std::vector<Tensor> out;
  for (size_t start = 0; start < texts.size(); start += static_cast<size_t>(batch_size)) {
    const size_t end = std::min(texts.size(), start + static_cast<size_t>(batch_size));
    std::vector<std::string> batch(texts.begin() + static_cast<std::ptrdiff_t>(start),
                                   texts.begin() + static_cast<std::ptrdiff_t>(end));
    auto [ids, mask] = tokenizer.encode_batch(batch, max_seq_length);
    ids = ids.to(device);
    mask = mask.to(device);
    // (N, L, hidden)
    Tensor hidden = model->forward(ids, mask).last_hidden_state;
    Tensor m = mask.unsqueeze(-1).to(hidden.dtype());
    Tensor pooled;
    if (pooling == "cls") {
      pooled = hidden.select(1, 0);
    } else if (pooling == "max") {
      pooled = std::get<0>(hidden.masked_fill(m == 0, -1e9).max(1));
    } else {
      Tensor count = m.sum({1}).clamp(1e-9, std::nullopt);
      pooled = (hidden * m).sum({1}) / (pooling == "mean" ? count : sqrt(count));
    }
    if (normalize) pooled = nn::F::normalize(pooled, 2.0, 1);
    out.push_back(pooled.cpu());
  }
  return out.empty() ? zeros({0, model->config.hidden_size}) : cat(out, 0);
}

}  // namespace ember::cli
