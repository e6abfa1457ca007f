// tools/ember/gpt_checkpoint.h: the GPT's entries in a checkpoint's metadata -- its configuration
// (gpt.vocab_size, gpt.block_size, gpt.n_layer, gpt.n_head, gpt.n_embd, gpt.dropout) and its
// vocabulary (gpt.vocab_hex: the sorted characters, two hex digits each), so that
// `ember generate` rebuilds the model and decodes its tokens from the checkpoint alone.
#pragma once

#include <map>
#include <string>

#include "ember/io/safetensors.h"
#include "gpt_data.h"
#include "gpt_model.h"

namespace ember::cli {

struct GptSpec {
  GptConfig config;
  Vocabulary vocab;
};

io::Metadata gpt_metadata(const GptSpec& spec);
// Throws a clear error naming path when an entry is missing, malformed or out of range.
GptSpec gpt_spec_of(const io::Metadata& metadata, const std::string& path);

// Checks the sizes of spec against the checkpoint's tensor shapes ("model.wte.weight", ...)
// before a model is built: metadata claiming 100000 layers is an error, not gigabytes of
// randomly initialised weights.
void check_gpt_weights(const GptSpec& spec, const std::map<std::string, Shape>& shapes,
                       const std::string& path);

}  // namespace ember::cli
