// tools/ember/checkpoint.h: a training checkpoint in safetensors -- model parameters and buffers
// ("model.<name>"), optimizer state ("optimizer.<key>"), and as metadata the model and optimizer
// names, the finished epoch, the seed and the random generator's position; with --amp fp16 also
// the GradScaler's state ("scaler.<key>"). Models with more to say (the GPT's configuration and
// vocabulary) add metadata entries of their own.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ember/io/safetensors.h"

#include "ember/nn.h"
#include "ember/optim.h"

namespace ember::cli {

struct CheckpointInfo {
  std::string model, optimizer;
  int epoch = 0;
  uint64_t seed = 0, generator_seed = 0, generator_offset = 0;
  io::Metadata extra;  // saved beside the entries above; loading gives back the whole metadata
  // read_checkpoint_info: the shape of every tensor, to check the sizes the metadata claims
  // before a model is built.
  std::map<std::string, Shape> shapes;
};

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* opt,
                     const CheckpointInfo& info, const amp::GradScaler* scaler = nullptr);
// Reads the metadata only (to build the right model first).
CheckpointInfo read_checkpoint_info(const std::string& path);

// Creates --out if needed and checks that files can be written there, so that a wrong --out
// fails at once rather than after the first epoch's work.
void prepare_out_dir(const std::string& out);

// --resume continues a run exactly, so a flag that shapes the run (the seed, the batch size)
// must have the value the checkpoint's run had; throws naming both values otherwise. Keys a
// checkpoint of an older ember lacks are not checked.
void check_resume_flag(const CheckpointInfo& info, const std::string& path, const std::string& key,
                       const std::string& flag, const std::string& value);
// Loads weights (and optimizer state when opt is given) into an already built model; throws a
// clear error when the checkpoint is of another model.
// An enabled scaler takes the checkpoint's scaler state when it has one (a run resumed with
// --amp fp16 after another --amp starts from the default scale).
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* opt,
                               const std::string& expected_model,
                               amp::GradScaler* scaler = nullptr);

}  // namespace ember::cli
