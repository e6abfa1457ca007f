// io/gguf_llama.cpp: a Llama GGUF file's tensors under the Hugging Face LlamaForCausalLM names,
// with q and k back in Hugging Face's row order, and its hyperparameters as config.json names them.
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/error.h"
#include "ember/io/gguf.h"
#include "io/gguf_format.h"

namespace ember::io {

namespace {

// The per-layer names: llama.cpp's after "blk.N.", Hugging Face's after "model.layers.N.".
const std::pair<const char*, const char*> kLayerNames[] = {
    {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},
    {"attn_output", "self_attn.o_proj"},
    {"ffn_gate", "mlp.gate_proj"},
    {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},
    {"attn_norm", "input_layernorm"},
    {"ffn_norm", "post_attention_layernorm"},
};

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The inverse of the converter's permutation: its rows, seen as (heads, head_dim / 2, 2), go back
// to (heads, 2, head_dim / 2). Works on weights [rows, in], biases [rows] and blocks [rows, bytes].
Tensor unpermute_rows(const Tensor& t, int64_t heads, const std::string& name) {
  const int64_t rows = t.size(0);
  EMBER_CHECK(heads > 0 && rows % (2 * heads) == 0, "[gguf_to_hf_llama] tensor '", name, "' has ",
              rows, " rows, which do not split into ", heads,
              " heads of an even size; check llama.attention.head_count(_kv)");
  std::vector<int64_t> split = {heads, rows / heads / 2, 2};
  for (size_t d = 1; d < t.sizes().size(); ++d) split.push_back(t.size(static_cast<int64_t>(d)));
  return t.reshape(split).transpose(1, 2).contiguous().reshape(t.sizes());
}

int64_t meta_int(const GgufFile& file, const std::string& key, std::optional<int64_t> fallback) {
  return detail::gguf_meta_int(file, key, fallback, "gguf_to_hf_llama");
}

double meta_double(const GgufFile& file, const std::string& key, double fallback) {
  return detail::gguf_meta_double(file, key, fallback, "gguf_to_hf_llama");
}

}  // namespace

namespace detail {

int64_t gguf_meta_int(const GgufFile& file, const std::string& key, std::optional<int64_t> fallback,
                      const char* who) {
  const GgufValue* v = file.find(key);
  if (!v) {
    EMBER_CHECK(fallback.has_value(), "[", who, "] the file lacks metadata '", key,
                "', which the model needs");
    return *fallback;
  }
  EMBER_CHECK(v->is_integer(), "[", who, "] metadata '", key, "' is a ", gguf_type_name(v->type()),
              ", not an integer");
  return v->to_int();
}

double gguf_meta_double(const GgufFile& file, const std::string& key, double fallback,
                        const char* who) {
  const GgufValue* v = file.find(key);
  if (!v) return fallback;
  EMBER_CHECK(v->is_float() || v->is_integer(), "[", who, "] metadata '", key, "' is a ",
              gguf_type_name(v->type()), ", not a number");
  return v->to_double();
}

void gguf_expect_architecture(const GgufFile& file, const std::string& arch, const char* who) {
  const GgufValue* a = file.find("general.architecture");
  EMBER_CHECK(
      a && a->type() == GgufType::String && a->to_string() == arch, "[", who,
      "] the file's general.architecture is ",
      a && a->type() == GgufType::String ? "'" + a->to_string() + "'" : std::string("missing"),
      ", not '", arch, "'");
}

}  // namespace detail

std::string gguf_hf_llama_name(const std::string& name) {
  if (name == "token_embd.weight") return "model.embed_tokens.weight";
  if (name == "output_norm.weight") return "model.norm.weight";
  if (name == "output.weight") return "lm_head.weight";
  if (!starts_with(name, "blk.")) return "";
  size_t i = 4;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i == 4 || i >= name.size() || name[i] != '.') return "";
  const std::string layer = name.substr(4, i - 4);
  const std::string rest = name.substr(i + 1);  // e.g. attn_q.weight
  for (const auto& [gguf, hf] : kLayerNames)
    for (const char* suffix : {".weight", ".bias"})
      if (rest == std::string(gguf) + suffix) return "model.layers." + layer + "." + hf + suffix;
  return "";
}

