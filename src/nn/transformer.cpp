// nn/transformer.cpp: MultiheadAttention (PyTorch's multi_head_attention_forward: projections,
// bias_k / bias_v and zero attention, mask merging, attention through SDPA or with its weights)
// and the transformer layers, stacks and Transformer built from it.
#include "ember/nn/transformer.h"

#include <cmath>
#include <limits>

#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/format.h"

namespace ember::nn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A bool mask (true: leave out) as the float mask PyTorch makes of it (-inf where true), or a
// float mask as it is; undefined stays undefined.
Tensor float_mask(const char* what, const Tensor& mask, const Tensor& query) {
  if (!mask.defined()) return mask;
  if (mask.dtype() == kBool)
    return zeros(mask.sizes(), {.dtype = query.dtype(), .device = mask.device()})
        .masked_fill(mask, kNegInf);
  EMBER_CHECK_KIND(DType, mask.is_floating_point(), "[MultiheadAttention] only bool and float ",
                   what, " are supported, got ", mask.dtype());
  return mask.to(query.dtype());
}

// Appends one zero column (the last dim) to a mask, for bias_k / bias_v and add_zero_attn.
Tensor pad_key(const Tensor& mask) {
  return mask.defined() ? F::pad(mask, {0, 1}) : mask;
}

// The activation of a transformer layer's feed-forward block.
std::function<Tensor(const Tensor&)> activation_of(const TransformerLayerOptions& o) {
  if (o.activation_fn) return o.activation_fn;
  if (o.activation == "relu") return [](const Tensor& x) { return relu(x); };
  if (o.activation == "gelu") return [](const Tensor& x) { return gelu(x); };
  throw Error(ErrorKind::Value, "[Transformer] activation should be relu/gelu, not " +
                                    o.activation + " (or pass activation_fn)");
}

// A layer's attention options and LayerNorm, from its options.
MultiheadAttentionOptions attention_of(const TransformerLayerOptions& o) {
  return {.dropout = o.dropout, .bias = o.bias, .batch_first = o.batch_first};
}
LayerNorm norm_of(int64_t d_model, const TransformerLayerOptions& o) {
  return LayerNorm(Shape{d_model}, o.layer_norm_eps, true, o.bias);
}

}  // namespace

// --- MultiheadAttention

