// nn/llama.cpp: the Llama-family decoder of ember/nn/llama.h -- transformers' LlamaForCausalLM
// (and Qwen2/Mistral, the same computation) with its rotary embedding kinds, grouped-query
// attention through F::scaled_dot_product_attention, a key/value cache, and loading its state
// dict by name.
#include "ember/nn/llama.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>

#include "ember/autograd.h"
#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "nn/json_fields.h"

namespace ember::nn {

namespace {

// config.json's "rope_scaling", or transformers 5's "rope_parameters" (`key`), which also holds
// rope_theta.
RopeScaling read_rope_scaling(const nlohmann::json& j, const std::string& source, const char* key) {
  RopeScaling r;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return r;
  const detail::JsonFields f(*it, source + " " + key);
  // transformers reads "rope_type", older files "type".
  r.type = f.string("rope_type", f.string("type", "default"));
  EMBER_CHECK(
      r.type == "default" || r.type == "linear" || r.type == "dynamic" || r.type == "llama3",
      f.where("rope_type"), " is '", r.type,
      "'; ember's Llama has the rope scaling kinds default, linear, dynamic and llama3");
  if (r.type == "default") return r;
  r.factor = f.number("factor", 1.0, 1e-6, 1e6);
  if (r.type == "llama3") {
    r.low_freq_factor = f.number("low_freq_factor", 1.0, 1e-6, 1e6);
    r.high_freq_factor = f.number("high_freq_factor", 4.0, 1e-6, 1e6);
    EMBER_CHECK(r.high_freq_factor > r.low_freq_factor, f.where("high_freq_factor"), " (",
                r.high_freq_factor, ") must be above low_freq_factor (", r.low_freq_factor, ")");
    r.original_max_position_embeddings =
        f.integer("original_max_position_embeddings", 8192, 1, int64_t{1} << 24);
  }
  return r;
}

}  // namespace

LlamaConfig LlamaConfig::from_json(const std::string& text, const std::string& source) {
  const nlohmann::json j = detail::parse_json(text, "LlamaConfig", source);
  const detail::JsonFields f(j, source);
  LlamaConfig c;
  c.model_type = f.string("model_type", "llama");
  EMBER_CHECK(c.model_type == "llama" || c.model_type == "mistral" || c.model_type == "qwen2",
              f.where("model_type"), " is '", c.model_type,
              "'; ember's LlamaForCausalLM reads llama, mistral and qwen2 models (GPT-2 is "
              "GPT2LMHeadModel)");
  const std::string act = f.string("hidden_act", "silu");
  EMBER_CHECK(act == "silu", f.where("hidden_act"), " is '", act,
              "'; the Llama family uses silu (SwiGLU)");
  constexpr int64_t kMaxVocab = int64_t{1} << 24, kMaxWidth = int64_t{1} << 16;
  c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, kMaxVocab);
  c.hidden_size = f.integer("hidden_size", c.hidden_size, 1, kMaxWidth);
  c.intermediate_size = f.integer("intermediate_size", c.intermediate_size, 1, 8 * kMaxWidth);
  c.num_hidden_layers = f.integer("num_hidden_layers", c.num_hidden_layers, 1, 1024);
  c.num_attention_heads = f.integer("num_attention_heads", c.num_attention_heads, 1, 4096);
  c.num_key_value_heads =
      f.integer("num_key_value_heads", c.num_attention_heads, 1, c.num_attention_heads);
  EMBER_CHECK(c.num_attention_heads % c.num_key_value_heads == 0, f.where("num_attention_heads"),
              " (", c.num_attention_heads, ") is not a multiple of \"num_key_value_heads\" (",
              c.num_key_value_heads, ")");
  const bool has_head_dim = j.contains("head_dim") && !j["head_dim"].is_null();
  if (has_head_dim) {
    c.head_dim = f.integer("head_dim", 0, 2, 4096);
  } else {
    EMBER_CHECK(c.hidden_size % c.num_attention_heads == 0, f.where("hidden_size"), " ",
                c.hidden_size, " is not a multiple of \"num_attention_heads\" ",
                c.num_attention_heads, " (and there is no head_dim)");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  EMBER_CHECK(c.head_dim % 2 == 0, f.where("head_dim"), " is ", c.head_dim,
              "; rotary embeddings need an even head size");
  c.max_position_embeddings =
      f.integer("max_position_embeddings", c.max_position_embeddings, 1, int64_t{1} << 24);
  c.rms_norm_eps = f.number("rms_norm_eps", c.rms_norm_eps, 0, 1);
  c.rope_theta = f.number("rope_theta", c.rope_theta, 1, 1e12);
  // transformers 5 writes rope_theta and the scaling together as "rope_parameters".
  if (auto p = j.find("rope_parameters"); p != j.end() && !p->is_null()) {
    c.rope_theta = detail::JsonFields(*p, source + " rope_parameters")
                       .number("rope_theta", c.rope_theta, 1, 1e12);
    c.rope_scaling = read_rope_scaling(j, source, "rope_parameters");
  } else {
    c.rope_scaling = read_rope_scaling(j, source, "rope_scaling");
  }
  if (c.model_type == "qwen2") {
    c.qkv_bias = true;
    if (f.boolean("use_sliding_window", false))
      c.sliding_window = f.integer("sliding_window", 4096, 1, int64_t{1} << 24);
  } else {
    c.qkv_bias = c.o_bias = f.boolean("attention_bias", false);
    c.mlp_bias = f.boolean("mlp_bias", false);
    if (j.contains("sliding_window") && !j["sliding_window"].is_null())
      c.sliding_window = f.integer("sliding_window", 0, 1, int64_t{1} << 24);
  }
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  if (j.contains("bos_token_id") && !j["bos_token_id"].is_null())
    c.bos_token_id = f.integer("bos_token_id", -1, 0, kMaxVocab);
  // Some configs name ids past the embedding (added tokens beyond vocab_size); those simply never
  // come out of the model.
  c.eos_token_ids = f.token_ids("eos_token_id");
  c.torch_dtype = f.string("torch_dtype", "");
  return c;
}

void LlamaConfig::check_weights(const StateDict& weights, const std::string& source) const {
  const detail::WeightShapes w(weights, "LlamaForCausalLM", source);
  w.expect("vocab_size", vocab_size, "model.embed_tokens.weight", 0);
  w.expect("hidden_size", hidden_size, "model.embed_tokens.weight", 1);
  w.expect_layers("num_hidden_layers", num_hidden_layers, "model.layers.");
  w.expect("intermediate_size", intermediate_size, "model.layers.0.mlp.gate_proj.weight", 0);
  w.expect("num_attention_heads x head_dim", num_attention_heads * head_dim,
           "model.layers.0.self_attn.q_proj.weight", 0);
  w.expect("num_key_value_heads x head_dim", num_key_value_heads * head_dim,
           "model.layers.0.self_attn.k_proj.weight", 0);
}

// --- rotary embedding

LlamaRotaryEmbedding::LlamaRotaryEmbedding(const LlamaConfig& c) : config_(c) {
  EMBER_CHECK_KIND(Shape,
                   c.rope_freq_factors.empty() ||
                       static_cast<int64_t>(c.rope_freq_factors.size()) == c.head_dim / 2,
                   "[LlamaRotaryEmbedding] rope_freq_factors has ", c.rope_freq_factors.size(),
                   " factors; a head_dim of ", c.head_dim, " has ", c.head_dim / 2, " frequencies");
  for (float f : c.rope_freq_factors)
    EMBER_CHECK(std::isfinite(f) && f > 0, "[LlamaRotaryEmbedding] a rope frequency factor is ", f,
                "; each must be positive and finite");
  base_inv_freq_ = inv_freq(0);
}

// transformers computes these in float32 (base ** (arange(0, dim, 2) / dim), then 1 / that), as
// here, so that the angles agree to the last bits.
std::vector<float> LlamaRotaryEmbedding::inv_freq(int64_t seq_len) const {
  const int64_t dim = config_.head_dim;
  const RopeScaling& r = config_.rope_scaling;
  double base = config_.rope_theta;
  if (r.type == "dynamic" && seq_len > config_.max_position_embeddings) {
    const double s = static_cast<double>(seq_len) / config_.max_position_embeddings;
    base *= std::pow(r.factor * s - (r.factor - 1), static_cast<double>(dim) / (dim - 2));
  }
  std::vector<float> f(dim / 2);
  for (int64_t i = 0; i < dim / 2; ++i) {
    const float e = static_cast<float>(2 * i) / static_cast<float>(dim);
    f[i] = 1.0f / std::pow(static_cast<float>(base), e);
  }
  if (r.type == "linear") {
    for (float& x : f) x = static_cast<float>(x / r.factor);
  } else if (r.type == "llama3") {
    const double old_len = static_cast<double>(r.original_max_position_embeddings);
    const double low_wavelen = old_len / r.low_freq_factor;
    const double high_wavelen = old_len / r.high_freq_factor;
    for (float& x : f) {
      const float wavelen = 2 * std::numbers::pi_v<float> / x;
      if (wavelen > low_wavelen) {
        x = static_cast<float>(x / r.factor);
      } else if (wavelen >= high_wavelen) {
        const float smooth = static_cast<float>((old_len / wavelen - r.low_freq_factor) /
                                                (r.high_freq_factor - r.low_freq_factor));
        x = (1 - smooth) * static_cast<float>(x / r.factor) + smooth * x;
      }
    }
  }
  for (size_t i = 0; i < config_.rope_freq_factors.size() && i < f.size(); ++i)
    f[i] = f[i] / config_.rope_freq_factors[i];
  return f;
}

std::pair<Tensor, Tensor> LlamaRotaryEmbedding::cos_sin(const Tensor& positions, int64_t seq_len,
                                                        DType dtype) const {
  const std::vector<float> f =
      config_.rope_scaling.type == "dynamic" ? inv_freq(seq_len) : base_inv_freq_;
  const auto half = static_cast<int64_t>(f.size());
  Tensor inv = from_vector(f, Shape{half}).to(positions.device());
  Tensor angles = positions.to(kFloat32).unsqueeze(-1) * inv;  // (B, L, half)
  Tensor emb = cat({angles, angles}, -1).unsqueeze(1);         // (B, 1, L, dim)
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

namespace {

// (x1, x2) -> (-x2, x1) over the last dimension's halves.
Tensor rotate_half(const Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  return x * cos + rotate_half(x) * sin;
}

}  // namespace

// --- stacked projections

namespace {

// Whether `part` is the view of `whole` that stacking made: rows `row0`.. of it.
bool views_rows(const Tensor& part, const Tensor& whole, int64_t row0) {
  if (!part.defined() || part.dtype() != whole.dtype() || part.device() != whole.device() ||
      part.impl().storage != whole.impl().storage || !part.is_contiguous())
    return false;
  const int64_t row = whole.dim() == 2 ? whole.size(1) : 1;
  return part.storage_offset() == whole.storage_offset() + row0 * row;
}

// Every module under m by dotted name ("model.layers.0.mlp").
void collect_modules(const std::string& prefix, const Module& m,
                     std::map<std::string, std::shared_ptr<Module>>& out) {
  for (const auto& [name, child] : m.named_children()) {
    const std::string full = prefix.empty() ? name : prefix + "." + name;
    out[full] = child;
    collect_modules(full, *child, out);
  }
}

}  // namespace

void StackedLinears::stack(const std::vector<LinearImpl*>& layers) {
  NoGradGuard no_grad;
  std::vector<Tensor> weights, biases;
  const QuantizedTensor& first = layers.front()->weight_quantized;
  for (LinearImpl* l : layers) {
    if (l->weight_quantized.defined() != first.defined() ||
        (first.defined() && l->weight_quantized.type() != first.type())) {
      *this = StackedLinears();  // quantized differently: the layers run one by one
      return;
    }
    weights.push_back(first.defined() ? l->weight_quantized.data() : l->weight);
    if (l->bias.defined()) biases.push_back(l->bias);
  }
  EMBER_CHECK(biases.empty() || biases.size() == layers.size(),
              "[StackedLinears] the layers must all have a bias or none");
  const Tensor stacked = cat(weights, 0);
  weight = first.defined() ? Tensor() : stacked;
  weight_quantized =
      first.defined() ? QuantizedTensor(first.type(), stacked, first.cols()) : QuantizedTensor();
  bias = biases.empty() ? Tensor() : cat(biases, 0);
  int64_t row0 = 0;
  for (LinearImpl* l : layers) {
    const int64_t rows = l->out_features;
    if (first.defined())
      l->weight_quantized.data().set_data(stacked.narrow(0, row0, rows));
    else
      l->weight.set_data(stacked.narrow(0, row0, rows));
    if (bias.defined()) l->bias.set_data(bias.narrow(0, row0, rows));
    row0 += rows;
  }
}

std::vector<Tensor> StackedLinears::forward(const std::vector<LinearImpl*>& layers,
                                            const Tensor& x) const {
  const bool quantized = weight_quantized.defined();
  const Tensor& whole = quantized ? weight_quantized.data() : weight;
  if (!whole.defined()) return {};
  int64_t row0 = 0;
  for (LinearImpl* l : layers) {
    const Tensor& part = quantized ? l->weight_quantized.data() : l->weight;
    if (autograd::is_grad_enabled() &&
        (part.requires_grad() || (l->bias.defined() && l->bias.requires_grad())))
      return {};
    if (!views_rows(part, whole, row0) || l->bias.defined() != bias.defined() ||
        (bias.defined() && !views_rows(l->bias, bias, row0)) ||
        (quantized && l->weight_quantized.type() != weight_quantized.type()))
      return {};
    row0 += l->out_features;
  }
  if (row0 != whole.size(0)) return {};
  const Tensor y = quantized ? F::linear(x, weight_quantized, bias) : F::linear(x, weight, bias);
  std::vector<Tensor> out;
  row0 = 0;
  for (LinearImpl* l : layers) {
    out.push_back(y.narrow(-1, row0, l->out_features));
    row0 += l->out_features;
  }
  return out;
}

// --- layers

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaConfig& c, int64_t layer_index)
    : Module("LlamaAttention"),
      layer(layer_index),
      heads(c.num_attention_heads),
      kv_heads(c.num_key_value_heads),
      head_dim(c.head_dim),
      q_proj(c.hidden_size, c.num_attention_heads * c.head_dim, c.qkv_bias),
      k_proj(c.hidden_size, c.num_key_value_heads * c.head_dim, c.qkv_bias),
      v_proj(c.hidden_size, c.num_key_value_heads * c.head_dim, c.qkv_bias),
      o_proj(c.num_attention_heads * c.head_dim, c.hidden_size, c.o_bias) {
  register_module("q_proj", q_proj.ptr());
  register_module("k_proj", k_proj.ptr());
  register_module("v_proj", v_proj.ptr());
  register_module("o_proj", o_proj.ptr());
}

Tensor LlamaAttentionImpl::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                   const Tensor& mask, KvCache* cache) {
  const int64_t B = x.size(0), L = x.size(1);
  auto split = [&](const Tensor& t, int64_t h) {
    return t.reshape({B, L, h, head_dim}).transpose(1, 2);  // (B, h, L, head_dim)
  };
  std::vector<Tensor> qkv_out = qkv.forward({&*q_proj, &*k_proj, &*v_proj}, x);
  if (qkv_out.empty()) qkv_out = {q_proj(x), k_proj(x), v_proj(x)};
  Tensor q = apply_rotary(split(qkv_out[0], heads), cos, sin);
  Tensor k = apply_rotary(split(qkv_out[1], kv_heads), cos, sin);
  Tensor v = split(qkv_out[2], kv_heads);
  if (cache) std::tie(k, v) = cache->update(layer, k, v);
  Tensor context = F::scaled_dot_product_attention(
      q, k, v,
      {.attn_mask = mask, .is_causal = !mask.defined() && L > 1, .enable_gqa = kv_heads != heads});
  return o_proj(context.transpose(1, 2).reshape({B, L, heads * head_dim}));
}

