// ops/attention.cpp: the fused scaled-dot-product attention op -- which arguments it takes, the
// inputs seen as (N, H, L, E) views and the mask as a broadcast (N, Hq, L, S) view (never
// expanded in memory), the backend's attention_forward and its recorded backward
// (attention_backward, from the saved output and per-row logsumexp), dropout's draws (the CPU
// kernels'), and how 16-bit inputs go: as they are to a backend that takes them (CUDA's
// tensor-core kernels), else through float32.
#include "ops/attention.h"

#include <algorithm>
#include <vector>

#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

namespace {

// The leading dims of t before its last `keep` dims.
Shape leading(const Tensor& t, int64_t keep) {
  return Shape(t.sizes().begin(), t.sizes().end() - keep);
}

// t (..., rows, cols) as (N, H, rows, cols): H the dim -3 (1 for 2-D t), N the product of the
// dims before it. A view where strides allow, else a copy (recorded for autograd).
Tensor as_4d(const Tensor& t) {
  const int64_t d = t.dim();
  int64_t n = 1;
  for (int64_t i = 0; i + 3 < d; ++i) n *= t.size(i);
  const int64_t h = d >= 3 ? t.size(-3) : 1;
  Shape s{n, h, t.size(-2), t.size(-1)};
  return t.sizes() == s ? t : t.reshape(s);
}

// The mask broadcast to `full` (N..., Hq, L, S) and read as (N, Hq, L, S): sizes and strides in
// `sizes` / `strides`; false when the leading dims' strides cannot merge into one.
bool mask_strides(const Tensor& mask, const Shape& full, Shape& sizes, Shape& strides) {
  Shape st = broadcast_strides(mask, full);
  const int64_t d = static_cast<int64_t>(full.size());
  int64_t n = 1, n_stride = 0;
  bool seen = false;
  for (int64_t i = d - 4; i >= 0; --i) {
    if (full[i] == 1) continue;
    if (!seen)
      n_stride = st[i];
    else if (st[i] != n_stride * n)
      return false;
    seen = true;
    n *= full[i];
  }
  const int64_t hq = d >= 3 ? full[d - 3] : 1, h_stride = d >= 3 ? st[d - 3] : 0;
  sizes = Shape{n, hq, full[d - 2], full[d - 1]};
  strides = Shape{n_stride, h_stride, st[d - 2], st[d - 1]};
  return true;
}

// Whether the shapes are ones the kernels take: same rank and leading dims, equal heads (or
// grouped with enable_gqa), nothing empty, a mask that broadcasts to the scores without growing
// them.
bool fused_shapes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                  bool enable_gqa) {
  if (q.dim() != k.dim() || q.dim() != v.dim()) return false;
  if (q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return false;
  const int64_t d = q.dim();
  if (d >= 3) {
    if (leading(q, 3) != leading(k, 3) || leading(q, 3) != leading(v, 3)) return false;
    if (k.size(-3) != v.size(-3)) return false;
    if (q.size(-3) != k.size(-3) && !enable_gqa) return false;
  }
  if (mask.defined()) {
    if (mask.dim() > d) return false;
    Shape full = leading(q, 2);
    full.push_back(q.size(-2));
    full.push_back(k.size(-2));
    for (int64_t i = 1; i <= mask.dim(); ++i) {
      const int64_t m = mask.size(-i), f = full[full.size() - i];
      if (m != f && m != 1) return false;
    }
  }
  return true;
}

Tensor fused_forward(const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& mask,
                     double scale, bool causal, double dropout_p) {
  // (N, Hq, L, E), (N, Hk, S, E), (N, Hk, S, Ev)
  Tensor q = as_4d(q0), k = as_4d(k0), v = as_4d(v0);
  const int64_t N = q.size(0), Hq = q.size(1), L = q.size(2), Hk = k.size(1), Ev = v.size(3);
  AttentionParams p{scale, causal, Hq / Hk};
  if (dropout_p > 0) {
    // The draws dropout(weights, p) makes for the (N, Hq, L, S) weights in q's dtype, taken from
    // the default generator once; the backward replays them from the same counters.
    Generator& g = default_generator(q.device());
    p.dropout_p = dropout_p;
    p.dropout_seed = g.seed();
    p.dropout_counter =
        g.advance(random_counters(RandomKind::Uniform, q.dtype(), N * Hq * L * k.size(2)));
  }
  Shape m_sizes, m_strides;
  View mview{nullptr, {}, {}, q.dtype()};
  if (mask.defined()) {
    Shape full = leading(q0, 2);
    full.push_back(L);
    full.push_back(k.size(2));
    mask_strides(mask, full, m_sizes, m_strides);
    mview = View{mask.impl().data(), m_sizes, m_strides, mask.dtype()};
  }
  // out has the inputs' leading dims, (N..., Hq, L, Ev), and is handed to the kernels as
  // (N, Hq, L, Ev); lse: (N, Hq, L).
  Shape out_shape = leading(q0, 2);
  out_shape.push_back(L);
  out_shape.push_back(Ev);
  const Shape out4{N, Hq, L, Ev}, out4_strides = contiguous_strides(out4);
  Tensor out = make_tensor(out_shape, q.dtype(), q.device());
  // float32 for 16-bit inputs (which only a backend that takes them sees here).
  Tensor lse = make_tensor({N, Hq, L}, q.dtype() == kFloat64 ? kFloat64 : kFloat32, q.device());
  backend_for(q).attention_forward(View{out.impl().data(), out4, out4_strides, out.dtype()},
                                   view_of(lse), view_of(q), view_of(k), view_of(v), mview, p);
  autograd::record("ScaledDotProductFlashAttentionBackward0", {&q, &k, &v}, out,
                   [sq = autograd::SavedTensor(q), sk = autograd::SavedTensor(k),
                    sv = autograd::SavedTensor(v), so = autograd::SavedTensor(out, true), lse, mask,
                    m_sizes, m_strides, out4, out4_strides, p](const Tensor& grad) {
                     Tensor q = sq.unpack(), k = sk.unpack(), v = sv.unpack(), out = so.unpack();
                     Tensor g = grad.to(out.dtype()).contiguous();
                     Tensor dq = make_tensor(q.sizes(), q.dtype(), q.device());
                     Tensor dk = make_tensor(k.sizes(), k.dtype(), k.device());
                     Tensor dv = make_tensor(v.sizes(), v.dtype(), v.device());
                     View mv{mask.defined() ? mask.impl().data() : nullptr, m_sizes, m_strides,
                             mask.defined() ? mask.dtype() : q.dtype()};
                     backend_for(q).attention_backward(
                         view_of(dq), view_of(dk), view_of(dv),
                         View{g.impl().data(), out4, out4_strides, g.dtype()}, view_of(q),
                         view_of(k), view_of(v),
                         View{out.impl().data(), out4, out4_strides, out.dtype()}, view_of(lse), mv,
                         p);
                     return std::vector<Tensor>{dq, dk, dv};
                   });
  return out;
}

}  // namespace

