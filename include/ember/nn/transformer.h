// ember/nn/transformer.h: attention and transformer layers with PyTorch's parameter names,
// initialization, masks and printed form -- MultiheadAttention, TransformerEncoderLayer,
// TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer -- so that a
// PyTorch state dict of these modules loads with strict names. Attention runs through
// F::scaled_dot_product_attention unless the attention weights are asked for.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <tuple>

#include "ember/nn/module.h"
#include "ember/nn/modules.h"

namespace ember::nn {

// kdim, vdim: 0 means embed_dim. With both equal to embed_dim the projections are one
// in_proj_weight (3 E, E); otherwise q_proj_weight (E, E), k_proj_weight (E, kdim) and
// v_proj_weight (E, vdim). in_proj_bias (3 E) when bias; bias_k, bias_v (1, 1, E) when
// add_bias_kv; out_proj (E -> E).
struct MultiheadAttentionOptions {
  double dropout = 0.0;
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  int64_t kdim = 0;
  int64_t vdim = 0;
  bool batch_first = false;
};

// PyTorch's masks for MultiheadAttention (note: true means "leave out", unlike
// F::scaled_dot_product_attention's). key_padding_mask: (N, S) (unbatched: (S)), bool (true:
// a padding key) or float (added). attn_mask: (L, S) or (N * num_heads, L, S), bool (true: not
// allowed) or float (added). is_causal is a hint that attn_mask is the causal mask (it needs
// attn_mask, as PyTorch). need_weights: also return the attention weights (N, L, S) averaged
// over heads, or (N, num_heads, L, S) without average_attn_weights.
struct MultiheadAttentionForwardOptions {
  Tensor key_padding_mask{};
  bool need_weights = true;
  Tensor attn_mask{};
  bool average_attn_weights = true;
  bool is_causal = false;
};

// out_proj's class: a Linear printed as PyTorch's NonDynamicallyQuantizableLinear.
class NonDynamicallyQuantizableLinearImpl : public LinearImpl {
  EMBER_CLONE(NonDynamicallyQuantizableLinearImpl, &NonDynamicallyQuantizableLinearImpl::weight,
              &NonDynamicallyQuantizableLinearImpl::bias)
 public:
  NonDynamicallyQuantizableLinearImpl(int64_t in_features, int64_t out_features, bool bias)
      : LinearImpl("NonDynamicallyQuantizableLinear", in_features, out_features, bias) {}
};

class MultiheadAttentionImpl : public Module {
  EMBER_CLONE(MultiheadAttentionImpl, &MultiheadAttentionImpl::in_proj_weight,
              &MultiheadAttentionImpl::q_proj_weight, &MultiheadAttentionImpl::k_proj_weight,
              &MultiheadAttentionImpl::v_proj_weight, &MultiheadAttentionImpl::in_proj_bias,
              &MultiheadAttentionImpl::bias_k, &MultiheadAttentionImpl::bias_v,
              &MultiheadAttentionImpl::out_proj)
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads,
                         const MultiheadAttentionOptions& options = {});
  // query: (L, N, E) ((N, L, E) with batch_first; (L, E) unbatched), key: (S, N, kdim), value:
  // (S, N, vdim) -> (attn_output shaped as query, attention weights or undefined).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const MultiheadAttentionForwardOptions& options = {});
  // Xavier-uniform projections, zero biases, Xavier-normal bias_k / bias_v (PyTorch's).
  void reset_parameters();

  int64_t embed_dim, num_heads, head_dim, kdim, vdim;
  MultiheadAttentionOptions options;
  Tensor in_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias, bias_k, bias_v;
  std::shared_ptr<NonDynamicallyQuantizableLinearImpl> out_proj;
};
EMBER_BUILTIN_MODULE_WITH(
    MultiheadAttention, MultiheadAttention(int64_t embed_dim, int64_t num_heads,
                                           const MultiheadAttentionOptions& options = {})
    : ModuleHolder(std::make_shared<MultiheadAttentionImpl>(embed_dim, num_heads, options)) {}
    // mha(q, k, v, {.need_weights = false}) with braced options.
    std::tuple<Tensor, Tensor>
    operator()(const Tensor& query, const Tensor& key, const Tensor& value,
               const MultiheadAttentionForwardOptions& options = {})
        const { return impl_->forward(query, key, value, options); });

// activation: "relu" or "gelu", or activation_fn when set (then "activation" is ignored).
struct TransformerLayerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  std::string activation = "relu";
  std::function<Tensor(const Tensor&)> activation_fn{};
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;
  bool bias = true;
};

// Self-attention then a feed-forward block, each with dropout, a residual connection and a
// LayerNorm (after it, or before it with norm_first). Children as PyTorch's: self_attn,
// linear1, dropout, linear2, norm1, norm2, dropout1, dropout2.
class TransformerEncoderLayerImpl : public Module {
  using Self = TransformerEncoderLayerImpl;
  EMBER_CLONE(Self, &Self::self_attn, &Self::linear1, &Self::linear2, &Self::dropout,
              &Self::dropout1, &Self::dropout2, &Self::norm1, &Self::norm2)
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead,
                              const TransformerLayerOptions& options = {});
  // src: (S, N, E) ((N, S, E) with batch_first, (S, E) unbatched); masks as MultiheadAttention's.
  Tensor forward(const Tensor& src, const Tensor& src_mask,
                 const Tensor& src_key_padding_mask = Tensor(), bool is_causal = false);
  Tensor forward(const Tensor& src) override { return forward(src, Tensor()); }

  int64_t d_model, nhead;
  TransformerLayerOptions options;
  MultiheadAttention self_attn;
  Linear linear1, linear2;
  Dropout dropout, dropout1, dropout2;
  LayerNorm norm1, norm2;
};
EMBER_BUILTIN_MODULE_WITH(
    TransformerEncoderLayer, TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                     const TransformerLayerOptions& options = {})
    : ModuleHolder(std::make_shared<TransformerEncoderLayerImpl>(d_model, nhead, options)){});