LlamaMLPImpl::LlamaMLPImpl(const LlamaConfig& c)
    : Module("LlamaMLP"),
      gate_proj(c.hidden_size, c.intermediate_size, c.mlp_bias),
      up_proj(c.hidden_size, c.intermediate_size, c.mlp_bias),
      down_proj(c.intermediate_size, c.hidden_size, c.mlp_bias) {
  register_module("gate_proj", gate_proj.ptr());
  register_module("up_proj", up_proj.ptr());
  register_module("down_proj", down_proj.ptr());
}

Tensor LlamaMLPImpl::forward(const Tensor& x) {
  const std::vector<Tensor> both = gate_up.forward({&*gate_proj, &*up_proj}, x);
  if (both.empty()) return down_proj(silu(gate_proj(x)) * up_proj(x));
  return down_proj(silu(both[0]) * both[1]);
}

LlamaRMSNormImpl::LlamaRMSNormImpl(int64_t hidden_size, double eps_)
    : Module("LlamaRMSNorm"), eps(eps_) {
  weight = register_parameter("weight", ones({hidden_size}));
}

Tensor LlamaRMSNormImpl::forward(const Tensor& x) {
  const Shape last{x.size(-1)};
  if (x.dtype() == kFloat32) return F::rms_norm(x, last, weight.to(kFloat32), eps);
  return F::rms_norm(x.to(kFloat32), last, Tensor(), eps).to(x.dtype()) * weight;
}

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const LlamaConfig& c, int64_t layer)
    : Module("LlamaDecoderLayer"),
      self_attn(std::make_shared<LlamaAttentionImpl>(c, layer)),
      mlp(std::make_shared<LlamaMLPImpl>(c)),
      input_layernorm(std::make_shared<LlamaRMSNormImpl>(c.hidden_size, c.rms_norm_eps)),
      post_attention_layernorm(std::make_shared<LlamaRMSNormImpl>(c.hidden_size, c.rms_norm_eps)) {
  register_module("self_attn", self_attn);
  register_module("mlp", mlp);
  register_module("input_layernorm", input_layernorm);
  register_module("post_attention_layernorm", post_attention_layernorm);
}

