// tests/gpt/test_gpt_reference.cpp: the GPT of `ember train --model gpt` against the PyTorch
// reference (tests/reference/gpt_reference.py, which wrote fixtures/gpt_tiny.safetensors): the
// same initial weights and batches give the same losses for the first steps of AdamW with
// warmup, gradient accumulation and clipping, and the same validation loss after them.
#include <gtest/gtest.h>

#include <sstream>

#include "ember/ember.h"
#include "ember/io/safetensors.h"
#include "gpt_data.h"
#include "gpt_model.h"
#include "gpt_step.h"

namespace ember::cli {
namespace {

struct Fixture {
  io::SafetensorsFile file;
  double number(const std::string& key) const { return std::stod(file.metadata.at(key)); }
  int64_t integer(const std::string& key) const { return std::stoll(file.metadata.at(key)); }
};

Fixture load_fixture() {
  return {
      io::load_safetensors(std::string(EMBER_REFERENCE_DIR) + "/fixtures/gpt_tiny.safetensors")};
}

TEST(GptReference, FirstStepsGiveTheReferenceLosses) {
  Fixture f = load_fixture();
  GptConfig config{.vocab_size = f.integer("vocab_size"),
                   .block_size = f.integer("block_size"),
                   .n_layer = f.integer("n_layer"),
                   .n_head = f.integer("n_head"),
                   .n_embd = f.integer("n_embd"),
                   .dropout = f.number("dropout")};
  Gpt model(config);
  nn::StateDict weights;
  Tokens tokens;
  for (auto& [name, t] : f.file.tensors) {
    if (name == "tokens")
      for (int64_t id : t.to_vector<int64_t>()) tokens.push_back(static_cast<uint8_t>(id));
    else
      weights.emplace_back(name.substr(6), t);  // "model." dropped
  }
  model->load_state_dict(weights);
  TextSplits splits = split_text(tokens, config.block_size);

  const double lr = f.number("lr");
  const int64_t iters = f.integer("iters"), batch = f.integer("batch_size");
  auto opt = make_gpt_optimizer(*model, lr, f.number("weight_decay"), {0.9, 0.99});
  BatchSampler sampler(splits.train(), batch, config.block_size,
                       stream_seed(static_cast<uint64_t>(f.integer("seed")), kTrainStream));
  std::istringstream expected(f.file.metadata.at("losses"));
  for (int64_t it = 0; it < iters; ++it) {
    double want = 0;
    ASSERT_TRUE(expected >> want) << "the fixture has fewer losses than iterations";
    const double got =
        gpt_train_step(*model, *opt, sampler, f.integer("grad_accum"), f.number("grad_clip"),
                       gpt_lr_at(it, lr, lr / 10, f.integer("warmup_iters"), iters), Device(kCPU));
    EXPECT_NEAR(got, want, 1e-4) << "step " << it;
  }
  const double val = gpt_estimate_loss(
      *model, splits.val(), batch, 2,
      stream_seed(static_cast<uint64_t>(f.integer("seed")), kEvalValStream), Device(kCPU));
  EXPECT_NEAR(val, f.number("val_loss"), 1e-4);
}

}  // namespace
}  // namespace ember::cli
