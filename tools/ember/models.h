// tools/ember/models.h: the models `ember train` knows, by name.
#pragma once

#include <string>

#include "ember/nn.h"

namespace ember::cli {

// "mlp": Flatten, 784-256 ReLU, 256-10. "cnn": two 3x3 conv + ReLU + 2x2 max-pool blocks
// (32 and 64 channels), then 3136-128 ReLU, dropout 0.25, 128-10. Input: (N, 1, 28, 28).
nn::Sequential make_model(const std::string& name);

}  // namespace ember::cli