Tensor LlamaDecoderLayerImpl::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                      const Tensor& mask, KvCache* cache) {
  Tensor h = x + self_attn->forward(input_layernorm->forward(x), cos, sin, mask, cache);
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

LlamaModelImpl::LlamaModelImpl(const LlamaConfig& c)
    : Module("LlamaModel"),
      config(c),
      rotary(c),
      embed_tokens(c.vocab_size, c.hidden_size),
      norm(std::make_shared<LlamaRMSNormImpl>(c.hidden_size, c.rms_norm_eps)) {
  register_module("embed_tokens", embed_tokens.ptr());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.push_back(std::make_shared<LlamaDecoderLayerImpl>(c, i));
    layers_list->push_back_module(layers.back());
  }
  register_module("layers", layers_list.ptr());
  register_module("norm", norm);
}

Tensor LlamaModelImpl::forward(const Tensor& input_ids, KvCache* cache,
                               const Tensor& attention_mask) {
  EMBER_CHECK_KIND(Shape, input_ids.dim() == 2,
                   "[LlamaForCausalLM] input_ids must be (batch, tokens), got ",
                   shape_str(input_ids.sizes()));
  EMBER_CHECK_KIND(DType, !input_ids.is_floating_point(),
                   "[LlamaForCausalLM] input_ids must hold integer token ids, got ",
                   input_ids.dtype());
  const int64_t B = input_ids.size(0), L = input_ids.size(1);
  EMBER_CHECK_KIND(Shape, L > 0, "[LlamaForCausalLM] input_ids holds no tokens");
  const int64_t past = cache ? cache->length() : 0;
  if (cache)
    EMBER_CHECK_KIND(Shape, cache->batch() == B, "[LlamaForCausalLM] the cache holds ",
                     cache->batch(), " sequences, input_ids ", B);
  const auto [positions, mask] = decoder_positions("LlamaForCausalLM", B, L, past, attention_mask,
                                                   config.sliding_window, input_ids.device());
  // Dynamic scaling sizes the base by the longest position of this call, as transformers does
  // (keys already cached keep the rotation they were given).
  const int64_t seq_len =
      config.rope_scaling.type == "dynamic" ? positions.max().item<int64_t>() + 1 : past + L;
  Tensor h = embed_tokens(input_ids.to(kInt64));
  auto [cos, sin] = rotary.cos_sin(positions, seq_len, h.dtype());
  for (auto& layer : layers) h = layer->forward(h, cos, sin, mask, cache);
  if (cache) cache->advance(L);
  return norm->forward(h);
}

