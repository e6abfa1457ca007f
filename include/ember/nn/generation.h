// ember/nn/generation.h: text generation with a decoder language model (causal_lm.h) as
// transformers' generate does it -- one prefill over the prompts, then one step per new token
// against a preallocated key/value cache; greedy or sampled (temperature, top-k, top-p,
// repetition penalty, seeded); batches of prompts of different lengths left-padded with an
// attention mask; stopping at end-of-sequence tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ember/nn/causal_lm.h"

namespace ember::nn {

struct GenerationConfig {
  int64_t max_new_tokens = 64;
  bool do_sample = false;  // false: greedy (the largest logit)
  double temperature = 1.0;
  int64_t top_k = 0;                   // 0: no cut
  double top_p = 1.0;                  // 1: no cut
  double repetition_penalty = 1.0;     // > 1 lowers tokens already in the sequence (CTRL's rule)
  std::vector<int64_t> eos_token_ids;  // a row stops after generating one of them
  int64_t pad_token_id = 0;            // left padding, and what finished rows produce
  uint64_t seed = 0;

  // generation_config.json's fields (eos_token_id as a number or a list, pad_token_id,
  // do_sample, temperature, top_k, top_p, repetition_penalty, max_new_tokens); missing fields
  // keep the defaults. Errors name `source` and the key.
  static GenerationConfig from_json(const std::string& json_text,
                                    const std::string& source = "generation_config.json");
  // Throws on a temperature, top_p or penalty out of range, naming the field.
  void check(int64_t vocab_size) const;
};

struct GenerationOutput {
  // Per prompt, the new tokens (up to and including an end-of-sequence token; nothing after).
  std::vector<std::vector<int64_t>> tokens;
  int64_t prompt_tokens = 0;   // summed over the prompts (padding not counted)
  int64_t decode_steps = 0;    // forward passes after the prefill
  double prefill_seconds = 0;  // the prefill, up to the first new tokens
  double decode_seconds = 0;   // the steps after it
};

// Called once per generated position with the new token of every row (rows already finished
// get pad_token_id and finished[row] true).
using GenerationCallback =
    std::function<void(const std::vector<int64_t>& tokens, const std::vector<bool>& finished)>;

// Generates up to config.max_new_tokens tokens after each prompt (non-empty token id lists). The
// prompts run as one batch: shorter ones left-padded with an attention mask, as transformers'
// generate with padding_side "left". Throws when the prompt and the new tokens would pass the
// model's max_positions().
GenerationOutput generate(CausalLanguageModel& model,
                          const std::vector<std::vector<int64_t>>& prompts,
                          const GenerationConfig& config, const GenerationCallback& on_tokens = {});

// The logits processing of one step, exposed for tests: the repetition penalty over `seen`
// (B rows of token ids), then temperature, top-k and top-p, as transformers orders them.
// logits: (B, V) float32 -> (B, V) with cut tokens at -inf.
Tensor process_logits(const Tensor& logits, const std::vector<std::vector<int64_t>>& seen,
                      const GenerationConfig& config);

}  // namespace ember::nn