// Self-attention, attention over the encoder's memory, then the feed-forward block. Children:
// self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3, dropout1..3.
class TransformerDecoderLayerImpl : public Module {
  using Self = TransformerDecoderLayerImpl;
  EMBER_CLONE(Self, &Self::self_attn, &Self::multihead_attn, &Self::linear1, &Self::linear2,
              &Self::dropout, &Self::dropout1, &Self::dropout2, &Self::dropout3, &Self::norm1,
              &Self::norm2, &Self::norm3)
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead,
                              const TransformerLayerOptions& options = {});
  // tgt: (T, N, E), memory: (S, N, E) (batch_first / unbatched as the encoder's).
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), bool tgt_is_causal = false,
                 bool memory_is_causal = false);

  int64_t d_model, nhead;
  TransformerLayerOptions options;
  MultiheadAttention self_attn, multihead_attn;
  Linear linear1, linear2;
  Dropout dropout, dropout1, dropout2, dropout3;
  LayerNorm norm1, norm2, norm3;
};
EMBER_BUILTIN_MODULE_WITH(
    TransformerDecoderLayer, TransformerDecoderLayer(int64_t d_model, int64_t nhead,
                                                     const TransformerLayerOptions& options = {})
    : ModuleHolder(std::make_shared<TransformerDecoderLayerImpl>(d_model, nhead, options)){});

// num_layers copies of `layer` (same options, same initial weights: PyTorch deep-copies it) as
// layers.0 ..., then the optional final norm.
class TransformerEncoderImpl : public Module {
  using Self = TransformerEncoderImpl;
  EMBER_CLONE(Self, &Self::layers, &Self::norm, &Self::layer_list_)
 public:
  TransformerEncoderImpl(const TransformerEncoderLayer& layer, int64_t num_layers,
                         std::optional<LayerNorm> norm = std::nullopt);
  Tensor forward(const Tensor& src, const Tensor& mask,
                 const Tensor& src_key_padding_mask = Tensor(), bool is_causal = false);
  Tensor forward(const Tensor& src) override { return forward(src, Tensor()); }

  int64_t num_layers;
  ModuleList layers;
  std::optional<LayerNorm> norm;

 private:
  std::vector<TransformerEncoderLayer> layer_list_;
};
EMBER_BUILTIN_MODULE_WITH(
    TransformerEncoder, TransformerEncoder(const TransformerEncoderLayer& layer, int64_t num_layers,
                                           std::optional<LayerNorm> norm = std::nullopt)
    : ModuleHolder(std::make_shared<TransformerEncoderImpl>(layer, num_layers, std::move(norm))){});

class TransformerDecoderImpl : public Module {
  using Self = TransformerDecoderImpl;
  EMBER_CLONE(Self, &Self::layers, &Self::norm, &Self::layer_list_)
 public:
  TransformerDecoderImpl(const TransformerDecoderLayer& layer, int64_t num_layers,
                         std::optional<LayerNorm> norm = std::nullopt);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), bool tgt_is_causal = false,
                 bool memory_is_causal = false);

  int64_t num_layers;
  ModuleList layers;
  std::optional<LayerNorm> norm;

 private:
  std::vector<TransformerDecoderLayer> layer_list_;
};
EMBER_BUILTIN_MODULE_WITH(
    TransformerDecoder, TransformerDecoder(const TransformerDecoderLayer& layer, int64_t num_layers,
                                           std::optional<LayerNorm> norm = std::nullopt)
    : ModuleHolder(std::make_shared<TransformerDecoderImpl>(layer, num_layers, std::move(norm))){});

struct TransformerOptions {
  int64_t d_model = 512;
  int64_t nhead = 8;
  int64_t num_encoder_layers = 6;
  int64_t num_decoder_layers = 6;
  TransformerLayerOptions layer{};
};

// An encoder and a decoder, each ending in a LayerNorm; every parameter of two or more dims
// Xavier-uniform (PyTorch's Transformer._reset_parameters).
class TransformerImpl : public Module {
  EMBER_CLONE(TransformerImpl, &TransformerImpl::encoder, &TransformerImpl::decoder)
 public:
  explicit TransformerImpl(const TransformerOptions& options = {});
  // src: (S, N, E), tgt: (T, N, E) (batch_first: (N, ., E)) -> (T, N, E).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = Tensor(),
                 const Tensor& tgt_mask = Tensor(), const Tensor& memory_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor(), bool src_is_causal = false,
                 bool tgt_is_causal = false, bool memory_is_causal = false);

  TransformerOptions options;
  TransformerEncoder encoder;
  TransformerDecoder decoder;
};
EMBER_BUILTIN_MODULE_WITH(Transformer, Transformer(const TransformerOptions& options)
                          : ModuleHolder(std::make_shared<TransformerImpl>(options)){});

// (sz, sz) float32: 0 on and below the diagonal, -inf above it (the causal attn_mask).
Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});

}  // namespace ember::nn