LlamaForCausalLMImpl::LlamaForCausalLMImpl(const LlamaConfig& c)
    : Module("LlamaForCausalLM"), config(c), model(std::make_shared<LlamaModelImpl>(c)) {
  register_module("model", model);
  if (!c.tie_word_embeddings)
    lm_head = register_module("lm_head",
                              std::make_shared<LinearImpl>(c.hidden_size, c.vocab_size, false));
}

Tensor LlamaForCausalLMImpl::forward(const Tensor& input_ids, KvCache* cache,
                                     const Tensor& attention_mask, int64_t logits_to_keep) {
  Tensor h = model->forward(input_ids, cache, attention_mask);
  const int64_t L = h.size(1);
  if (logits_to_keep > 0 && logits_to_keep < L) h = h.narrow(1, L - logits_to_keep, logits_to_keep);
  if (lm_head) return lm_head->forward(h);
  const EmbeddingImpl& embed = *model->embed_tokens;
  return embed.weight_quantized.defined() ? F::linear(h, embed.weight_quantized)
                                          : F::linear(h, embed.weight);
}

KvCache LlamaForCausalLMImpl::new_cache(int64_t batch, int64_t capacity) {
  return KvCache(config.num_hidden_layers, batch, config.num_key_value_heads, capacity,
                 config.head_dim, dtype(), device());
}

