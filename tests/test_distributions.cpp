// tests/test_distributions.cpp: bernoulli, exponential_, multinomial and the dropout variants --
// moments of large seeded samples within five standard errors (a wrong distribution fails them),
// multinomial's draws without replacement (distinct, never a zero weight, every category when
// all are drawn), reproducibility from a seed, whole channels dropped together, and the errors.
#include <cmath>
#include <set>

#include "test_util.h"

namespace ember {
namespace {

using testing::throws_error;
namespace F = nn::functional;

class DistributionsTest : public testing::DeviceTest {};

constexpr int64_t kN = 200000;

TEST_P(DistributionsTest, BernoulliAndExponentialMoments) {
  manual_seed(7);
  Tensor p = full({kN}, 0.3, on());
  const double mean = bernoulli(p).mean().item<double>();
  EXPECT_NEAR(mean, 0.3, 5 * std::sqrt(0.3 * 0.7 / kN));
  Tensor ones_or_zeros = bernoulli(zeros({kN}, on(kFloat64)), 0.8);
  EXPECT_NEAR(ones_or_zeros.mean().item<double>(), 0.8, 5 * std::sqrt(0.8 * 0.2 / kN));
  Tensor e = empty({kN}, on());
  e.exponential_(2.0);
  EXPECT_NEAR(e.mean().item<double>(), 0.5, 5 * 0.5 / std::sqrt(kN));
  EXPECT_GE(e.min().item<double>(), 0.0);
  Tensor b = zeros({kN}, on());
  b.bernoulli_(0.25);
  EXPECT_NEAR(b.mean().item<double>(), 0.25, 5 * std::sqrt(0.25 * 0.75 / kN));
  Tensor u = empty({kN}, on());
  u.uniform_(-1, 3);
  EXPECT_NEAR(u.mean().item<double>(), 1.0, 5 * 4 / std::sqrt(12.0 * kN));
}

TEST_P(DistributionsTest, MultinomialWithReplacementFollowsTheWeights) {
  Generator g(11);
  Tensor w = tensor({1.0f, 0.0f, 3.0f, 6.0f}, on());  // not normalized
  Tensor draws = multinomial(w, kN, true, &g);
  EXPECT_EQ(draws.sizes(), (Shape{kN}));
  EXPECT_EQ(draws.dtype(), kInt64);
  Tensor counts = bincount(draws.cpu(), Tensor(), 4).to(kFloat64) / static_cast<double>(kN);
  const std::vector<double> c = testing::values_of(counts);
  const double want[] = {0.1, 0.0, 0.3, 0.6};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(c[i], want[i], 5 * std::sqrt(want[i] * (1 - want[i]) / kN) + 1e-12) << i;
  Generator again(11);
  EXPECT_TRUE(testing::tensor_equal(multinomial(w, kN, true, &again), draws));
}

TEST_P(DistributionsTest, MultinomialWithoutReplacement) {
  Generator g(3);
  Tensor w = tensor({{0.5f, 0.0f, 2.0f, 1.0f, 0.25f}, {1.0f, 1.0f, 1.0f, 1.0f, 1.0f}}, on());
  for (int trial = 0; trial < 50; ++trial) {
    Tensor d = multinomial(w, 4, false, &g).cpu();
    ASSERT_EQ(d.sizes(), (Shape{2, 4}));
    std::vector<int64_t> v = d.contiguous().to_vector<int64_t>();
    for (int r = 0; r < 2; ++r) {
      std::set<int64_t> seen(v.begin() + 4 * r, v.begin() + 4 * r + 4);
      EXPECT_EQ(seen.size(), 4u);
      if (r == 0) {
        EXPECT_FALSE(seen.count(1)) << "a zero weight was drawn";
      }
    }
  }
  // The heaviest category comes first most often: weight 2 of 3.75 for the first draw.
  Generator h(5);
  Tensor many =
      multinomial(w.select(0, 0).unsqueeze(0).expand({20000, 5}).contiguous(), 1, false, &h);
  const double share = eq(many, 2).to(kFloat64).mean().item<double>();
  EXPECT_NEAR(share, 2.0 / 3.75, 5 * std::sqrt(0.53 * 0.47 / 20000));
}

TEST_P(DistributionsTest, DropoutVariantsDropWholeChannels) {
  manual_seed(1);
  Tensor x = ones({8, 16, 5}, on());
  Tensor y = F::dropout1d(x, 0.5, true);
  // Each (n, c) channel is all 0 or all 2.
  Tensor per_channel_min = y.amin({2}), per_channel_max = y.amax({2});
  EXPECT_TRUE(testing::tensor_equal(per_channel_min, per_channel_max));
  EXPECT_TRUE(testing::tensor_equal(logical_or(eq(per_channel_min, 0), eq(per_channel_min, 2)),
                                    ones({8, 16}, on(kBool))));
  Tensor z = F::dropout3d(ones({2, 4, 3, 3, 3}, on()), 0.5, true);
  EXPECT_TRUE(testing::tensor_equal(z.amin({2, 3, 4}), z.amax({2, 3, 4})));
  EXPECT_TRUE(testing::tensor_equal(F::dropout3d(x.unsqueeze(-1).unsqueeze(-1), 0.5, false),
                                    x.unsqueeze(-1).unsqueeze(-1)));
  // alpha_dropout keeps a standard normal input's mean and variance.
  Tensor n = randn({kN}, on());
  Tensor a = F::alpha_dropout(n, 0.2, true);
  EXPECT_NEAR(a.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(a.var().item<double>(), 1.0, 0.03);
  nn::AlphaDropout module(0.2);
  module->eval();
  EXPECT_TRUE(testing::tensor_equal(module->forward(n), n));
  EXPECT_EQ(nn::Dropout1d(0.3)->extra_repr(), "p=0.3, inplace=False");
}

TEST_P(DistributionsTest, BadArgumentsAreClearErrors) {
  Tensor w = tensor({1.0f, 2.0f}, on());
  EXPECT_TRUE(throws_error([&] { multinomial(w, 3); }, ErrorKind::Value, {"without replacement"}));
  EXPECT_TRUE(throws_error(
      [&] {
        multinomial(tensor({1.0f, -1.0f}, on()), 1);
      },
      ErrorKind::Value, {"element < 0"}));
  EXPECT_TRUE(throws_error([&] { multinomial(zeros({2}, on()), 1, true); }, ErrorKind::Value,
                           {"sum of probabilities"}));
  EXPECT_TRUE(throws_error(
      [&] {
        multinomial(tensor({1.0f, 0.0f}, on()), 2);
      },
      ErrorKind::Value, {"not enough"}));
  EXPECT_TRUE(throws_error(
      [&] {
        multinomial(zeros({2, 2, 2}, on()), 1);
      },
      ErrorKind::Shape, {"1 or 2 dim"}));
  EXPECT_TRUE(throws_error([&] { bernoulli(tensor({1.5f}, on())); }, ErrorKind::Value, {"[0, 1]"}));
  EXPECT_TRUE(throws_error([&] { bernoulli(w, 2.0); }, ErrorKind::Value, {"p must be in [0, 1]"}));
  Tensor e = zeros({2}, on());
  EXPECT_TRUE(throws_error([&] { e.exponential_(0); }, ErrorKind::Value, {"lambda > 0"}));
  EXPECT_TRUE(throws_error([&] { F::dropout1d(zeros({2}, on()), 0.5); }, ErrorKind::Shape,
                           {"[dropout1d] expected a 2-D"}));
  EXPECT_TRUE(throws_error([&] { nn::AlphaDropout(1.5); }, ErrorKind::Value, {"[AlphaDropout]"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(DistributionsTest);

}  // namespace
}  // namespace ember
