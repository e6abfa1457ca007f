// tools/ember/lm_loader.cpp: loading `ember generate --model`'s language model from a Hugging
// Face folder or a GGUF file.
#include "lm_loader.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "ember/io/gguf.h"
#include "ember/io/hf_weights.h"
#include "text_file.h"

namespace ember::cli {

namespace {

namespace fs = std::filesystem;

DType dtype_named(const std::string& name, DType weights) {
  if (name == "auto")
    return weights == kFloat32 || weights == kBFloat16 || weights == kFloat16 ? weights : kFloat32;
  if (name == "bfloat16") return kBFloat16;
  if (name == "float16") return kFloat16;
  return kFloat32;
}

using QuantizedWeights = std::vector<std::pair<std::string, QuantizedTensor>>;

// Parameters and quantized weights (elements), and the quantized weights' types (" (int8
// weights)", "" for none).
int64_t parameter_count(nn::Module& m, std::string* quantized = nullptr) {
  int64_t params = 0;
  std::set<std::string> types;
  for (const auto& module : m.modules()) {
    for (const auto& p : module->parameters(false)) params += p.numel();
    const QuantizedTensor* q = nullptr;
    if (auto* l = dynamic_cast<nn::LinearImpl*>(module.get())) q = &l->weight_quantized;
    if (auto* e = dynamic_cast<nn::EmbeddingImpl*>(module.get())) q = &e->weight_quantized;
    if (auto* c = dynamic_cast<nn::Conv1DImpl*>(module.get())) q = &c->weight_quantized;
    if (q && q->defined()) {
      params += q->rows() * q->cols();
      types.insert(quant_type_name(q->type()));
    }
  }
  if (quantized) {
    *quantized = "";
    for (const std::string& t : types) *quantized += (quantized->empty() ? "" : "/") + t;
    if (!quantized->empty()) *quantized = " (" + *quantized + " weights)";
  }
  return params;
}

std::string summary_of(const nn::LlamaConfig& c, nn::LlamaForCausalLMImpl& m,
                       const std::string& source) {
  std::string quantized;
  const int64_t params = parameter_count(m, &quantized);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: LlamaForCausalLM (%s), %lld layers, %lld heads (%lld key/value), %.1fM "
                "parameters%s, %s on %s",
                source.c_str(), c.model_type.c_str(), static_cast<long long>(c.num_hidden_layers),
                static_cast<long long>(c.num_attention_heads),
                static_cast<long long>(c.num_key_value_heads), params / 1e6, quantized.c_str(),
                dtype_name(m.dtype()), m.device().str().c_str());
  return line;
}

std::optional<QuantType> quant_type_named(const std::string& name) {
  if (name == "int8") return QuantType::Int8;
  if (name == "q8_0") return QuantType::Q8_0;
  if (name == "q4_0") return QuantType::Q4_0;
  if (name == "q4_1") return QuantType::Q4_1;
  EMBER_CHECK(name == "none", "[generate] --quantize takes none, int8, q8_0, q4_0 or q4_1, got ",
              name);
  return std::nullopt;
}

// Builds the model (Impl of Config) in the compute dtype -- "auto": that of the token embedding
// `embedding` -- and loads the weights into it.
// Weights already quantized (a GGUF file's Q8_0 blocks) go in place before the rest loads;
// weights_dtype_given is the file's dtype when its embedding is among them.
template <class Impl, class Config>
std::shared_ptr<Impl> build(const Config& config, const io::NamedTensors& weights,
                            std::initializer_list<const char*> embedding, Device device,
                            const std::string& dtype, const std::string& source,
                            const QuantizedWeights& quantized = {},
                            std::optional<DType> weights_dtype_given = std::nullopt) {
  io::NamedTensors shapes = weights;  // what the config is checked against
  for (const auto& [name, q] : quantized) shapes.emplace_back(name, zeros({1}).expand(q.sizes()));
  config.check_weights(shapes, source);
  DType weights_dtype = weights_dtype_given.value_or(kFloat32);
  for (const auto& [name, t] : weights)
    for (const char* e : embedding)
      if (name == e) weights_dtype = t.dtype();
  std::shared_ptr<Impl> model;
  {
    nn::init::SkipInitGuard no_random_init;  // every parameter is loaded next
    model = std::make_shared<Impl>(config);
  }
  model->to(device, dtype_named(dtype, weights_dtype));
  if constexpr (requires { model->set_quantized_weights(quantized); })
    if (!quantized.empty()) model->set_quantized_weights(quantized);
  model->load_hf_state_dict(weights);
  model->eval();
  return model;
}

// The loaded model, its file's tensors freed: what the allocator kept of them goes back to the
// system, so that generating holds the model, not also the loading's temporaries.
LanguageModel released(LanguageModel lm) {
  empty_host_cache();
  return lm;
}

std::shared_ptr<nn::LlamaForCausalLMImpl> build_llama(const nn::LlamaConfig& config,
                                                      const io::NamedTensors& weights,
                                                      Device device, const std::string& dtype,
                                                      const std::string& source,
                                                      std::optional<QuantType> quantize,
                                                      const QuantizedWeights& quantized = {}) {
  if (!quantize)
    return build<nn::LlamaForCausalLMImpl>(config, weights, {"model.embed_tokens.weight"}, device,
                                           dtype, source, quantized);
  // The layers' weights are quantized straight from the file's tensors (in the compute dtype,
  // as loading would convert them), so the model's float copies of them are never written:
  // loading holds the file and the quantized weights, not also a float model.
  DType weights_dtype = kFloat32;
  for (const auto& [name, t] : weights)
    if (name == "model.embed_tokens.weight") weights_dtype = t.dtype();
  const DType target = dtype_named(dtype, weights_dtype);
  QuantizedWeights all = quantized;
  io::NamedTensors rest;
  for (const auto& [name, t] : weights) {
    const bool layer_weight =
        t.dim() == 2 && (name.ends_with("_proj.weight") || name == "lm_head.weight" ||
                         name == "model.embed_tokens.weight");
    if (layer_weight && !(config.tie_word_embeddings && name == "lm_head.weight"))
      all.emplace_back(name, QuantizedTensor::quantize(t.to(target), *quantize));
    else
      rest.emplace_back(name, t);
  }
  auto model = build<nn::LlamaForCausalLMImpl>(config, rest, {"model.embed_tokens.weight"}, device,
                                               dtype, source, all, weights_dtype);
  model->quantize(*quantize);  // anything left (none for a complete file)
  return model;
}

LanguageModel from_llama(std::shared_ptr<nn::LlamaForCausalLMImpl> model) {
  LanguageModel lm;
  lm.dtype = model->dtype();
  lm.model = model;
  lm.module = model;
  lm.llama = std::move(model);
  return lm;
}

// A GPT-2 model built in the compute dtype from transformers-named weights.
LanguageModel build_gpt2(const nn::GPT2Config& config, const io::NamedTensors& weights,
                         const std::string& source, Device device, const std::string& dtype,
                         std::optional<QuantType> quantize) {
  auto model = build<nn::GPT2LMHeadModelImpl>(
      config, weights, {"transformer.wte.weight", "wte.weight"}, device, dtype, source);
  if (quantize) model->quantize(*quantize);
  LanguageModel lm;
  lm.dtype = model->transformer->ln_f->weight.dtype();
  std::string quantized;
  const int64_t params = parameter_count(*model, &quantized);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: GPT2LMHeadModel, %lld layers, %lld heads, %.1fM parameters%s, %s on %s",
                source.c_str(), static_cast<long long>(config.n_layer),
                static_cast<long long>(config.n_head), params / 1e6, quantized.c_str(),
                dtype_name(lm.dtype), device.str().c_str());
  lm.summary = line;
  lm.model = model;
  lm.module = std::move(model);
  lm.max_position_embeddings = config.n_positions;
  return lm;
}