void LlamaForCausalLMImpl::load_hf_state_dict(const StateDict& state) {
  StateDict mine;
  for (const auto& [name, t] : state) {
    if (config.tie_word_embeddings && name == "lm_head.weight") continue;
    // Buffers some older checkpoints kept.
    if (name.size() > 19 && name.compare(name.size() - 19, 19, "rotary_emb.inv_freq") == 0)
      continue;
    mine.emplace_back(name, t);
  }
  // Weights that set_quantized_weights (or quantize) already put in place.
  for (const auto& [name, t] : named_buffers())
    if (name.ends_with(".weight_quantized")) mine.emplace_back(name, t);
  load_state_dict(mine);
  stack_projections();
}

void LlamaForCausalLMImpl::quantize(QuantType type) {
  NoGradGuard no_grad;
  for (auto& layer : model->layers) {
    LlamaAttentionImpl& a = *layer->self_attn;
    LlamaMLPImpl& m = *layer->mlp;
    bool changed = false;  // layers already quantized keep their stacks
    for (LinearImpl* l : {&*a.q_proj, &*a.k_proj, &*a.v_proj, &*a.o_proj, &*m.gate_proj,
                          &*m.up_proj, &*m.down_proj})
      if (!l->weight_quantized.defined()) {
        l->quantize_weight(type);
        changed = true;
      }
    if (changed) {
      a.stack_projections();
      m.stack_projections();
    }
  }
  if (lm_head && !lm_head->weight_quantized.defined()) lm_head->quantize_weight(type);
  if (!model->embed_tokens->weight_quantized.defined()) model->embed_tokens->quantize_weight(type);
}