MultiheadAttentionImpl::MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads,
                                               const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"),
      embed_dim(embed_dim),
      num_heads(num_heads),
      head_dim(num_heads > 0 ? embed_dim / num_heads : 0),
      kdim(o.kdim ? o.kdim : embed_dim),
      vdim(o.vdim ? o.vdim : embed_dim),
      options(o) {
  EMBER_CHECK(embed_dim > 0 && num_heads > 0,
              "[MultiheadAttention] embed_dim and num_heads must be greater than 0, got "
              "embed_dim=",
              embed_dim, " and num_heads=", num_heads);
  EMBER_CHECK(head_dim * num_heads == embed_dim,
              "[MultiheadAttention] embed_dim must be divisible by num_heads, got embed_dim=",
              embed_dim, " and num_heads=", num_heads);
  if (kdim == embed_dim && vdim == embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * embed_dim, embed_dim}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({embed_dim, embed_dim}));
    k_proj_weight = register_parameter("k_proj_weight", empty({embed_dim, kdim}));
    v_proj_weight = register_parameter("v_proj_weight", empty({embed_dim, vdim}));
  }
  if (o.bias) in_proj_bias = register_parameter("in_proj_bias", empty({3 * embed_dim}));
  if (o.add_bias_kv) {
    bias_k = register_parameter("bias_k", empty({1, 1, embed_dim}));
    bias_v = register_parameter("bias_v", empty({1, 1, embed_dim}));
  }
  out_proj = register_module("out_proj", std::make_shared<NonDynamicallyQuantizableLinearImpl>(
                                             embed_dim, embed_dim, o.bias));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  NoGradGuard no_grad;
  for (Tensor* w : {&in_proj_weight, &q_proj_weight, &k_proj_weight, &v_proj_weight})
    if (w->defined()) init::xavier_uniform_(*w);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
  if (bias_k.defined()) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const MultiheadAttentionForwardOptions& fo) {
  const char* op = "[MultiheadAttention]";
  EMBER_CHECK_KIND(Shape, query_in.dim() == 2 || query_in.dim() == 3, op,
                   " query should be unbatched 2-D or batched 3-D, got shape ",
                   shape_str(query_in.sizes()));
  const bool unbatched = query_in.dim() == 2;
  EMBER_CHECK_KIND(Shape, key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(), op,
                   " query, key and value must all be ", unbatched ? "2-D (unbatched)" : "3-D",
                   ", got ", shape_str(query_in.sizes()), ", ", shape_str(key_in.sizes()), " and ",
                   shape_str(value_in.sizes()));
  // (L, N, E) layout from here on.
  auto seq_first = [&](const Tensor& t) {
    return unbatched ? t.unsqueeze(1) : options.batch_first ? t.transpose(0, 1) : t;
  };
  const Tensor query = seq_first(query_in), key = seq_first(key_in), value = seq_first(value_in);
  const int64_t L = query.size(0), N = query.size(1), E = embed_dim, H = num_heads;
  EMBER_CHECK_KIND(Shape, query.size(2) == E, op, " was expecting embedding dimension of ", E,
                   ", but got query of shape ", shape_str(query_in.sizes()));
  EMBER_CHECK_KIND(
      Shape,
      key.size(0) == value.size(0) && key.size(1) == N && value.size(1) == N &&
          key.size(2) == kdim && value.size(2) == vdim,
      op, " key ", shape_str(key_in.sizes()), " and value ", shape_str(value_in.sizes()),
      " must share their sequence length and batch with the query's and end in kdim=", kdim,
      " and vdim=", vdim);
  EMBER_CHECK(!fo.is_causal || fo.attn_mask.defined(), op,
              " Need attn_mask if specifying the is_causal hint (pass "
              "generate_square_subsequent_mask(L))");
  Tensor kpm = fo.key_padding_mask;
  if (kpm.defined() && unbatched) kpm = kpm.unsqueeze(0);
  if (kpm.defined())
    EMBER_CHECK_KIND(Shape, kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == key.size(0), op,
                     " expected key_padding_mask of shape (", N, ", ", key.size(0), "), got ",
                     shape_str(fo.key_padding_mask.sizes()));

  // Projections: one matmul for self-attention on one tensor, else one per input.
  Tensor q, k, v;
  auto bias_part = [&](int64_t i) {
    return in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor();
  };
  if (in_proj_weight.defined() && query_in.is_same(key_in) && key_in.is_same(value_in)) {
    std::vector<Tensor> qkv = F::linear(query, in_proj_weight, in_proj_bias).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else if (in_proj_weight.defined()) {
    q = F::linear(query, in_proj_weight.narrow(0, 0, E), bias_part(0));
    k = F::linear(key, in_proj_weight.narrow(0, E, E), bias_part(1));
    v = F::linear(value, in_proj_weight.narrow(0, 2 * E, E), bias_part(2));
  } else {
    q = F::linear(query, q_proj_weight, bias_part(0));
    k = F::linear(key, k_proj_weight, bias_part(1));
    v = F::linear(value, v_proj_weight, bias_part(2));
  }

  Tensor attn_mask = float_mask("attn_mask", fo.attn_mask, query);
  if (attn_mask.defined()) {
    const int64_t S = key.size(0);
    if (attn_mask.dim() == 2) {
      EMBER_CHECK_KIND(Shape, attn_mask.size(0) == L && attn_mask.size(1) == S, op,
                       " The shape of the 2D attn_mask is ", shape_str(attn_mask.sizes()),
                       ", but should be (", L, ", ", S, ").");
      attn_mask = attn_mask.unsqueeze(0);
    } else {
      EMBER_CHECK_KIND(Shape,
                       attn_mask.dim() == 3 && attn_mask.size(0) == N * H &&
                           attn_mask.size(1) == L && attn_mask.size(2) == S,
                       op, " The shape of the 3D attn_mask is ", shape_str(attn_mask.sizes()),
                       ", but should be (", N * H, ", ", L, ", ", S, ").");
    }
  }
  kpm = float_mask("key_padding_mask", kpm, query);
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, N, E})}, 0);
    v = cat({v, bias_v.expand({1, N, E})}, 0);
    attn_mask = pad_key(attn_mask);
    kpm = pad_key(kpm);
  }
  // (N H, L or S, head_dim)
  auto heads = [&](const Tensor& t) {
    return t.reshape({t.size(0), N * H, head_dim}).transpose(0, 1);
  };
  q = heads(q), k = heads(k), v = heads(v);
  if (options.add_zero_attn) {
    k = cat({k, zeros({N * H, 1, head_dim}, {.dtype = k.dtype(), .device = k.device()})}, 1);
    v = cat({v, zeros({N * H, 1, head_dim}, {.dtype = v.dtype(), .device = v.device()})}, 1);
    attn_mask = pad_key(attn_mask);
    kpm = pad_key(kpm);
  }
  const int64_t S = k.size(1);
  // Key padding joins the mask: (N H, 1, S) added to (1 or N H, L, S).
  if (kpm.defined()) {
    Tensor per_head = kpm.view({N, 1, 1, S}).expand({N, H, 1, S}).reshape({N * H, 1, S});
    attn_mask = attn_mask.defined() ? attn_mask + per_head : per_head;
  }
  const double p = is_training() ? options.dropout : 0.0;

  Tensor out, weights;
  if (fo.need_weights) {
    // The weights themselves: softmax(q k^T / sqrt(head_dim) + mask) (N H, L, S).
    Tensor scores = bmm(q * (1.0 / std::sqrt(static_cast<double>(head_dim))), k.transpose(1, 2));
    if (attn_mask.defined()) scores = scores + attn_mask;
    weights = softmax(scores, -1);
    if (p > 0) weights = F::dropout(weights, p, true);
    out = bmm(weights, v).transpose(0, 1).reshape({L * N, E});
    weights = weights.view({N, H, L, S});
    if (fo.average_attn_weights) weights = weights.mean({1});
    if (unbatched) weights = weights.squeeze(0);
  } else {
    // SDPA on (N, H, ., head_dim); the causal hint is used when no padding joined the mask.
    const bool causal = fo.is_causal && !fo.key_padding_mask.defined();
    Tensor mask;
    if (attn_mask.defined() && !causal)
      mask = attn_mask.size(0) == 1 ? attn_mask : attn_mask.view({N, H, attn_mask.size(1), S});
    Tensor o4 = F::scaled_dot_product_attention(
        q.view({N, H, L, head_dim}), k.view({N, H, S, head_dim}), v.view({N, H, S, head_dim}),
        {.attn_mask = mask, .dropout_p = p, .is_causal = causal});
    out = o4.permute({2, 0, 1, 3}).reshape({L * N, E});
  }
  out = (*out_proj).forward(out).view({L, N, E});
  if (unbatched) return {out.squeeze(1), weights};
  return {options.batch_first ? out.transpose(0, 1) : out, weights};
}

