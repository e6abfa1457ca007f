// nn/gpt2.cpp: GPT2LMHeadModel of ember/nn/gpt2.h -- transformers' GPT-2 with its Conv1D layers,
// learned positions, a key/value cache, and loading its state dict by name.
#include "ember/nn/gpt2.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "ember/autograd.h"
#include "ember/creation.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/json_fields.h"

namespace ember::nn {

GPT2Config GPT2Config::from_json(const std::string& text, const std::string& source) {
  const nlohmann::json j = detail::parse_json(text, "GPT2Config", source);
  const detail::JsonFields f(j, source);
  GPT2Config c;
  const std::string type = f.string("model_type", "gpt2");
  EMBER_CHECK(type == "gpt2", f.where("model_type"), " is '", type,
              "'; ember's GPT2LMHeadModel reads gpt2 models (Llama-family models are "
              "LlamaForCausalLM)");
  constexpr int64_t kMaxWidth = int64_t{1} << 16;
  c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, int64_t{1} << 24);
  c.n_positions = f.integer("n_positions", c.n_positions, 1, int64_t{1} << 20);
  c.n_embd = f.integer("n_embd", c.n_embd, 1, kMaxWidth);
  c.n_layer = f.integer("n_layer", c.n_layer, 1, 1024);
  c.n_head = f.integer("n_head", c.n_head, 1, 4096);
  EMBER_CHECK(c.n_embd % c.n_head == 0, f.where("n_embd"), " ", c.n_embd,
              " is not a multiple of \"n_head\" ", c.n_head);
  c.n_inner = j.contains("n_inner") && !j["n_inner"].is_null()
                  ? f.integer("n_inner", 0, 1, 8 * kMaxWidth)
                  : 4 * c.n_embd;
  c.activation_function = f.string("activation_function", c.activation_function);
  const std::string& act = c.activation_function;
  EMBER_CHECK(act == "gelu_new" || act == "gelu" || act == "gelu_pytorch_tanh" || act == "relu",
              f.where("activation_function"), " is '", act,
              "'; ember's GPT-2 has gelu_new, gelu_pytorch_tanh, gelu and relu");
  c.layer_norm_epsilon = f.number("layer_norm_epsilon", c.layer_norm_epsilon, 0, 1);
  c.scale_attn_weights = f.boolean("scale_attn_weights", true);
  c.scale_attn_by_inverse_layer_idx = f.boolean("scale_attn_by_inverse_layer_idx", false);
  EMBER_CHECK(!f.boolean("reorder_and_upcast_attn", false), f.where("reorder_and_upcast_attn"),
              " is true; ember's GPT-2 computes attention in the model's dtype only");
  EMBER_CHECK(!f.boolean("add_cross_attention", false), f.where("add_cross_attention"),
              " is true; ember's GPT-2 is a decoder without cross-attention");
  if (j.contains("bos_token_id") && !j["bos_token_id"].is_null())
    c.bos_token_id = f.integer("bos_token_id", -1, 0, int64_t{1} << 24);
  c.eos_token_ids = f.token_ids("eos_token_id");
  return c;
}

void GPT2Config::check_weights(const StateDict& weights, const std::string& source) const {
  bool prefixed = false;
  for (const auto& [name, t] : weights) prefixed = prefixed || name.rfind("transformer.", 0) == 0;
  const detail::WeightShapes w(weights, "GPT2LMHeadModel", source, prefixed ? "transformer." : "");
  w.expect("vocab_size", vocab_size, "wte.weight", 0);
  w.expect("n_embd", n_embd, "wte.weight", 1);
  w.expect("n_positions", n_positions, "wpe.weight", 0);
  w.expect_layers("n_layer", n_layer, "h.");
  w.expect("n_inner", n_inner, "h.0.mlp.c_fc.weight", 1);
}

// --- Conv1D

Conv1DImpl::Conv1DImpl(int64_t in_features, int64_t out_features) : Module("Conv1D") {
  // transformers initializes Conv1D weights with normal(0, 0.02) and zero biases.
  weight = register_parameter("weight", empty({out_features, in_features}).t());
  init::normal_(weight, 0.0, 0.02);
  bias = register_parameter("bias", zeros({out_features}));
}

