// ember/nn/gpt2.h: Hugging Face's GPT2LMHeadModel (GPT-2 and its fine-tunes, DistilGPT2) under
// its parameter names ("transformer.h.0.attn.c_attn.weight", ...): learned positions, pre-norm
// blocks with LayerNorm, fused q/k/v in Conv1D layers (weights stored (in, out), the transpose of
// a Linear's), GELU (tanh approximation for gelu_new), the lm_head tied to the token embedding,
// and a key/value cache for generation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/nn/causal_lm.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"

namespace ember::nn {

// config.json's fields that the architecture reads (model_type gpt2).
struct GPT2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_inner = 0;  // 4 * n_embd when config.json has null
  std::string activation_function = "gelu_new";
  double layer_norm_epsilon = 1e-5;
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;

  // The fields of a config.json's text; throws, naming `source` and the key, on JSON that does
  // not parse, another model_type, an unknown activation, a field of the wrong type or out of
  // range, or options ember does not implement (reorder_and_upcast_attn, cross-attention).
  static GPT2Config from_json(const std::string& json_text,
                              const std::string& source = "config.json");
  // Checks the sizes against the weights before a model is built.
  void check_weights(const StateDict& weights, const std::string& source) const;
};

// transformers' Conv1D: y = x @ weight + bias with weight (in, out). Its weight keeps that shape
// (state dicts load as they are) over memory laid out as the (out, in) matrix of a Linear, so a
// product reads it as F::linear reads a Linear's weight.
class Conv1DImpl : public Module {
  EMBER_CLONE(Conv1DImpl, &Conv1DImpl::weight, &Conv1DImpl::bias, &Conv1DImpl::weight_quantized)
 public:
  Conv1DImpl(int64_t in_features, int64_t out_features);
  Tensor forward(const Tensor& x) override;  // x: (..., in) -> (..., out)
  // Lays weight out as (out, in) rows again (after to() or loading made it (in, out) rows).
  void relayout();
  // As LinearImpl::quantize_weight: the (out, in) rows quantized into weight_quantized (buffer
  // "weight_quantized"), the weight parameter removed.
  void quantize_weight(QuantType type = QuantType::Int8);
  Tensor weight, bias;
  QuantizedTensor weight_quantized;
};
EMBER_BUILTIN_MODULE(Conv1D);

class GPT2AttentionImpl : public Module {
  EMBER_CLONE(GPT2AttentionImpl, &GPT2AttentionImpl::c_attn, &GPT2AttentionImpl::c_proj)
 public:
  GPT2AttentionImpl(const GPT2Config& config, int64_t layer);
  // x: (B, L, n_embd); mask: (B, 1, L, S) bool or undefined (causal over L = S).
  Tensor forward(const Tensor& x, const Tensor& mask, KvCache* cache);
  int64_t layer, heads, head_dim;
  double scale;
  Conv1D c_attn, c_proj;
};

class GPT2MLPImpl : public Module {
  EMBER_CLONE(GPT2MLPImpl, &GPT2MLPImpl::c_fc, &GPT2MLPImpl::c_proj)
 public:
  explicit GPT2MLPImpl(const GPT2Config& config);
  Tensor forward(const Tensor& x) override;
  std::string activation;
  Conv1D c_fc, c_proj;
};

class GPT2BlockImpl : public Module {
  EMBER_CLONE(GPT2BlockImpl, &GPT2BlockImpl::ln_1, &GPT2BlockImpl::attn, &GPT2BlockImpl::ln_2,
              &GPT2BlockImpl::mlp)
 public:
  GPT2BlockImpl(const GPT2Config& config, int64_t layer);
  Tensor forward(const Tensor& x, const Tensor& mask, KvCache* cache);
  LayerNorm ln_1, ln_2;
  std::shared_ptr<GPT2AttentionImpl> attn;
  std::shared_ptr<GPT2MLPImpl> mlp;
};

// transformers' GPT2Model, the "transformer" of GPT2LMHeadModel.
class GPT2ModelImpl : public Module {
  EMBER_CLONE(GPT2ModelImpl, &GPT2ModelImpl::wte, &GPT2ModelImpl::wpe, &GPT2ModelImpl::h_list,
              &GPT2ModelImpl::ln_f)
 public:
  explicit GPT2ModelImpl(const GPT2Config& config);
  // The final hidden states (B, L, n_embd); see GPT2LMHeadModelImpl::forward.
  Tensor forward(const Tensor& input_ids, KvCache* cache, const Tensor& attention_mask);
  GPT2Config config;
  Embedding wte, wpe;
  ModuleList h_list;  // registered as "h"
  std::vector<std::shared_ptr<GPT2BlockImpl>> h;
  LayerNorm ln_f;
};

class GPT2LMHeadModelImpl : public Module, public CausalLanguageModel {
  using Self = GPT2LMHeadModelImpl;
  EMBER_CLONE(Self, &Self::transformer)
 public:
  explicit GPT2LMHeadModelImpl(const GPT2Config& config = {});
  // input_ids: (B, L) int64; attention_mask: (B, past + L), 1 for tokens and 0 for padding
  // (undefined: all tokens); logits_to_keep: 0 for every position, n for the last n -> logits
  // (B, L or n, vocab_size). Positions continue from the cache's length (with a mask: count only
  // the tokens, as transformers' generate does) and must stay below n_positions.
  Tensor forward(const Tensor& input_ids, KvCache* cache = nullptr,
                 const Tensor& attention_mask = Tensor(), int64_t logits_to_keep = 0);
  Tensor lm_forward(const Tensor& input_ids, KvCache* cache, const Tensor& attention_mask,
                    int64_t logits_to_keep) override {
    return forward(input_ids, cache, attention_mask, logits_to_keep);
  }
  KvCache new_cache(int64_t batch, int64_t capacity) override;
  int64_t max_positions() const override { return config.n_positions; }
  int64_t vocab_size() const override { return config.vocab_size; }
  Device device() const override { return transformer->ln_f->weight.device(); }

  // Loads Hugging Face weights by name, strict; GPT2Model files without the "transformer."
  // prefix load too; lm_head.weight (tied) and the attention's old "attn.bias" /
  // "attn.masked_bias" buffers are skipped. Then lays the Conv1D weights out for products
  // (Conv1DImpl::relayout); call relayout_weights() again after moving the model (to()).
  void load_hf_state_dict(const StateDict& state);
  void relayout_weights();
  // Weight-only quantization for inference: every Conv1D and the token embedding (which the tied
  // lm_head multiplies by); LayerNorms, biases and the position table stay.
  void quantize(QuantType type = QuantType::Int8);

  GPT2Config config;
  std::shared_ptr<GPT2ModelImpl> transformer;
};
EMBER_BUILTIN_MODULE(GPT2LMHeadModel);

}  // namespace ember::nn