GgufHfLlama gguf_to_hf_llama(const GgufFile& file) {
  detail::gguf_expect_architecture(file, "llama", "gguf_to_hf_llama");
  GgufHfLlama out;
  GgufLlamaConfig& c = out.config;
  c.hidden_size = meta_int(file, "llama.embedding_length", std::nullopt);
  c.num_hidden_layers = meta_int(file, "llama.block_count", std::nullopt);
  c.num_attention_heads = meta_int(file, "llama.attention.head_count", std::nullopt);
  c.num_key_value_heads = meta_int(file, "llama.attention.head_count_kv", c.num_attention_heads);
  c.intermediate_size = meta_int(file, "llama.feed_forward_length", 0);
  c.max_position_embeddings = meta_int(file, "llama.context_length", 0);
  EMBER_CHECK(c.num_attention_heads > 0 && c.num_key_value_heads > 0 &&
                  c.num_attention_heads % c.num_key_value_heads == 0,
              "[gguf_to_hf_llama] head_count ", c.num_attention_heads, " and head_count_kv ",
              c.num_key_value_heads, " must be positive, the first a multiple of the second");
  c.head_dim = meta_int(file, "llama.attention.key_length", c.hidden_size / c.num_attention_heads);
  c.rms_norm_eps = meta_double(file, "llama.attention.layer_norm_rms_epsilon", 1e-6);
  c.rope_theta = meta_double(file, "llama.rope.freq_base", 10000.0);
  c.tie_word_embeddings = true;
  c.vocab_size = 0;

  auto convert = [&](const std::string& name, const Tensor& t) -> std::pair<std::string, Tensor> {
    if (name == "rope_freqs.weight") {
      EMBER_CHECK(t.dim() == 1 && t.is_floating_point() && t.size(0) <= 65536,
                  "[gguf_to_hf_llama] rope_freqs.weight must be a 1-D float tensor of at most "
                  "65536 factors, got ",
                  shape_str(t.sizes()), " ", dtype_name(t.dtype()));
      const Tensor f = t.to(Device(kCPU), kFloat32).contiguous();
      c.rope_freq_factors.assign(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
      return {};
    }
    std::string hf = gguf_hf_llama_name(name);
    EMBER_CHECK(!hf.empty(), "[gguf_to_hf_llama] tensor '", name,
                "' has no Hugging Face Llama name; is this a Llama file?");
    if (name == "output.weight") c.tie_word_embeddings = false;
    if (name == "token_embd.weight" && t.dim() >= 1) c.vocab_size = t.size(0);
    const std::string tail = name.substr(name.find('.', 4) + 1);
    if (starts_with(tail, "attn_q.")) return {hf, unpermute_rows(t, c.num_attention_heads, name)};
    if (starts_with(tail, "attn_k.")) return {hf, unpermute_rows(t, c.num_key_value_heads, name)};
    return {hf, t};
  };
  for (const auto& [name, t] : file.tensors) {
    auto [hf, u] = convert(name, t);
    if (!hf.empty()) out.tensors.emplace_back(std::move(hf), std::move(u));
  }
  for (const GgufTensor& q : file.quantized) {
    auto [hf, blocks] = convert(q.name, q.blocks);
    if (q.name == "token_embd.weight" && !q.shape.empty()) c.vocab_size = q.shape[0];
    if (!hf.empty()) out.quantized.push_back({std::move(hf), q.type, q.shape, std::move(blocks)});
  }
  c.vocab_size = meta_int(file, "llama.vocab_size", c.vocab_size);
  return out;
}

}  // namespace ember::io
