// tools/ember/commands.h: the subcommands of the `ember` program and their options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/device.h"
#include "launcher.h"  // `ember run`: LaunchOptions and run_launcher, kept free of ember itself

namespace ember::cli {

// `ember train --model gpt`'s own flags (nanoGPT's "baby" size by default).
struct GptTrainOptions {
  int64_t layers = 4, heads = 4, embd = 128, block_size = 64;
  int64_t iters = 2000, eval_interval = 250, eval_iters = 50, warmup_iters = 100, grad_accum = 1;
  int64_t lr_decay_iters = 0;  // 0: --iters
  double dropout = 0.0, weight_decay = 0.1, grad_clip = 1.0;
};

struct TrainOptions {
  std::string model = "mlp";  // mlp | cnn | gpt
  std::string device = "auto";
  int epochs = 5;
  int64_t batch_size = 0;  // 0: the model's default (64; 12 for the GPT)
  double lr = 1e-3;
  std::string optimizer = "adam";  // adam | adamw | sgd
  uint64_t seed = 0;
  std::string data;  // default: the Debian package's directory (a text file for the GPT)
  std::string out = "ember-run";
  bool resume = false;
  int workers = 2;
  std::string amp = "none";  // none | bf16 (autocast in bfloat16) | fp16 (float16 + GradScaler)
  std::string loss_axis = "auto";  // curves.svg's loss axis: auto | linear | log
  int nproc_per_node = 0;      // > 0: train data-parallel on that many processes of this machine
  bool oversubscribe = false;  // allow more than 4 processes per core (launcher.h)
  GptTrainOptions gpt;
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

// `ember generate`: from an `ember train --model gpt` checkpoint (characters) or a language
// model (--model: a Hugging Face folder or a GGUF file). Unset options take the form's defaults:
// the GPT samples 500 characters at temperature 1; a language model follows its
// generation_config.json (greedy when it says nothing) for 128 tokens.
struct GenerateOptions {
  std::string checkpoint;
  std::string model;
  std::string device = "auto";
  std::optional<std::string> prompt;
  std::optional<int64_t> tokens, top_k;  // top_k 0: no cut
  std::optional<double> temperature;     // --model: 0 is greedy
  std::optional<double> top_p, repetition_penalty;
  uint64_t seed = 0;
  std::string dtype = "auto";     // --model: auto (the weights'), float32, bfloat16, float16
  std::string quantize = "none";  // --model: none, int8, q8_0, q4_0 or q4_1 (weight-only)
  int threads = 0;                // 0: as set by the environment
};

// --device: auto (the best device here), or a device that must be available.
Device pick_device(const std::string& spec);

int run_info();
int run_embed(const EmbedOptions& options);
int run_train(const TrainOptions& options);
int run_eval(const EvalOptions& options);
int run_train_gpt(const TrainOptions& options);
int run_generate(const GenerateOptions& options);
int run_generate_lm(const GenerateOptions& options);  // --model

}  // namespace ember::cli