Tensor Conv1DImpl::forward(const Tensor& x) {
  if (weight_quantized.defined()) return F::linear(x, weight_quantized, bias);
  return F::linear(x, weight.t(), bias);
}

void Conv1DImpl::quantize_weight(QuantType type) {
  if (weight_quantized.defined()) return;
  weight_quantized = QuantizedTensor::quantize(weight.detach().t(), type);
  remove_parameter("weight");
  weight = Tensor();
  register_buffer("weight_quantized", weight_quantized.data());
}

void Conv1DImpl::relayout() {
  if (!weight.defined() || weight.t().is_contiguous()) return;
  NoGradGuard no_grad;
  weight.set_data(weight.t().contiguous().t());
}

// --- layers

GPT2AttentionImpl::GPT2AttentionImpl(const GPT2Config& c, int64_t layer_index)
    : Module("GPT2Attention"),
      layer(layer_index),
      heads(c.n_head),
      head_dim(c.n_embd / c.n_head),
      c_attn(c.n_embd, 3 * c.n_embd),
      c_proj(c.n_embd, c.n_embd) {
  scale = c.scale_attn_weights ? 1.0 / std::sqrt(static_cast<double>(head_dim)) : 1.0;
  if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<double>(layer_index + 1);
  register_module("c_attn", c_attn.ptr());
  register_module("c_proj", c_proj.ptr());
}

Tensor GPT2AttentionImpl::forward(const Tensor& x, const Tensor& mask, KvCache* cache) {
  const int64_t B = x.size(0), L = x.size(1), E = heads * head_dim;
  const Tensor qkv = c_attn(x);  // (B, L, 3E)
  auto split = [&](int64_t i) {
    return qkv.narrow(-1, i * E, E).reshape({B, L, heads, head_dim}).transpose(1, 2);
  };
  Tensor q = split(0), k = split(1), v = split(2);
  if (cache) std::tie(k, v) = cache->update(layer, k, v);
  const Tensor context = F::scaled_dot_product_attention(
      q, k, v, {.attn_mask = mask, .is_causal = !mask.defined() && L > 1, .scale = scale});
  return c_proj(context.transpose(1, 2).reshape({B, L, E}));
}

GPT2MLPImpl::GPT2MLPImpl(const GPT2Config& c)
    : Module("GPT2MLP"),
      activation(c.activation_function),
      c_fc(c.n_embd, c.n_inner),
      c_proj(c.n_inner, c.n_embd) {
  register_module("c_fc", c_fc.ptr());
  register_module("c_proj", c_proj.ptr());
}

Tensor GPT2MLPImpl::forward(const Tensor& x) {
  const Tensor h = c_fc(x);
  if (activation == "relu") return c_proj(h.relu());
  return c_proj(gelu(h, activation == "gelu" ? "none" : "tanh"));
}

GPT2BlockImpl::GPT2BlockImpl(const GPT2Config& c, int64_t layer)
    : Module("GPT2Block"),
      ln_1(Shape{c.n_embd}, c.layer_norm_epsilon),
      ln_2(Shape{c.n_embd}, c.layer_norm_epsilon),
      attn(std::make_shared<GPT2AttentionImpl>(c, layer)),
      mlp(std::make_shared<GPT2MLPImpl>(c)) {
  register_module("ln_1", ln_1.ptr());
  register_module("attn", attn);
  register_module("ln_2", ln_2.ptr());
  register_module("mlp", mlp);
}

Tensor GPT2BlockImpl::forward(const Tensor& x, const Tensor& mask, KvCache* cache) {
  const Tensor h = x + attn->forward(ln_1(x), mask, cache);
  return h + mlp->forward(ln_2(h));
}

GPT2ModelImpl::GPT2ModelImpl(const GPT2Config& c)
    : Module("GPT2Model"),
      config(c),
      wte(c.vocab_size, c.n_embd),
      wpe(c.n_positions, c.n_embd),
      ln_f(Shape{c.n_embd}, c.layer_norm_epsilon) {
  register_module("wte", wte.ptr());
  register_module("wpe", wpe.ptr());
  for (int64_t i = 0; i < c.n_layer; ++i) {
    h.push_back(std::make_shared<GPT2BlockImpl>(c, i));
    h_list->push_back_module(h.back());
  }
  register_module("h", h_list.ptr());
  register_module("ln_f", ln_f.ptr());
}