// --- the layers

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead,
                                                         const TransformerLayerOptions& o)
    : Module("TransformerEncoderLayer"),
      d_model(d_model),
      nhead(nhead),
      options(o),
      self_attn(d_model, nhead, attention_of(o)),
      linear1(d_model, o.dim_feedforward, o.bias),
      linear2(o.dim_feedforward, d_model, o.bias),
      dropout(o.dropout),
      dropout1(o.dropout),
      dropout2(o.dropout),
      norm1(norm_of(d_model, o)),
      norm2(norm_of(d_model, o)) {
  activation_of(o);  // rejects an unknown activation now
  register_module("self_attn", self_attn.ptr());
  register_module("linear1", linear1.ptr());
  register_module("dropout", dropout.ptr());
  register_module("linear2", linear2.ptr());
  register_module("norm1", norm1.ptr());
  register_module("norm2", norm2.ptr());
  register_module("dropout1", dropout1.ptr());
  register_module("dropout2", dropout2.ptr());
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  auto sa = [&](const Tensor& x) {
    Tensor y = std::get<0>(self_attn(x, x, x,
                                     {.key_padding_mask = src_key_padding_mask,
                                      .need_weights = false,
                                      .attn_mask = src_mask,
                                      .is_causal = is_causal}));
    return dropout1(y);
  };
  const auto act = activation_of(options);
  auto ff = [&](const Tensor& x) { return dropout2(linear2(dropout(act(linear1(x))))); };
  Tensor x = src;
  if (options.norm_first) {
    x = x + sa(norm1(x));
    return x + ff(norm2(x));
  }
  x = norm1(x + sa(x));
  return norm2(x + ff(x));
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead,
                                                         const TransformerLayerOptions& o)
    : Module("TransformerDecoderLayer"),
      d_model(d_model),
      nhead(nhead),
      options(o),
      self_attn(d_model, nhead, attention_of(o)),
      multihead_attn(d_model, nhead, attention_of(o)),
      linear1(d_model, o.dim_feedforward, o.bias),
      linear2(o.dim_feedforward, d_model, o.bias),
      dropout(o.dropout),
      dropout1(o.dropout),
      dropout2(o.dropout),
      dropout3(o.dropout),
      norm1(norm_of(d_model, o)),
      norm2(norm_of(d_model, o)),
      norm3(norm_of(d_model, o)) {
  activation_of(o);
  register_module("self_attn", self_attn.ptr());
  register_module("multihead_attn", multihead_attn.ptr());
  register_module("linear1", linear1.ptr());
  register_module("dropout", dropout.ptr());
  register_module("linear2", linear2.ptr());
  register_module("norm1", norm1.ptr());
  register_module("norm2", norm2.ptr());
  register_module("norm3", norm3.ptr());
  register_module("dropout1", dropout1.ptr());
  register_module("dropout2", dropout2.ptr());
  register_module("dropout3", dropout3.ptr());
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask,
                                            bool tgt_is_causal, bool memory_is_causal) {
  auto sa = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x,
                                          {.key_padding_mask = tgt_key_padding_mask,
                                           .need_weights = false,
                                           .attn_mask = tgt_mask,
                                           .is_causal = tgt_is_causal})));
  };
  auto mha = [&](const Tensor& x) {
    return dropout2(std::get<0>(multihead_attn(x, memory, memory,
                                               {.key_padding_mask = memory_key_padding_mask,
                                                .need_weights = false,
                                                .attn_mask = memory_mask,
                                                .is_causal = memory_is_causal})));
  };
  const auto act = activation_of(options);
  auto ff = [&](const Tensor& x) { return dropout3(linear2(dropout(act(linear1(x))))); };
  Tensor x = tgt;
  if (options.norm_first) {
    x = x + sa(norm1(x));
    x = x + mha(norm2(x));
    return x + ff(norm3(x));
  }
  x = norm1(x + sa(x));
  x = norm2(x + mha(x));
  return norm3(x + ff(x));
}

