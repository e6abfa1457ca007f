// tools/ember/lm_loader.h: a decoder language model for `ember generate --model` -- from a Hugging
// Face folder (config.json, tokenizer.json, generation_config.json, the weights: a Llama-family
// model or GPT-2) or a GGUF file (hyperparameters, tokenizer and weights in one file: the Llama
// family) -- with its tokenizer and generation defaults.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ember/data/bpe.h"
#include "ember/ember.h"

namespace ember::cli {

struct LanguageModel {
  std::shared_ptr<nn::CausalLanguageModel> model;   // what generate() runs
  std::shared_ptr<nn::Module> module;               // the same model as a module
  std::shared_ptr<nn::LlamaForCausalLMImpl> llama;  // the same, for a Llama-family model
  DType dtype = kFloat32;                           // the dtype it computes in
  std::optional<data::BpeTokenizer> tokenizer;
  nn::GenerationConfig generation;  // generation_config.json's, eos from config.json otherwise
  int64_t max_position_embeddings = 0;
  std::string summary;  // one line: architecture, size, dtype
};

// dtype: "auto" (the weights' dtype), "float32", "bfloat16" or "float16"; quantize: "none",
// "int8", "q8_0", "q4_0" or "q4_1" -- weight-only quantization of the float weights (a GGUF
// file's Q8_0, Q4_0 and Q4_1 tensors are kept as stored either way). Errors name the file and what
// is wrong with it.
LanguageModel load_language_model(const std::string& path, Device device, const std::string& dtype,
                                  const std::string& quantize = "none");

}  // namespace ember::cli