Tensor GPT2ModelImpl::forward(const Tensor& input_ids, KvCache* cache,
                              const Tensor& attention_mask) {
  EMBER_CHECK_KIND(Shape, input_ids.dim() == 2 && input_ids.size(1) > 0,
                   "[GPT2LMHeadModel] input_ids must be (batch, tokens) with tokens, got ",
                   shape_str(input_ids.sizes()));
  EMBER_CHECK_KIND(DType, !input_ids.is_floating_point(),
                   "[GPT2LMHeadModel] input_ids must hold integer token ids, got ",
                   input_ids.dtype());
  const int64_t B = input_ids.size(0), L = input_ids.size(1);
  const int64_t past = cache ? cache->length() : 0;
  if (cache)
    EMBER_CHECK_KIND(Shape, cache->batch() == B, "[GPT2LMHeadModel] the cache holds ",
                     cache->batch(), " sequences, input_ids ", B);
  EMBER_CHECK_KIND(Index, past + L <= config.n_positions, "[GPT2LMHeadModel] ", past + L,
                   " positions pass the model's n_positions (", config.n_positions,
                   "); GPT-2's position table has no more rows: shorten the text");
  const auto [positions, mask] =
      decoder_positions("GPT2LMHeadModel", B, L, past, attention_mask, 0, input_ids.device());
  Tensor x = wte(input_ids.to(kInt64)) + wpe(positions);
  for (auto& block : h) x = block->forward(x, mask, cache);
  if (cache) cache->advance(L);
  return ln_f(x);
}

GPT2LMHeadModelImpl::GPT2LMHeadModelImpl(const GPT2Config& c)
    : Module("GPT2LMHeadModel"), config(c), transformer(std::make_shared<GPT2ModelImpl>(c)) {
  register_module("transformer", transformer);
}

Tensor GPT2LMHeadModelImpl::forward(const Tensor& input_ids, KvCache* cache,
                                    const Tensor& attention_mask, int64_t logits_to_keep) {
  Tensor h = transformer->forward(input_ids, cache, attention_mask);
  const int64_t L = h.size(1);
  if (logits_to_keep > 0 && logits_to_keep < L) h = h.narrow(1, L - logits_to_keep, logits_to_keep);
  const EmbeddingImpl& wte = *transformer->wte;  // the tied lm_head
  return wte.weight_quantized.defined() ? F::linear(h, wte.weight_quantized)
                                        : F::linear(h, wte.weight);
}

KvCache GPT2LMHeadModelImpl::new_cache(int64_t batch, int64_t capacity) {
  const Tensor& w = transformer->ln_f->weight;
  return KvCache(config.n_layer, batch, config.n_head, capacity, config.n_embd / config.n_head,
                 w.dtype(), w.device());
}

void GPT2LMHeadModelImpl::quantize(QuantType type) {
  NoGradGuard no_grad;
  for (auto& block : transformer->h)
    for (Conv1DImpl* c :
         {&*block->attn->c_attn, &*block->attn->c_proj, &*block->mlp->c_fc, &*block->mlp->c_proj})
      c->quantize_weight(type);
  transformer->wte->quantize_weight(type);
}

void GPT2LMHeadModelImpl::load_hf_state_dict(const StateDict& state) {
  StateDict mine;
  for (const auto& [name, t] : state) {
    if (name == "lm_head.weight") continue;  // tied to transformer.wte.weight
    if (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias")) continue;
    mine.emplace_back(name.rfind("transformer.", 0) == 0 ? name : "transformer." + name, t);
  }
  load_state_dict(mine);
  relayout_weights();
}

void GPT2LMHeadModelImpl::relayout_weights() {
  for (auto& block : transformer->h) {
    block->attn->c_attn->relayout();
    block->attn->c_proj->relayout();
    block->mlp->c_fc->relayout();
    block->mlp->c_proj->relayout();
  }
}

}  // namespace ember::nn
