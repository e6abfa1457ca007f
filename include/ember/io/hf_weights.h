// ember/io/hf_weights.h: the weights of a Hugging Face model folder, in whichever of the forms
// save_pretrained writes them -- model.safetensors, pytorch_model.bin, or either sharded with an
// index (model.safetensors.index.json / pytorch_model.bin.index.json).
#pragma once

#include <string>
#include <vector>

#include "ember/io/named_tensors.h"

namespace ember::io {

struct HfWeights {
  NamedTensors tensors;            // shard by shard, each in its file's order
  std::vector<std::string> files;  // the files read, in that order
};

// Reads the folder's weights, preferring safetensors as transformers does: model.safetensors,
// then model.safetensors.index.json, pytorch_model.bin, pytorch_model.bin.index.json. An index's
// shards must be files of the folder itself; every name of its weight_map must be in the shard it
// names, and no name may come twice. Tensors are placed on `device`. Errors name the folder and
// the files it lacks or the entry that is wrong.
HfWeights load_hf_weights(const std::string& dir, Device device = Device(kCPU));

}  // namespace ember::io
