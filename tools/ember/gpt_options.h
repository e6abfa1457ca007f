// tools/ember/gpt_options.h: the command-line flags of `ember train --model gpt` and
// `ember generate`.
#pragma once

#include <CLI/CLI.hpp>

#include "commands.h"

namespace ember::cli {

void add_gpt_train_options(CLI::App& train, GptTrainOptions& options);
void add_generate_options(CLI::App& generate, GenerateOptions& options);

}  // namespace ember::cli
