// tools/ember/commands.h: the subcommands of the `ember` program and their options.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

struct TrainOptions {
  std::string model = "mlp";  // mlp | cnn
  std::string device = "auto";
  int epochs = 5;
  int64_t batch_size = 64;
  double lr = 1e-3;
  std::string optimizer = "adam";  // adam | adamw | sgd
  uint64_t seed = 0;
  std::string data;  // default: the Debian package's directory
  std::string out = "ember-run";
  bool resume = false;
  int workers = 2;
  std::string amp = "none";  // none | bf16 (autocast in bfloat16) | fp16 (float16 + GradScaler)
};

struct EvalOptions {
  std::string checkpoint;
  std::string device = "auto";
  std::string data;
  int64_t batch_size = 1000;
};

// `ember embed`: texts through a sentence-transformers (or BERT) folder.
struct EmbedOptions {
  std::string model;
  std::vector<std::string> texts;
  bool similarity = false;
  std::string device = "auto";
  int64_t batch_size = 32;
};

int run_info();
int run_embed(const EmbedOptions& options);
int run_train(const TrainOptions& options);
int run_eval(const EvalOptions& options);

}  // namespace ember::cli