Tensor fused_scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                          const Tensor& value, const Tensor& attn_mask,
                                          double scale, bool is_causal, bool enable_gqa,
                                          double dropout_p) {
  if (autocast_active(query)) {
    // Attention is one of autocast's lower-precision ops (as in PyTorch): the operands in the
    // autocast dtype, then the 16-bit path below (the mask keeps its dtype).
    std::vector<Tensor> low;
    autocast_lower_all({&query, &key, &value}, low);
    autocast_detail::Suspend no_autocast;
    return fused_scaled_dot_product_attention(low[0], low[1], low[2], attn_mask, scale, is_causal,
                                              enable_gqa, dropout_p);
  }
  if (!fused_shapes(query, key, value, attn_mask, enable_gqa)) return Tensor();
  // Dropout is in the CPU kernels only.
  if (dropout_p > 0 && !query.device().is_cpu()) return Tensor();
  // On CUDA float64 and heads over 128 take the math path (the kernels keep the head dims' tiles
  // in shared memory).
  if (query.device().is_cuda() &&
      (query.dtype() == kFloat64 || std::max(query.size(-1), value.size(-1)) > 128))
    return Tensor();
  if (attn_mask.defined() && attn_mask.dtype() != kBool && autograd::needs_grad({&attn_mask}))
    return Tensor();
  if (attn_mask.defined()) {
    Shape full = leading(query, 2), sizes, strides;
    full.push_back(query.size(-2));
    full.push_back(key.size(-2));
    if (!mask_strides(attn_mask, full, sizes, strides)) return Tensor();
  }
  if (is_reduced_float(query.dtype())) {
    // A backend whose kernels take 16-bit views for these head dims reads q, k, v and the mask
    // (bool, float32 under autocast, else the inputs' dtype) as they are: the output and the
    // gradients in the inputs' dtype, the logsumexp in float32.
    const DType md = attn_mask.defined() ? attn_mask.dtype() : kBool;
    if ((md == kBool || md == kFloat32 || is_reduced_float(md)) &&
        backend_for(query).takes_half_attention(query.size(-1), value.size(-1),
                                                query.device().index()))
      return fused_forward(query, key, value, attn_mask, scale, is_causal, dropout_p);
    // Elsewhere through float32 copies and the float32 kernels, the output rounded once.
    Tensor m = attn_mask.defined() && attn_mask.dtype() != kBool ? to_opmath(attn_mask) : attn_mask;
    return fused_forward(to_opmath(query), to_opmath(key), to_opmath(value), m, scale, is_causal,
                         dropout_p)
        .to(query.dtype());
  }
  return fused_forward(query, key, value, attn_mask, scale, is_causal, dropout_p);
}

}  // namespace ember
