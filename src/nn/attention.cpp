// nn/attention.cpp: F::scaled_dot_product_attention -- the argument checks shared by every path,
// the dispatch to the fused kernels (ops/attention.cpp) and the math path (PyTorch's composite:
// scores, mask, safe softmax, dropout, weighted values) for what they do not take.
#include <cmath>
#include <limits>

#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/attention.h"

namespace ember::nn::functional {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// Throws unless query, key, value and the mask fit together (shapes, dtypes, devices, options).
void check_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                     const ScaledDotProductAttentionOptions& o) {
  EMBER_CHECK_KIND(Shape, q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, "[", kOp,
                   "] query, key and value must be at least 2-D (..., L, E), got ",
                   shape_str(q.sizes()), ", ", shape_str(k.sizes()), " and ", shape_str(v.sizes()));
  EMBER_CHECK_KIND(
      DType, q.dtype() == k.dtype() && q.dtype() == v.dtype(), "[", kOp,
      "] Expected query, key, and value to have the same dtype, but got query.dtype: ", q.dtype(),
      " key.dtype: ", k.dtype(), " and value.dtype: ", v.dtype(), " instead.");
  EMBER_CHECK_KIND(DType, is_floating_point(q.dtype()), "[", kOp,
                   "] expected floating-point query, key and value, got ", q.dtype());
  EMBER_CHECK_KIND(Device, q.device() == k.device() && q.device() == v.device(), "[", kOp,
                   "] Expected query, key, and value to be on the same device, got ", q.device(),
                   ", ", k.device(), " and ", v.device(), "; move them with .to(device)");
  EMBER_CHECK_KIND(Shape, q.size(-1) == k.size(-1), "[", kOp,
                   "] query and key must have the same embedding size E, got query ",
                   shape_str(q.sizes()), " and key ", shape_str(k.sizes()));
  EMBER_CHECK_KIND(Shape, k.size(-2) == v.size(-2), "[", kOp,
                   "] key and value must have the same sequence length S, got key ",
                   shape_str(k.sizes()), " and value ", shape_str(v.sizes()));
  EMBER_CHECK(!(o.is_causal && o.attn_mask.defined()), "[", kOp,
              "] is_causal and attn_mask cannot be given together: pass the causal mask in "
              "attn_mask, or is_causal alone");
  EMBER_CHECK(o.dropout_p >= 0 && o.dropout_p < 1, "[", kOp, "] dropout_p must be in [0, 1), got ",
              o.dropout_p);
  if (o.enable_gqa) {
    EMBER_CHECK_KIND(Shape, q.dim() >= 3 && k.dim() >= 3 && k.dim() == v.dim(), "[", kOp,
                     "] enable_gqa needs (..., H, L, E) inputs, got ", shape_str(q.sizes()));
    const int64_t hq = q.size(-3), hk = k.size(-3);
    EMBER_CHECK_KIND(Shape, hk > 0 && hq % hk == 0 && v.size(-3) == hk, "[", kOp,
                     "] with enable_gqa the query heads (", hq,
                     ") must be a multiple of the key and value heads (", hk, " and ", v.size(-3),
                     ")");
  }
  if (o.attn_mask.defined()) {
    const Tensor& m = o.attn_mask;
    EMBER_CHECK_KIND(DType, m.dtype() == kBool || m.dtype() == q.dtype(), "[", kOp,
                     "] Expected attn_mask dtype to be bool or float or to match query dtype, "
                     "but got attn_mask.dtype: ",
                     m.dtype(), " and  query.dtype: ", q.dtype(), " instead.");
    EMBER_CHECK_KIND(Device, m.device() == q.device(), "[", kOp, "] attn_mask is on ", m.device(),
                     " but query is on ", q.device(), "; move it with .to(device)");
  }
}

// The scores' scale: the option, else 1 / sqrt(E).
double scale_of(const Tensor& query, const ScaledDotProductAttentionOptions& o) {
  return o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
}

}  // namespace

Tensor scaled_dot_product_attention_math(const Tensor& query, const Tensor& key_in,
                                         const Tensor& value_in,
                                         const ScaledDotProductAttentionOptions& o) {
  check_attention(query, key_in, value_in, o);
  Tensor key = key_in, value = value_in;
  if (o.enable_gqa && key.size(-3) != query.size(-3)) {
    const int64_t groups = query.size(-3) / key.size(-3);
    key = key.repeat_interleave(groups, -3);
    value = value.repeat_interleave(groups, -3);
  }
  const int64_t L = query.size(-2), S = key.size(-2);
  const double scale = scale_of(query, o);
  // (..., L, S)
  Tensor scores = matmul(query, key.transpose(-2, -1)) * scale;
  Tensor keep;  // bool, true where a key takes part
  if (o.is_causal) keep = ones({L, S}, {.dtype = kBool, .device = query.device()}).tril();
  if (o.attn_mask.defined()) {
    if (o.attn_mask.dtype() == kBool)
      keep = o.attn_mask;
    else
      scores = scores + o.attn_mask;
  }
  if (keep.defined())
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  // Rows without a key give zeros (and zero gradients): their scores become 0 before the softmax
  // and their weights 0 after it, so no NaN reaches the output or the backward.
  const double neg_inf = -std::numeric_limits<double>::infinity();
  Tensor empty_rows = (scores == neg_inf).all(-1, true);
  Tensor weights = softmax(scores.masked_fill(empty_rows, 0.0), -1).masked_fill(empty_rows, 0.0);
  if (o.dropout_p > 0) weights = dropout(weights, o.dropout_p, true);
  return matmul(weights, value);
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const ScaledDotProductAttentionOptions& options) {
  check_attention(query, key, value, options);
  Tensor out = fused_scaled_dot_product_attention(query, key, value, options.attn_mask,
                                                  scale_of(query, options), options.is_causal,
                                                  options.enable_gqa, options.dropout_p);
  if (out.defined()) return out;
  return scaled_dot_product_attention_math(query, key, value, options);
}

}  // namespace ember::nn::functional
