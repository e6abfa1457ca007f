// ember/nn/llama.h: the Llama family of decoder language models in Hugging Face's
// LlamaForCausalLM layout -- Llama 2/3, Mistral, Qwen2/2.5, SmolLM, TinyLlama: RMSNorm, SwiGLU,
// rotary position embeddings (default, linear, dynamic and llama3 scaling), grouped-query
// attention, optional q/k/v biases, tied or separate lm_head -- under the same parameter names
// ("model.layers.0.self_attn.q_proj.weight", ...), so a folder's weights load with strict names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/nn/causal_lm.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"

namespace ember::nn {

// config.json's rope_scaling: "default" (none), "linear" (positions / factor), "dynamic" (NTK:
// the base grows once a sequence passes max_position_embeddings) or "llama3" (wavelengths
// between the two bounds interpolated).
struct RopeScaling {
  std::string type = "default";
  double factor = 1.0;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int64_t original_max_position_embeddings = 0;          // llama3
};

// config.json's fields that the architecture reads (model_type llama, mistral or qwen2).
struct LlamaConfig {
  std::string model_type = "llama";
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_hidden_layers = 32;
  int64_t num_attention_heads = 32;
  int64_t num_key_value_heads = 32;
  int64_t head_dim = 128;  // hidden_size / num_attention_heads unless given
  int64_t max_position_embeddings = 2048;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  // llama.cpp's rope_freqs (head_dim / 2 factors; empty: none): each inverse frequency is divided
  // by its factor -- how GGUF files of Llama 3.1 and later carry the llama3 scaling.
  std::vector<float> rope_freq_factors;
  bool qkv_bias = false;       // q/k/v projections with biases (Qwen2; Llama's attention_bias)
  bool o_bias = false;         // o_proj with a bias (Llama's attention_bias)
  bool mlp_bias = false;       // gate/up/down with biases (Llama's mlp_bias)
  int64_t sliding_window = 0;  // > 0: each query sees at most that many keys (Mistral)
  bool tie_word_embeddings = false;
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;
  std::string torch_dtype;  // the weights' dtype as config.json names it ("" when absent)

  // The fields of a config.json's text; throws, naming `source` and the key, on JSON that does
  // not parse, another model_type, a hidden_act other than silu, a field of the wrong type, a
  // size out of range or an unknown rope_scaling kind.
  static LlamaConfig from_json(const std::string& json_text,
                               const std::string& source = "config.json");
  // Checks the sizes against the weights before a model is built (as BertConfig::check_weights).
  void check_weights(const StateDict& weights, const std::string& source) const;
};

// The rotary embedding's inverse frequencies and how they scale.
class LlamaRotaryEmbedding {
 public:
  explicit LlamaRotaryEmbedding(const LlamaConfig& config);
  // positions: (B, L) int64 -> cos and sin (B, 1, L, head_dim) in `dtype`. seq_len (the largest
  // position + 1) grows the base under dynamic scaling.
  std::pair<Tensor, Tensor> cos_sin(const Tensor& positions, int64_t seq_len, DType dtype) const;
  // (head_dim / 2) float32: the inverse frequencies for a sequence of seq_len positions.
  std::vector<float> inv_freq(int64_t seq_len) const;

 private:
  LlamaConfig config_;
  std::vector<float> base_inv_freq_;
};

// Linear layers that read the same input (attention's q/k/v, the MLP's gate/up) with their
// weights (and biases) stacked row after row in one buffer that the layers' parameters view, so
// that inference computes them in one product -- one call instead of several, the same values
// as one product each for the decoding steps (a few rows: the weight-direct kernel computes
// every element alone) and within float32 rounding otherwise. Training, or parameters that no
// longer view the stack (after to(), set_data or assigning new tensors), runs the layers one by
// one.
//
// Quantized layers (LinearImpl::quantize_weight, all of one QuantType) stack their stored rows
// the same way, into weight_quantized.
struct StackedLinears {
  Tensor weight, bias;               // (sum of out_features, in_features), (sum) or undefined
  QuantizedTensor weight_quantized;  // instead of weight when the layers are quantized
  // Stacks `layers` (same in_features, dtype and device; all with a bias or none), making their
  // parameters views of the stack; layers quantized to different types (or some not) stay apart.
  void stack(const std::vector<LinearImpl*>& layers);
  // Each layer's output for x (views of one product), or empty when the stack cannot be used.
  std::vector<Tensor> forward(const std::vector<LinearImpl*>& layers, const Tensor& x) const;
};

class LlamaAttentionImpl : public Module {
  using Self = LlamaAttentionImpl;
  EMBER_CLONE(Self, &Self::q_proj, &Self::k_proj, &Self::v_proj, &Self::o_proj)
 public:
  LlamaAttentionImpl(const LlamaConfig& config, int64_t layer);
  // x: (B, L, hidden); cos, sin: (B, 1, L, head_dim); mask: (B, 1, L, S) bool or undefined
  // (causal over L = S). With a cache, the new keys and values are appended to it.
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 KvCache* cache);
  int64_t layer, heads, kv_heads, head_dim;
  Linear q_proj, k_proj, v_proj, o_proj;
  StackedLinears qkv;  // q_proj, k_proj, v_proj once stack_projections() ran
  void stack_projections() { qkv.stack({&*q_proj, &*k_proj, &*v_proj}); }
};

