// ops/attention.h: the fused scaled-dot-product attention op (flash-attention kernels of the CPU
// and CUDA backends, with its own backward) that F::scaled_dot_product_attention dispatches to.
#pragma once

#include "ember/tensor.h"

namespace ember {

// softmax(q k^T * scale + mask) v without the (L, S) scores, or an undefined Tensor when the
// fused kernels do not take these arguments (the caller then uses the math path). query
// (N..., Hq, L, E), key (N..., H, S, E), value (N..., H, S, Ev) with the same leading dims N...
// and H == Hq unless enable_gqa; attn_mask undefined, bool or additive (not requiring grad),
// broadcastable to (N..., Hq, L, S). dropout_p > 0 (CPU only) drops the weights as
// dropout(weights, dropout_p) would, with the same draws from the default generator. Arguments
// are already checked (nn/attention.cpp). The backward node is
// ScaledDotProductFlashAttentionBackward0.
Tensor fused_scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                          const Tensor& value, const Tensor& attn_mask,
                                          double scale, bool is_causal, bool enable_gqa,
                                          double dropout_p);

}  // namespace ember