// --- the stacks

namespace {
// A new layer of the same options holding a copy of `layer`'s weights (PyTorch's deepcopy).
template <class Layer>
Layer copy_of(const Layer& layer) {
  Layer copy(layer->d_model, layer->nhead, layer->options);
  NoGradGuard no_grad;
  copy->to(layer->parameters().front().device(), layer->parameters().front().dtype());
  copy->load_state_dict(layer->state_dict());
  return copy;
}

// Fills a stack's layers with num_layers copies of `layer`.
template <class Layer>
void fill_copies(const char* name, const Layer& layer, int64_t num_layers, ModuleList& layers,
                 std::vector<Layer>& list) {
  EMBER_CHECK(num_layers >= 1, "[", name, "] num_layers must be at least 1, got ", num_layers);
  for (int64_t i = 0; i < num_layers; ++i) {
    list.push_back(copy_of(layer));
    layers->push_back(list.back());
  }
}
}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderLayer& layer,
                                               int64_t num_layers, std::optional<LayerNorm> norm)
    : Module("TransformerEncoder"), num_layers(num_layers), norm(std::move(norm)) {
  fill_copies("TransformerEncoder", layer, num_layers, layers, layer_list_);
  register_module("layers", layers.ptr());
  if (this->norm) register_module("norm", this->norm->ptr());
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask,
                                       const Tensor& src_key_padding_mask, bool is_causal) {
  Tensor x = src;
  for (auto& layer : layer_list_) x = layer->forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? (*norm)(x) : x;
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderLayer& layer,
                                               int64_t num_layers, std::optional<LayerNorm> norm)
    : Module("TransformerDecoder"), num_layers(num_layers), norm(std::move(norm)) {
  fill_copies("TransformerDecoder", layer, num_layers, layers, layer_list_);
  register_module("layers", layers.ptr());
  if (this->norm) register_module("norm", this->norm->ptr());
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                       bool memory_is_causal) {
  Tensor x = tgt;
  for (auto& layer : layer_list_)
    x = layer->forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                       memory_key_padding_mask, tgt_is_causal, memory_is_causal);
  return norm ? (*norm)(x) : x;
}

TransformerImpl::TransformerImpl(const TransformerOptions& o)
    : Module("Transformer"),
      options(o),
      encoder(TransformerEncoderLayer(o.d_model, o.nhead, o.layer), o.num_encoder_layers,
              LayerNorm(Shape{o.d_model}, o.layer.layer_norm_eps, true, o.layer.bias)),
      decoder(TransformerDecoderLayer(o.d_model, o.nhead, o.layer), o.num_decoder_layers,
              LayerNorm(Shape{o.d_model}, o.layer.layer_norm_eps, true, o.layer.bias)) {
  register_module("encoder", encoder.ptr());
  register_module("decoder", decoder.ptr());
  NoGradGuard no_grad;
  for (Tensor p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask, bool src_is_causal,
                                bool tgt_is_causal, bool memory_is_causal) {
  const int64_t batch_dim = options.layer.batch_first ? 0 : 1;
  EMBER_CHECK_KIND(
      Shape,
      src.dim() == tgt.dim() && (src.dim() == 2 || src.size(batch_dim) == tgt.size(batch_dim)),
      "[Transformer] the batch number of src and tgt must be equal, got ", shape_str(src.sizes()),
      " and ", shape_str(tgt.sizes()));
  EMBER_CHECK_KIND(Shape, src.size(-1) == options.d_model && tgt.size(-1) == options.d_model,
                   "[Transformer] the feature number of src and tgt must be equal to d_model (",
                   options.d_model, "), got ", shape_str(src.sizes()), " and ",
                   shape_str(tgt.sizes()));
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask, src_is_causal);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                          memory_key_padding_mask, tgt_is_causal, memory_is_causal);
}

Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  TensorOptions o = options;
  if (!o.dtype) o.dtype = kFloat32;
  Tensor above = ones({sz, sz}, {.dtype = kBool, .device = o.device}).triu(1);
  return zeros({sz, sz}, o).masked_fill(above, kNegInf);
}

}  // namespace ember::nn
