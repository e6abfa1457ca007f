// tools/ember/gpt_generate.cpp: `ember generate` -- samples characters from a GPT checkpoint,
// streaming each to stdout as it comes: the context cropped to the block size, the last logits
// divided by the temperature, cut to the top k, softmax, one multinomial draw. Output that
// cannot be written (a full disk) stops it at once with an error.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "checkpoint.h"
#include "commands.h"
#include "ember/ember.h"
#include "gpt_checkpoint.h"
#include "output.h"

namespace ember::cli {

int run_generate(const GenerateOptions& o) {
  if (!o.model.empty()) return run_generate_lm(o);
  if (o.threads > 0) set_num_threads(o.threads);
  EMBER_CHECK(!o.top_p && !o.repetition_penalty && o.dtype == "auto",
              "--top-p, --repetition-penalty and --dtype are for --model; a GPT checkpoint "
              "samples with --temperature and --top-k");
  const int64_t tokens = o.tokens.value_or(500), top_k = o.top_k.value_or(0);
  const double temperature = o.temperature.value_or(1.0);
  const std::string prompt = o.prompt.value_or("\n");
  CheckpointInfo info = read_checkpoint_info(o.checkpoint);
  EMBER_CHECK(info.model == "gpt", "[checkpoint] '", o.checkpoint, "' holds a model of kind '",
              info.model, "'; `ember generate` samples from `ember train --model gpt` checkpoints");
  const GptSpec spec = gpt_spec_of(info.extra, o.checkpoint);
  check_gpt_weights(spec, info.shapes, o.checkpoint);
  const int64_t V = spec.vocab.size();
  EMBER_CHECK(top_k >= 0 && top_k <= V, "--top-k ", top_k, " is larger than the vocabulary of ", V,
              " characters; use 1 to ", V, " (or 0 for all)");
  EMBER_CHECK(temperature > 0, "--temperature must be positive, not ", temperature);
  EMBER_CHECK(!prompt.empty(), "--prompt must have at least one character");
  std::vector<int64_t> ids = spec.vocab.encode(prompt, "--prompt");

  Device device = pick_device(o.device);
  Gpt model(spec.config);
  model->to(device);
  load_checkpoint(o.checkpoint, *model, nullptr, "gpt");
  for (const auto& [name, p] : model->named_parameters())
    EMBER_CHECK_KIND(Value, p.isfinite().all().item<bool>(), "[generate] '", o.checkpoint,
                     "' holds infinite or NaN values in ", name,
                     ": its training diverged or the file is damaged; use an earlier checkpoint");
  model->eval();
  NoGradGuard no_grad;
  Generator gen(o.seed);
  const auto block = static_cast<size_t>(spec.config.block_size);

  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  flush_stdout_checked();
  for (int64_t n = 0; n < tokens; ++n) {
    std::vector<int64_t> context(
        ids.size() > block ? ids.end() - static_cast<int64_t>(block) : ids.begin(), ids.end());
    const auto T = static_cast<int64_t>(context.size());
    Tensor logits = model(from_vector(context, Shape{1, T}).to(device));  // (1, T, V)
    Tensor last = logits.select(1, T - 1);                                // (1, V)
    // Shifted so that the largest logit is 0, then scaled by 1 / temperature capped at 1e30 (a
    // float32 holds it; 1 / 1e-300 it does not): a tiny temperature gives the others -inf
    // (probability 0), never 0 * inf or inf - inf.
    last = (last - last.amax({1}, true)) * std::min(1.0 / temperature, 1e30);
    if (top_k > 0 && top_k < V) {
      Tensor kth = std::get<0>(last.topk(top_k, -1)).select(1, top_k - 1).unsqueeze(1);
      last = last.masked_fill(last < kth, -std::numeric_limits<double>::infinity());
    }
    const int64_t next = last.softmax(-1).multinomial(1, false, &gen).cpu().item<int64_t>();
    ids.push_back(next);
    std::fputc(spec.vocab.decode(next), stdout);
    flush_stdout_checked();
  }
  std::fputc('\n', stdout);
  flush_stdout_checked();
  return 0;
}

}  // namespace ember::cli