void LlamaForCausalLMImpl::set_quantized_weights(
    const std::vector<std::pair<std::string, QuantizedTensor>>& weights) {
  std::map<std::string, std::shared_ptr<Module>> modules;
  collect_modules("", *this, modules);
  for (const auto& [name, w] : weights) {
    if (config.tie_word_embeddings && name == "lm_head.weight") continue;
    const size_t dot = name.rfind('.');
    auto it = dot == std::string::npos ? modules.end() : modules.find(name.substr(0, dot));
    EMBER_CHECK(it != modules.end() && name.substr(dot + 1) == "weight",
                "[LlamaForCausalLM] no layer takes the quantized weight '", name, "'");
    if (auto* linear = dynamic_cast<LinearImpl*>(it->second.get()))
      linear->set_quantized_weight(w.to(device()));
    else if (auto* embedding = dynamic_cast<EmbeddingImpl*>(it->second.get()))
      embedding->set_quantized_weight(w.to(device()), dtype());
    else
      EMBER_THROW(Value, "[LlamaForCausalLM] '", name, "' is the weight of a ", it->second->name(),
                  ", which cannot hold a quantized weight");
  }
}

void LlamaForCausalLMImpl::stack_projections() {
  for (auto& layer : model->layers) {
    layer->self_attn->stack_projections();
    layer->mlp->stack_projections();
  }
}

}  // namespace ember::nn
