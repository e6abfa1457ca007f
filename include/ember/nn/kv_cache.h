// ember/nn/kv_cache.h: the key/value cache of a decoder language model -- per layer, keys and
// values of every position so far, preallocated to a capacity in the model's dtype, so that
// generation runs one prefill over the prompt and then one step per new token, each attending
// to the cached positions instead of recomputing them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn {

class KvCache {
 public:
  KvCache() = default;
  // layers x keys and values of (batch, kv_heads, capacity, head_dim).
  KvCache(int64_t layers, int64_t batch, int64_t kv_heads, int64_t capacity, int64_t head_dim,
          DType dtype, Device device);

  // Writes layer `layer`'s new keys and values -- (batch, kv_heads, L, head_dim) -- after the
  // `length()` positions held, and returns the keys and values of all length() + L positions
  // (views into the cache). Throws when they would pass the capacity.
  std::pair<Tensor, Tensor> update(int64_t layer, const Tensor& key, const Tensor& value);
  // Counts L more positions as held, once every layer has been updated with them.
  void advance(int64_t positions);
  void reset() { length_ = 0; }

  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }
  int64_t batch() const { return batch_; }
  bool defined() const { return !keys_.empty(); }

 private:
  std::vector<Tensor> keys_, values_;
  int64_t batch_ = 0, capacity_ = 0, length_ = 0;
};

// The attention mask of L queries at positions past .. past + L - 1 over the past + L keys:
// (batch, 1, L, past + L) bool, true where key j may be seen by query i -- j <= past + i, j a real
// token (key_keep: (batch, past + L), nonzero for tokens, zero for padding; undefined: all real),
// and, with a sliding window w > 0, j > past + i - w.
Tensor causal_attention_mask(int64_t batch, int64_t L, int64_t past, const Tensor& key_keep,
                             int64_t sliding_window, Device device);

// The positions (batch, L) int64 of L new tokens after `past` cached ones, and the attention mask
// of the step (as causal_attention_mask, or undefined where causal attention over the new tokens
// alone is the rule). With attention_mask ((batch, past + L), 0 for padding) positions count the
// tokens only, as transformers' generate does, and padding is masked out. `model` names the
// caller in errors about attention_mask's shape.
std::pair<Tensor, Tensor> decoder_positions(const char* model, int64_t batch, int64_t L,
                                            int64_t past, const Tensor& attention_mask,
                                            int64_t sliding_window, Device device);

}  // namespace ember::nn
