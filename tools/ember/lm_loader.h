// tools/ember/lm_loader.h: a decoder language model for `ember generate --model` -- from a Hugging
// Face folder (config.json, tokenizer.json, generation_config.json, the weights) or a GGUF file
// (hyperparameters, tokenizer and weights in one file) -- with its tokenizer and generation
// defaults.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ember/data/bpe.h"
#include "ember/ember.h"

namespace ember::cli {

struct LanguageModel {
  std::shared_ptr<nn::LlamaForCausalLMImpl> model;
  std::optional<data::BpeTokenizer> tokenizer;
  nn::GenerationConfig generation;  // generation_config.json's, eos from config.json otherwise
  int64_t max_position_embeddings = 0;
  std::string summary;  // one line: architecture, size, dtype
};

// dtype: "auto" (the weights' dtype), "float32", "bfloat16" or "float16". Errors name the file and
// what is wrong with it.
LanguageModel load_language_model(const std::string& path, Device device, const std::string& dtype);

}  // namespace ember::cli