// down(silu(gate(x)) * up(x)).
class LlamaMLPImpl : public Module {
  using Self = LlamaMLPImpl;
  EMBER_CLONE(Self, &Self::gate_proj, &Self::up_proj, &Self::down_proj)
 public:
  explicit LlamaMLPImpl(const LlamaConfig& config);
  Tensor forward(const Tensor& x) override;
  Linear gate_proj, up_proj, down_proj;
  StackedLinears gate_up;  // gate_proj, up_proj once stack_projections() ran
  void stack_projections() { gate_up.stack({&*gate_proj, &*up_proj}); }
};

// Hugging Face's LlamaRMSNorm: normalized in float32, rounded to the input's dtype, then times the
// weight.
class LlamaRMSNormImpl : public Module {
  EMBER_CLONE(LlamaRMSNormImpl, &LlamaRMSNormImpl::weight)
 public:
  LlamaRMSNormImpl(int64_t hidden_size, double eps);
  Tensor forward(const Tensor& x) override;
  double eps;
  Tensor weight;
};

class LlamaDecoderLayerImpl : public Module {
  using Self = LlamaDecoderLayerImpl;
  EMBER_CLONE(Self, &Self::self_attn, &Self::mlp, &Self::input_layernorm,
              &Self::post_attention_layernorm)
 public:
  LlamaDecoderLayerImpl(const LlamaConfig& config, int64_t layer);
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, const Tensor& mask,
                 KvCache* cache);
  std::shared_ptr<LlamaAttentionImpl> self_attn;
  std::shared_ptr<LlamaMLPImpl> mlp;
  std::shared_ptr<LlamaRMSNormImpl> input_layernorm, post_attention_layernorm;
};

// embed_tokens, the decoder layers, the final norm.
class LlamaModelImpl : public Module {
  using Self = LlamaModelImpl;
  EMBER_CLONE(Self, &Self::embed_tokens, &Self::layers_list, &Self::layers, &Self::norm)
 public:
  explicit LlamaModelImpl(const LlamaConfig& config);
  // input_ids: (B, L); attention_mask: (B, past + L) or undefined -> (B, L, hidden).
  Tensor forward(const Tensor& input_ids, KvCache* cache, const Tensor& attention_mask);
  LlamaConfig config;
  LlamaRotaryEmbedding rotary;
  Embedding embed_tokens;
  ModuleList layers_list;
  std::vector<std::shared_ptr<LlamaDecoderLayerImpl>> layers;
  std::shared_ptr<LlamaRMSNormImpl> norm;
};

class LlamaForCausalLMImpl : public Module, public CausalLanguageModel {
  using Self = LlamaForCausalLMImpl;
  EMBER_CLONE(Self, &Self::model, &Self::lm_head)
 public:
  explicit LlamaForCausalLMImpl(const LlamaConfig& config = {});
  // input_ids: (B, L) int64; attention_mask: (B, past + L), 1 for tokens and 0 for padding
  // (undefined: all tokens); logits_to_keep: 0 for every position, n for the last n ->
  // logits (B, L or n, vocab_size) in the model's dtype. Positions continue from the cache's
  // length (with a mask: count only the tokens, as transformers' generate does).
  Tensor forward(const Tensor& input_ids, KvCache* cache = nullptr,
                 const Tensor& attention_mask = Tensor(), int64_t logits_to_keep = 0);
  Tensor lm_forward(const Tensor& input_ids, KvCache* cache, const Tensor& attention_mask,
                    int64_t logits_to_keep) override {
    return forward(input_ids, cache, attention_mask, logits_to_keep);
  }
  KvCache new_cache(int64_t batch, int64_t capacity) override;
  // Rotary positions have no table to run past: as transformers, the model takes sequences
  // longer than max_position_embeddings (quality may suffer; the caller may warn).
  int64_t max_positions() const override { return int64_t{1} << 24; }
  int64_t vocab_size() const override { return config.vocab_size; }
  Device device() const override { return model->norm->weight.device(); }

  // Loads Hugging Face weights by name, strict (missing or unexpected names and wrong shapes are
  // errors naming them); with tied embeddings a file's lm_head.weight is skipped, as
  // transformers ties it to the embedding after loading. Values convert to the model's dtype.
  // Layers already holding a quantized weight (set_quantized_weights) keep it. Then stacks the
  // projections (stack_projections).
  void load_hf_state_dict(const StateDict& state);
  // Stacks every layer's q/k/v and gate/up weights (StackedLinears) for inference; call it again
  // after moving the model (to()) to stack them on the new device or dtype.
  void stack_projections();
  // Weight-only quantization for inference: every Linear of the decoder layers, the lm_head and
  // the token embedding (which a tied lm_head then multiplies by) quantized to `type` -- those not
  // quantized already; norms stay, activations keep the model's dtype. The projections of a layer
  // that changed are restacked.
  void quantize(QuantType type = QuantType::Int8);
  // Puts quantized weights in place, by Hugging Face name ("model.layers.0.mlp.down_proj.weight",
  // "model.embed_tokens.weight"; a tied file's lm_head.weight is skipped) -- a GGUF file's Q8_0
  // and Q4_0 tensors as they are -- before load_hf_state_dict loads the rest; an unknown name or a
  // wrong shape is an error naming it.
  void set_quantized_weights(const std::vector<std::pair<std::string, QuantizedTensor>>& weights);
  // The dtype the model computes in and its device (the final norm's weight's).
  DType dtype() const { return model->norm->weight.dtype(); }

  LlamaConfig config;
  std::shared_ptr<LlamaModelImpl> model;
  std::shared_ptr<LinearImpl> lm_head;  // null with tied embeddings
};
EMBER_BUILTIN_MODULE(LlamaForCausalLM);

}  // namespace ember::nn
