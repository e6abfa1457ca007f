// ember/nn/causal_lm.h: what generation needs of a decoder language model (LlamaForCausalLM,
// GPT2LMHeadModel): logits for new tokens given a key/value cache, a cache of the right shape,
// and the model's limits.
#pragma once

#include <cstdint>

#include "ember/nn/kv_cache.h"
#include "ember/tensor.h"

namespace ember::nn {

class CausalLanguageModel {
 public:
  virtual ~CausalLanguageModel() = default;
  // input_ids: (B, L) int64; attention_mask: (B, past + L), 1 for tokens and 0 for padding, or
  // undefined; logits_to_keep: 0 for all L positions, n for the last n -> (B, L or n, vocab).
  virtual Tensor lm_forward(const Tensor& input_ids, KvCache* cache, const Tensor& attention_mask,
                            int64_t logits_to_keep) = 0;
  // An empty cache for `batch` sequences of up to `capacity` positions, in the model's dtype and
  // on its device.
  virtual KvCache new_cache(int64_t batch, int64_t capacity) = 0;
  // The most positions the model takes (its learned position table's size), or a large number
  // where positions are rotary and unbounded.
  virtual int64_t max_positions() const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual Device device() const = 0;  // where its weights are
};

}  // namespace ember::nn