// A GPT-2 folder's model: config.json, the weights, built in the compute dtype.
LanguageModel load_gpt2(const std::string& config_text, const fs::path& dir, Device device,
                        const std::string& dtype, std::optional<QuantType> quantize,
                        nn::GPT2Config& config) {
  config = nn::GPT2Config::from_json(config_text, (dir / "config.json").string());
  return build_gpt2(config, io::load_hf_weights(dir.string()).tensors, dir.string(), device, dtype,
                    quantize);
}

// A GGUF file's GPT-2 (general.architecture gpt2), its tensors dequantized.
LanguageModel load_gguf_gpt2(const io::GgufFile& file, const std::string& source, Device device,
                             const std::string& dtype, std::optional<QuantType> quantize) {
  const io::GgufHfGpt2 hf = io::gguf_to_hf_gpt2(file);
  nn::GPT2Config c;
  c.vocab_size = hf.config.vocab_size;
  c.n_positions = hf.config.n_positions;
  c.n_embd = hf.config.n_embd;
  c.n_layer = hf.config.n_layer;
  c.n_head = hf.config.n_head;
  c.n_inner = hf.config.n_inner;
  c.layer_norm_epsilon = hf.config.layer_norm_epsilon;
  c.activation_function = "gelu_new";  // llama.cpp's GPT-2 graph: GELU, tanh approximation
  const io::GgufTokenizer tok = io::gguf_tokenizer(file);
  LanguageModel lm = build_gpt2(c, hf.tensors, source, device, dtype, quantize);
  lm.tokenizer = data::BpeTokenizer::from_json(tok.json, source + " (tokenizer.ggml.*)");
  lm.generation.eos_token_ids = tok.eos_token_ids;
  lm.generation.top_k = 50;
  return lm;
}

// A folder's tokenizer.json and generation_config.json (transformers' defaults without one; the
// config's eos ids where it names none).
void read_tokenizer_and_generation(const fs::path& dir, const std::vector<int64_t>& eos,
                                   LanguageModel& lm) {
  lm.tokenizer = data::BpeTokenizer::from_file((dir / "tokenizer.json").string());
  const fs::path gen = dir / "generation_config.json";
  if (fs::is_regular_file(gen)) {
    lm.generation =
        nn::GenerationConfig::from_json(read_text_file(gen.string(), "generate"), gen.string());
  } else {
    lm.generation.top_k = 50;  // transformers' default when sampling is asked for
  }
  if (lm.generation.eos_token_ids.empty()) lm.generation.eos_token_ids = eos;
}

