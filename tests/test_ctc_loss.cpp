// tests/test_ctc_loss.cpp: F::ctc_loss and nn::CTCLoss by hand (PyTorch's values and gradients
// are the ctc_loss lines of tests/reference/math_ops.txt): the loss against a sum over every
// alignment, layouts and overloads that must agree, -inf log-probabilities, zero_infinity,
// float32 against float64, a gradcheck through log_softmax, the module and the errors.
#include <cmath>
#include <functional>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;
using testing::throws_error;

class CtcLossTest : public testing::DeviceTest {
 protected:
  // (T, N, C) log-probabilities: log_softmax of fixed distinct values.
  Tensor log_probs(int64_t T, int64_t N, int64_t C, DType dtype = kFloat64,
                   bool requires_grad = false) const {
    Tensor x = (arange(T * N * C, {.dtype = kFloat64}) * 0.37).sin().view({T, N, C}) * 2.0;
    Tensor lp = log_softmax(x, 2).to(dtype).to(device());
    return requires_grad ? lp.requires_grad_(true) : lp;
  }
  Tensor ints(const NestedValues& v) const { return tensor(v, on(kInt64)); }
};

// The probability of `target` as the sum over all C^length alignments whose collapse (repeats
// merged, blanks dropped) is the target. lp: (T, C) on the host.
double alignment_sum(const Tensor& lp, int64_t length, const std::vector<int64_t>& target,
                     int64_t blank) {
  const std::vector<double> v = testing::values_of(lp);
  const int64_t C = lp.size(1);
  double total = 0;
  std::vector<int64_t> path(length, 0);
  for (;;) {
    std::vector<int64_t> collapsed;
    double logp = 0;
    for (int64_t t = 0; t < length; ++t) {
      logp += v[t * C + path[t]];
      if (path[t] != blank && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
    }
    if (collapsed == target) total += std::exp(logp);
    int64_t t = 0;
    while (t < length && ++path[t] == C) path[t++] = 0;
    if (t == length) return total;
  }
}

TEST_P(CtcLossTest, LossIsMinusTheLogOfTheSumOverAlignments) {
  const int64_t T = 5, C = 3;
  Tensor lp = log_probs(T, 3, C);
  Tensor targets = ints({{1, 1}, {2, 1}, {1, 0}});
  const std::vector<std::vector<int64_t>> want = {{1, 1}, {2, 1}, {1}};
  const std::vector<int64_t> in_lens = {5, 4, 3};
  for (int64_t blank : {0, 2}) {
    Tensor t = blank == 0 ? targets : ints({{1, 1}, {0, 1}, {1, 2}});
    std::vector<std::vector<int64_t>> w = want;
    if (blank == 2) w = {{1, 1}, {0, 1}, {1}};
    Tensor loss = F::ctc_loss(lp, t, in_lens, {2, 2, 1}, blank, F::kNone);
    ASSERT_EQ(loss.sizes(), Shape({3}));
    for (int64_t n = 0; n < 3; ++n) {
      double p = alignment_sum(lp.select(1, n).cpu(), in_lens[n], w[n], blank);
      EXPECT_NEAR(loss[n].item<double>(), -std::log(p), 1e-12) << "sample " << n;
    }
  }
}

TEST_P(CtcLossTest, LayoutsOverloadsAndPaddingAgree) {
  Tensor lp = log_probs(6, 3, 4);
  Tensor il = ints({6, 5, 4}), tl = ints({3, 2, 1});
  Tensor padded = F::ctc_loss(lp, ints({{1, 2, 2}, {3, 1, 0}, {2, 0, 0}}), il, tl, 0, F::kNone);
  // Labels past each target length are ignored, whatever they are.
  Tensor repadded = F::ctc_loss(lp, ints({{1, 2, 2}, {3, 1, 3}, {2, 3, 1}}), il, tl, 0, F::kNone);
  Tensor concatenated = F::ctc_loss(lp, ints({1, 2, 2, 3, 1, 2}), il, tl, 0, F::kNone);
  Tensor from_vectors =
      F::ctc_loss(lp, ints({1, 2, 2, 3, 1, 2}), {6, 5, 4}, {3, 2, 1}, 0, F::kNone);
  Tensor int32 = F::ctc_loss(lp, ints({1, 2, 2, 3, 1, 2}).to(kInt32), il.to(kInt32), tl.to(kInt32),
                             0, F::kNone);
  for (const Tensor& t : {repadded, concatenated, from_vectors, int32})
    EXPECT_TRUE(tensor_close(t, padded, 0, 0));
  EXPECT_TRUE(tensor_close(F::ctc_loss(lp, ints({1, 2, 2, 3, 1, 2}), il, tl, 0, F::kSum),
                           padded.sum(), 1e-15, 0));
  EXPECT_TRUE(tensor_close(F::ctc_loss(lp, ints({1, 2, 2, 3, 1, 2}), il, tl),
                           (padded / tensor({3.0, 2.0, 1.0}, on(kFloat64))).mean(), 1e-15, 0));
  // One sample unbatched is the batch of one, squeezed.
  Tensor one = F::ctc_loss(lp.select(1, 1), ints({3, 1}), ints(5), ints(2), 0, F::kNone);
  EXPECT_EQ(one.dim(), 0);
  EXPECT_TRUE(tensor_close(one, padded[1], 0, 0));
}

// A -inf log-probability (a class the model rules out) leaves the loss and gradient finite, 0 at
// that entry; PyTorch 1.13 gives NaN there.
TEST_P(CtcLossTest, MinusInfinityLogProbabilitiesGiveFiniteGradients) {
  Tensor lp = log_probs(5, 2, 3).clone();
  {
    NoGradGuard no_grad;
    lp.select(0, 2).select(0, 0).select(0, 2).fill_(-INFINITY);  // class 2, absent from target 0
  }
  lp.requires_grad_(true);
  Tensor loss = F::ctc_loss(lp, ints({{1, 1}, {2, 1}}), {5, 5}, {2, 2}, 0, F::kSum);
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  EXPECT_TRUE(isfinite(lp.grad()).all().item<bool>()) << lp.grad().cpu();
  EXPECT_EQ(lp.grad()[2][0][2].item<double>(), 0.0);
}

TEST_P(CtcLossTest, ZeroInfinityZeroesImpossibleAlignments) {
  // Sample 0's three repeated labels need 5 steps but have 3.
  Tensor targets = ints({{1, 1, 1}, {2, 1, 0}}), il = ints({3, 4}), tl = ints({3, 2});
  Tensor lp = log_probs(4, 2, 3, kFloat64, true);
  Tensor plain = F::ctc_loss(lp, targets, il, tl, 0, F::kNone);
  EXPECT_TRUE(std::isinf(plain[0].item<double>()));
  Tensor zeroed = F::ctc_loss(lp, targets, il, tl, 0, F::kNone, true);
  EXPECT_EQ(zeroed[0].item<double>(), 0.0);
  EXPECT_EQ(zeroed[1].item<double>(), plain[1].item<double>());
  zeroed.sum().backward();
  EXPECT_TRUE(tensor_close(lp.grad().select(1, 0), zeros({4, 3}, on(kFloat64)), 0, 0));
  EXPECT_GT(abs(lp.grad().select(1, 1)).sum().item<double>(), 0.1);
}

TEST_P(CtcLossTest, Float32MatchesFloat64) {
  Tensor targets = ints({{1, 2, 2}, {3, 1, 0}}), il = ints({7, 5}), tl = ints({3, 2});
  Tensor lp64 = log_probs(7, 2, 4, kFloat64, true), lp32 = log_probs(7, 2, 4, kFloat32, true);
  Tensor l64 = F::ctc_loss(lp64, targets, il, tl, 1, F::kSum);
  Tensor l32 = F::ctc_loss(lp32, targets, il, tl, 1, F::kSum);
  EXPECT_EQ(l32.dtype(), kFloat32);
  EXPECT_TRUE(tensor_close(l32, l64, 1e-5, 1e-5));
  l64.backward();
  l32.backward();
  EXPECT_EQ(lp32.grad().dtype(), kFloat32);
  EXPECT_TRUE(tensor_close(lp32.grad(), lp64.grad(), 1e-4, 1e-5));
}

// PyTorch's gradient is the logits' gradient through log_softmax, so a gradcheck goes through it.
TEST_P(CtcLossTest, GradcheckThroughLogSoftmax) {
  Tensor x = (arange(5 * 3 * 4, on(kFloat64)) * 0.61).cos().view({5, 3, 4}).requires_grad_(true);
  Tensor il = ints({5, 4, 5}), tl = ints({2, 3, 0});
  for (F::Reduction r : {F::kNone, F::kSum, F::kMean}) {
    auto f = [&](const std::vector<Tensor>& in) {
      return F::ctc_loss(log_softmax(in[0], 2), ints({{1, 1, 0}, {3, 2, 3}, {0, 0, 0}}), il, tl, 0,
                         r);
    };
    try {
      EXPECT_TRUE(autograd::gradcheck(f, {x}));
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST_P(CtcLossTest, ModuleIsTheFunction) {
  nn::CTCLoss plain;
  EXPECT_EQ(plain->str(), "CTCLoss()");
  nn::CTCLoss loss(2, F::kSum, true);
  EXPECT_EQ(loss->str(), "CTCLoss()");  // PyTorch prints no arguments
  Tensor lp = log_probs(6, 2, 4);
  Tensor targets = ints({{1, 3}, {0, 0}}), il = ints({6, 5}), tl = ints({2, 1});
  EXPECT_TRUE(tensor_close(loss(lp, targets, il, tl),
                           F::ctc_loss(lp, targets, il, tl, 2, F::kSum, true), 0, 0));
  EXPECT_TRUE(tensor_close(plain(lp, targets, il, tl), F::ctc_loss(lp, targets, il, tl), 0, 0));
}

TEST_P(CtcLossTest, BadArgumentsAreErrorsNamingTheShapes) {
  Tensor lp = log_probs(4, 2, 3), targets = ints({{1, 2}, {2, 0}});
  Tensor il = ints({4, 3}), tl = ints({2, 1});
  using Call = std::function<void()>;
  auto fails = [](const Call& f, ErrorKind kind, std::vector<std::string> parts) {
    parts.insert(parts.begin(), "[ctc_loss]");
    return throws_error(f, kind, parts);
  };
  EXPECT_TRUE(fails([&] { (void)F::ctc_loss(lp[0][0], targets, il, tl); }, ErrorKind::Shape,
                    {"log_probs", "[3]"}));
  EXPECT_TRUE(fails(
      [&] {
        (void)F::ctc_loss(lp, targets, ints({4, 3, 2}), tl);
      },
      ErrorKind::Shape, {"input_lengths", "[3]", "(2)"}));
  EXPECT_TRUE(fails([&] { (void)F::ctc_loss(lp, targets, il, ints({2})); }, ErrorKind::Shape,
                    {"target_lengths", "[1]", "(2)"}));
  EXPECT_TRUE(fails(
      [&] {
        (void)F::ctc_loss(lp, targets, ints({5, 3}), tl);
      },
      ErrorKind::Value, {"input_lengths[0] = 5", "[4, 2, 3]"}));
  EXPECT_TRUE(fails(
      [&] {
        (void)F::ctc_loss(lp, targets, il, ints({3, 1}));
      },
      ErrorKind::Value, {"target_lengths[0] = 3", "[2, 2]"}));
  EXPECT_TRUE(fails(
      [&] {
        (void)F::ctc_loss(lp, ints({1, 2, 2, 0}), il, tl);
      },
      ErrorKind::Shape, {"concatenated", "[4]", "3"}));
  EXPECT_TRUE(fails([&] { (void)F::ctc_loss(lp, targets, il, tl, 3); }, ErrorKind::Value,
                    {"blank 3", "[4, 2, 3]"}));
  EXPECT_TRUE(
      fails([&] { (void)F::ctc_loss(lp, targets, il, tl, -1); }, ErrorKind::Value, {"blank -1"}));
  EXPECT_TRUE(fails(
      [&] {
        (void)F::ctc_loss(lp, ints({{1, 5}, {2, 0}}), il, tl);
      },
      ErrorKind::Index, {"target 5", "[4, 2, 3]"}));
  EXPECT_TRUE(fails([&] { (void)F::ctc_loss(lp, targets.to(kFloat64), il, tl); }, ErrorKind::DType,
                    {"targets", "float64"}));
  EXPECT_TRUE(fails([&] { (void)F::ctc_loss(lp, ints({{{1}}}), il, tl); }, ErrorKind::Shape,
                    {"targets", "[1, 1, 1]"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(CtcLossTest);

}  // namespace
}  // namespace ember
