// tests/gpt/test_gpt_parts.cpp: the GPT's pieces -- vocabulary and its errors, the train and
// validation split, the batch windows, the learning-rate schedule, the optimizer groups, weight
// tying, causality, and the checkpoint metadata round trip.
#include <gtest/gtest.h>

#include <algorithm>

#include "ember/ember.h"
#include "gpt_checkpoint.h"
#include "gpt_data.h"
#include "gpt_model.h"

namespace ember::cli {
namespace {

TEST(GptData, VocabularyIsTheSortedCharactersAndEncodesBack) {
  Vocabulary v = Vocabulary::of_text("hello world\n");
  EXPECT_EQ(v.chars(), std::string("\n dehlorw"));
  std::vector<int64_t> ids = v.encode("low", "text");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(v.decode(ids[0]), 'l');
  EXPECT_EQ(v.decode(ids[1]), 'o');
  EXPECT_EQ(v.decode(ids[2]), 'w');
}

TEST(GptData, UnknownCharacterIsAClearError) {
  Vocabulary v = Vocabulary::of_text("abc");
  try {
    v.encode("abz", "--prompt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'z' at position 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Vocabulary::of_chars("ba"), Error);  // not sorted
}

TEST(GptData, SplitIsNinetyTenAndRefusesShortText) {
  Tokens tokens(100);
  TextSplits s = split_text(tokens, 5);
  EXPECT_EQ(s.train().size(), 90u);
  EXPECT_EQ(s.val().size(), 10u);
  EXPECT_EQ(s.val().data(), s.train().data() + 90);  // one buffer, not two copies
  EXPECT_THROW(split_text(tokens, 10), Error);  // the 10 validation tokens hold no window of 10
}

TEST(GptData, BatchesAreShiftedWindowsAndResumeFromTheirPosition) {
  Tokens tokens(50);
  for (size_t i = 0; i < 50; ++i) tokens[i] = static_cast<uint8_t>(i);
  BatchSampler a(tokens, 3, 4, 11);
  Tensor x, y, x2, y2;
  a.next(x, y);
  EXPECT_EQ(x.sizes(), (Shape{3, 4}));
  auto xs = x.to_vector<int64_t>(), ys = y.to_vector<int64_t>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], xs[i] + 1);
  for (size_t r = 0; r < 3; ++r)
    for (size_t c = 1; c < 4; ++c) EXPECT_EQ(xs[r * 4 + c], xs[r * 4] + static_cast<int64_t>(c));
  a.next(x, y);
  BatchSampler b(tokens, 3, 4, 11, a.position() - 3);  // the second batch again
  b.next(x2, y2);
  EXPECT_EQ(x.to_vector<int64_t>(), x2.to_vector<int64_t>());
}

TEST(GptModel, LearningRateWarmsUpThenDecaysToTheMinimum) {
  EXPECT_NEAR(gpt_lr_at(0, 1.0, 0.1, 9, 100), 0.1, 1e-12);
  EXPECT_NEAR(gpt_lr_at(8, 1.0, 0.1, 9, 100), 0.9, 1e-12);
  EXPECT_NEAR(gpt_lr_at(9, 1.0, 0.1, 9, 100), 1.0, 1e-12);
  EXPECT_NEAR(gpt_lr_at(100, 1.0, 0.1, 9, 100), 0.1, 1e-12);
  EXPECT_NEAR(gpt_lr_at(500, 1.0, 0.1, 9, 100), 0.1, 1e-12);
  const double mid = gpt_lr_at(54, 1.0, 0.1, 9, 99);  // half way: (lr + min_lr) / 2
  EXPECT_NEAR(mid, 0.55, 1e-12);
}

GptConfig tiny() {
  return {.vocab_size = 7, .block_size = 6, .n_layer = 2, .n_head = 2, .n_embd = 8};
}

TEST(GptModel, InitialisationAndTiedHead) {
  manual_seed(3);
  Gpt model(tiny());
  std::vector<std::string> names;
  for (auto& [name, p] : model->named_parameters()) names.push_back(name);
  EXPECT_EQ(names.front(), "wte.weight");
  EXPECT_EQ(std::count(names.begin(), names.end(), "h.1.attn.c_proj.weight"), 1);
  for (const std::string& n : names) EXPECT_EQ(n.find("lm_head"), std::string::npos);
  auto param = [&](const std::string& name) {
    for (auto& [n, p] : model->named_parameters())
      if (n == name) return p;
    ADD_FAILURE() << "no parameter " << name;
    return Tensor();
  };
  EXPECT_NEAR(param("wte.weight").std().item<double>(), 0.02, 0.005);
  // 0.02 / sqrt(2 * 2 layers) on the projections into the residual stream
  EXPECT_NEAR(param("h.0.attn.c_proj.weight").std().item<double>(), 0.01, 0.003);
  EXPECT_NEAR(param("h.1.mlp.c_proj.weight").std().item<double>(), 0.01, 0.003);
  EXPECT_NEAR(param("h.1.mlp.c_fc.weight").std().item<double>(), 0.02, 0.005);
  EXPECT_TRUE(param("ln_f.weight").eq(1).all().item<bool>());
  EXPECT_TRUE(param("h.0.attn.c_attn.bias").eq(0).all().item<bool>());
  // The head is wte: its gradient gets the output projection's part too.
  Tensor idx = from_vector(std::vector<int64_t>{1, 2, 3}, Shape{1, 3});
  Tensor logits = model(idx);
  EXPECT_EQ(logits.sizes(), (Shape{1, 3, 7}));
  logits.select(2, 6).sum().backward();  // token 6 never appears in idx
  EXPECT_GT(model->wte->weight.grad().select(0, 6).abs().sum().item<double>(), 0);
}

TEST(GptModel, FutureTokensDoNotChangeEarlierLogits) {
  manual_seed(4);
  Gpt model(tiny());
  model->eval();
  Tensor a = model(from_vector(std::vector<int64_t>{1, 2, 3, 4}, Shape{1, 4}));
  Tensor b = model(from_vector(std::vector<int64_t>{1, 2, 5, 6}, Shape{1, 4}));
  auto max_diff = [&](int64_t start) {
    return (a.narrow(1, start, 2) - b.narrow(1, start, 2)).abs().max().item<double>();
  };
  EXPECT_LT(max_diff(0), 1e-6);
  EXPECT_GT(max_diff(2), 1e-4);
  EXPECT_THROW(model(zeros({1, 7}, {.dtype = kInt64})), Error);  // longer than the block
}

TEST(GptModel, WeightDecayOnlyOnMatricesAndEmbeddings) {
  Gpt model(tiny());
  auto opt = make_gpt_optimizer(*model, 1e-3, 0.1, {0.9, 0.99});
  ASSERT_EQ(opt->num_param_groups(), 2u);
  EXPECT_EQ(opt->param_groups()[0].options.weight_decay, 0.1);
  EXPECT_EQ(opt->param_groups()[1].options.weight_decay, 0.0);
  for (const Tensor& p : opt->params(0)) EXPECT_GE(p.dim(), 2);
  for (const Tensor& p : opt->params(1)) EXPECT_EQ(p.dim(), 1);
  EXPECT_EQ(opt->params(0).size() + opt->params(1).size(), model->parameters().size());
}

TEST(GptCheckpoint, MetadataRoundTripsConfigAndVocabulary) {
  GptSpec spec{tiny(), Vocabulary::of_text(std::string("ab\n\t\xe9z", 6))};
  spec.config.vocab_size = spec.vocab.size();
  spec.config.dropout = 0.25;
  GptSpec back = gpt_spec_of(gpt_metadata(spec), "x");
  EXPECT_EQ(back.vocab.chars(), spec.vocab.chars());
  EXPECT_EQ(back.config.n_embd, 8);
  EXPECT_EQ(back.config.vocab_size, 6);
  EXPECT_DOUBLE_EQ(back.config.dropout, 0.25);
  io::Metadata broken = gpt_metadata(spec);
  broken.erase("gpt.n_head");
  EXPECT_THROW(gpt_spec_of(broken, "x"), Error);
}

}  // namespace
}  // namespace ember::cli