LanguageModel load_folder(const fs::path& dir, Device device, const std::string& dtype,
                          std::optional<QuantType> quantize) {
  for (const char* file : {"config.json", "tokenizer.json"})
    EMBER_CHECK_KIND(IO, fs::is_regular_file(dir / file), "[generate] ", dir.string(), " has no ",
                     file,
                     "; --model takes a Hugging Face model folder or a .gguf "
                     "file");
  const fs::path config_path = dir / "config.json";
  const std::string config_text = read_text_file(config_path.string(), "generate");
  const nlohmann::json probe = nlohmann::json::parse(config_text, nullptr, false);
  if (probe.is_object() && probe.value("model_type", std::string()) == "gpt2") {
    nn::GPT2Config config;
    LanguageModel lm = load_gpt2(config_text, dir, device, dtype, quantize, config);
    read_tokenizer_and_generation(dir, config.eos_token_ids, lm);
    return lm;
  }
  const nn::LlamaConfig config = nn::LlamaConfig::from_json(config_text, config_path.string());
  LanguageModel lm = from_llama(build_llama(config, io::load_hf_weights(dir.string()).tensors,
                                            device, dtype, dir.string(), quantize));
  read_tokenizer_and_generation(dir, config.eos_token_ids, lm);
  lm.max_position_embeddings = config.max_position_embeddings;
  lm.summary = summary_of(config, *lm.llama, dir.string());
  return lm;
}

// A GGUF file's model: a GPT-2 (general.architecture gpt2, dequantized), else a Llama, its Q8_0,
// Q4_0 and Q4_1 tensors kept as stored (the layers compute with them), the other quantized ones
// (K-quants) dequantized to float32.
LanguageModel load_gguf_file(const fs::path& path, Device device, const std::string& dtype,
                             std::optional<QuantType> quantize) {
  io::GgufFile file = io::load_gguf(path.string(), Device(kCPU), {.keep_quantized = true});
  const io::GgufValue* arch = file.find("general.architecture");
  if (arch && arch->type() == io::GgufType::String && arch->to_string() == "gpt2") {
    for (const io::GgufTensor& q : file.quantized)
      file.tensors.emplace_back(q.name, io::gguf_dequantize(q));
    file.quantized.clear();
    return load_gguf_gpt2(file, path.string(), device, dtype, quantize);
  }
  io::GgufHfLlama hf = io::gguf_to_hf_llama(file);
  QuantizedWeights quantized;
  for (const io::GgufTensor& q : hf.quantized) {
    if (std::optional<QuantizedTensor> w = io::gguf_quantized_tensor(q))
      quantized.emplace_back(q.name, std::move(*w));
    else
      hf.tensors.emplace_back(q.name, io::gguf_dequantize(q));
  }
  hf.quantized.clear();
  nn::LlamaConfig c;
  const io::GgufLlamaConfig& g = hf.config;
  c.vocab_size = g.vocab_size;
  c.hidden_size = g.hidden_size;
  c.intermediate_size = g.intermediate_size;
  c.num_hidden_layers = g.num_hidden_layers;
  c.num_attention_heads = g.num_attention_heads;
  c.num_key_value_heads = g.num_key_value_heads;
  c.head_dim = g.head_dim;
  c.max_position_embeddings = g.max_position_embeddings;
  c.rms_norm_eps = g.rms_norm_eps;
  c.rope_theta = g.rope_theta;
  c.rope_freq_factors = g.rope_freq_factors;
  c.tie_word_embeddings = g.tie_word_embeddings;
  for (const auto& [name, t] : hf.tensors)
    if (name == "model.layers.0.self_attn.q_proj.bias") c.qkv_bias = true;
  const io::GgufTokenizer tok = io::gguf_tokenizer(file);
  LanguageModel lm =
      from_llama(build_llama(c, hf.tensors, device, dtype, path.string(), quantize, quantized));
  lm.tokenizer = data::BpeTokenizer::from_json(tok.json, path.string() + " (tokenizer.ggml.*)");
  lm.generation.eos_token_ids = tok.eos_token_ids;
  lm.generation.top_k = 50;
  lm.max_position_embeddings = c.max_position_embeddings;
  lm.summary = summary_of(c, *lm.llama, path.string());
  return lm;
}

}  // namespace

LanguageModel load_language_model(const std::string& path, Device device, const std::string& dtype,
                                  const std::string& quantize) {
  const std::optional<QuantType> q = quant_type_named(quantize);
  const fs::path p(path);
  if (fs::is_directory(p)) return released(load_folder(p, device, dtype, q));
  EMBER_CHECK_KIND(IO, fs::is_regular_file(p), "[generate] --model ", path,
                   " is neither a folder nor a file");
  return released(load_gguf_file(p, device, dtype, q));
}

}  // namespace ember::cli
