// nn/kv_cache.cpp: the preallocated key/value cache of ember/nn/kv_cache.h and the causal
// attention mask over cached and new positions.
#include "ember/nn/kv_cache.h"

#include "ember/creation.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::nn {

KvCache::KvCache(int64_t layers, int64_t batch, int64_t kv_heads, int64_t capacity,
                 int64_t head_dim, DType dtype, Device device)
    : batch_(batch), capacity_(capacity) {
  EMBER_CHECK(layers > 0 && batch > 0 && kv_heads > 0 && capacity > 0 && head_dim > 0,
              "[KvCache] layers, batch, kv_heads, capacity and head_dim must be positive, got ",
              layers, ", ", batch, ", ", kv_heads, ", ", capacity, ", ", head_dim);
  for (int64_t i = 0; i < layers; ++i) {
    keys_.push_back(
        empty({batch, kv_heads, capacity, head_dim}, {.dtype = dtype, .device = device}));
    values_.push_back(
        empty({batch, kv_heads, capacity, head_dim}, {.dtype = dtype, .device = device}));
  }
}

std::pair<Tensor, Tensor> KvCache::update(int64_t layer, const Tensor& key, const Tensor& value) {
  EMBER_CHECK(layer >= 0 && layer < static_cast<int64_t>(keys_.size()), "[KvCache] layer ", layer,
              " of a cache of ", keys_.size(), " layers");
  Tensor& K = keys_[layer];
  Tensor& V = values_[layer];
  const int64_t L = key.size(2);
  EMBER_CHECK_KIND(Shape,
                   key.dim() == 4 && key.size(0) == K.size(0) && key.size(1) == K.size(1) &&
                       key.size(3) == K.size(3) && value.sizes() == key.sizes(),
                   "[KvCache] keys ", shape_str(key.sizes()), " and values ",
                   shape_str(value.sizes()),
                   " do not fit a cache of (batch, heads, positions, "
                   "head_dim) = ",
                   shape_str(K.sizes()));
  EMBER_CHECK_KIND(Index, length_ + L <= capacity_, "[KvCache] ", length_, " cached and ", L,
                   " new positions pass the capacity of ", capacity_,
                   "; make the cache larger (or generate fewer tokens)");
  K.narrow(2, length_, L).copy_(key);
  V.narrow(2, length_, L).copy_(value);
  return {K.narrow(2, 0, length_ + L), V.narrow(2, 0, length_ + L)};
}

void KvCache::advance(int64_t positions) {
  EMBER_CHECK(positions >= 0 && length_ + positions <= capacity_, "[KvCache] advancing ", positions,
              " positions from ", length_, " passes the capacity of ", capacity_);
  length_ += positions;
}

Tensor causal_attention_mask(int64_t batch, int64_t L, int64_t past, const Tensor& key_keep,
                             int64_t sliding_window, Device device) {
  const int64_t S = past + L;
  Tensor q = arange(past, S, 1, {.dtype = kInt64, .device = device}).unsqueeze(1);  // (L, 1)
  Tensor k = arange(0, S, 1, {.dtype = kInt64, .device = device}).unsqueeze(0);     // (1, S)
  Tensor allowed = k <= q;
  if (sliding_window > 0) allowed = allowed.logical_and(k > q - sliding_window);
  Tensor mask = allowed.unsqueeze(0).unsqueeze(0).expand({batch, 1, L, S});  // (B, 1, L, S)
  if (key_keep.defined()) {
    EMBER_CHECK_KIND(Shape,
                     key_keep.dim() == 2 && key_keep.size(0) == batch && key_keep.size(1) == S,
                     "[causal_attention_mask] key_keep ", shape_str(key_keep.sizes()),
                     " must be (batch, positions) = (", batch, ", ", S, ")");
    mask = mask.logical_and((key_keep != 0).unsqueeze(1).unsqueeze(1));
  }
  return mask.contiguous();
}

std::pair<Tensor, Tensor> decoder_positions(const char* model, int64_t B, int64_t L, int64_t past,
                                            const Tensor& attention_mask, int64_t sliding_window,
                                            Device device) {
  Tensor positions, mask;
  if (attention_mask.defined()) {
    EMBER_CHECK_KIND(Shape,
                     attention_mask.dim() == 2 && attention_mask.size(0) == B &&
                         attention_mask.size(1) == past + L,
                     "[", model, "] attention_mask ", shape_str(attention_mask.sizes()),
                     " must be (batch, cached + new tokens) = (", B, ", ", past + L, ")");
    const Tensor keep = (attention_mask != 0).to(kInt64);
    // Left padding shifts no token's position.
    positions = (keep.cumsum(1) - 1).clamp(0).narrow(1, past, L);
    mask = causal_attention_mask(B, L, past, keep, sliding_window, device);
    return {positions, mask};
  }
  positions =
      arange(past, past + L, 1, {.dtype = kInt64, .device = device}).unsqueeze(0).expand({B, L});
  if (past > 0 && L > 1) mask = causal_attention_mask(B, L, past, Tensor(), 0, device);
  if (sliding_window > 0 && past + L > sliding_window)
    mask = causal_attention_mask(B, L, past, Tensor(), sliding_window, device);
  return {positions, mask};
}

}  // namespace ember::nn
