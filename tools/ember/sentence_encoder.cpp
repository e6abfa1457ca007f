// tools/ember/sentence_encoder.cpp: reading a sentence-transformers folder and encoding texts
// with it.
#include "sentence_encoder.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/ember.h"
#include "ember/io/safetensors.h"

namespace ember::cli {

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK_KIND(IO, in.good(), "[embed] cannot read ", path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_json(const fs::path& path) {
  try {
    return nlohmann::json::parse(read_text(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::IO, "[embed] " + path.string() + " is not valid JSON: " + e.what());
  }
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
  for (const char* file : {"config.json", "tokenizer.json", "model.safetensors"})
    EMBER_CHECK_KIND(IO, fs::exists(transformer / file), "[embed] ", (transformer / file).string(),
                     " is missing (ember reads config.json, tokenizer.json and model.safetensors)");
  nn::BertConfig config = nn::BertConfig::from_json(read_text(transformer / "config.json"));
  nn::BertModel model(config);
  io::SafetensorsFile weights = io::load_safetensors((transformer / "model.safetensors").string());
  model->load_hf_state_dict(weights.tensors);
  model->eval();
  model->to(device);
  SentenceEncoder enc(
      data::WordPieceTokenizer::from_file((transformer / "tokenizer.json").string()), model,
      device);
  enc.normalize = normalize;
  if (!pooling_config.empty()) {
    const nlohmann::json p = read_json(pooling_config);
    if (p.value("pooling_mode_cls_token", false)) enc.pooling = "cls";
    if (p.value("pooling_mode_max_tokens", false)) enc.pooling = "max";
    if (p.value("pooling_mode_mean_sqrt_len_tokens", false)) enc.pooling = "mean_sqrt_len";
    if (p.value("pooling_mode_mean_tokens", false)) enc.pooling = "mean";
  }
  enc.max_seq_length = config.max_position_embeddings;
  if (enc.tokenizer.truncation_max_length > 0)
    enc.max_seq_length = std::min(enc.max_seq_length, enc.tokenizer.truncation_max_length);
  for (const fs::path& st :
       {transformer / "sentence_bert_config.json", dir / "sentence_bert_config.json"}) {
    if (!fs::exists(st)) continue;
    const auto& len = read_json(st).value("max_seq_length", nlohmann::json());
    if (len.is_number_integer())
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
