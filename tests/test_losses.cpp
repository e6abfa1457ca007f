// tests/test_losses.cpp: the losses of nn/functional.h and nn/losses.h -- mse_loss, l1_loss,
// cross_entropy (class indices and probabilities, weights, ignore_index, label smoothing, (N, C, d)
// inputs), nll_loss, binary_cross_entropy and binary_cross_entropy_with_logits -- as functions and
// as modules, against values computed from PyTorch's documented formulas, with gradchecks.
//
// Unless a comment says "by hand", the expected numbers were printed by
// tests/reference/nn_reference.py, which implements the formulas of the torch.nn loss docs in
// numpy float64 (independently of ember).
#include <cmath>
#include <functional>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

class LossTest : public testing::DeviceTest {
 protected:
  Tensor f64(const NestedValues& v, bool requires_grad = false) const {
    return tensor(v, {.dtype = kFloat64, .device = device(), .requires_grad = requires_grad});
  }
  Tensor f32(const NestedValues& v) const { return tensor(v, on(kFloat32)); }
  Tensor idx(const NestedValues& v) const { return tensor(v, on(kInt64)); }

  // The (N=4, C=3) logits, targets and class weights of nn_reference.py.
  Tensor logits(bool requires_grad = false) const {
    return f64({{1.0, 2.0, 0.5}, {0.1, -1.0, 3.0}, {2.0, 2.0, -2.0}, {0.0, 0.5, 1.0}},
               requires_grad);
  }
  Tensor targets() const { return idx({0, 2, 1, 2}); }
  Tensor class_weights() const { return f64({0.2, 1.0, 3.0}); }
  // (N=2, C=3, d=2) logits and (N=2, d=2) targets.
  Tensor logits3(bool requires_grad = false) const {
    return f64({{{1.0, -1.0}, {0.5, 2.0}, {0.0, 0.3}}, {{-0.5, 1.5}, {2.5, 0.0}, {1.0, -2.0}}},
               requires_grad);
  }
  Tensor targets3() const { return idx({{2, 1}, {0, 0}}); }
  Tensor probs() const {
    return f64({{0.7, 0.2, 0.1}, {0.0, 0.0, 1.0}, {0.25, 0.5, 0.25}, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
  }

  // Tight comparison for float64 results.
  static ::testing::AssertionResult close64(const Tensor& actual, const Tensor& expected) {
    return tensor_close(actual, expected, 1e-10, 1e-12);
  }
  ::testing::AssertionResult close64(const Tensor& actual, double expected) const {
    if (actual.dim() != 0) return ::testing::AssertionFailure() << "not a 0-dim result";
    return tensor_close(actual, scalar_tensor(expected, {.dtype = kFloat64}), 1e-10, 1e-12);
  }

  ::testing::AssertionResult grad_ok(const Fn& f, const std::vector<Tensor>& inputs) const {
    try {
      if (!autograd::gradcheck(f, inputs))
        return ::testing::AssertionFailure() << "gradcheck returned false";
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << e.what();
    }
    return ::testing::AssertionSuccess();
  }
};

// --- mse_loss and l1_loss

TEST_P(LossTest, MseAndL1ByHand) {
  // By hand: differences (-0.5, 1, 0, -2); squares sum to 5.25, absolutes to 3.5.
  Tensor x = f32({{1.0, 2.0}, {3.0, 4.0}}), y = f32({{1.5, 1.0}, {3.0, 6.0}});
  EXPECT_TRUE(tensor_close(F::mse_loss(x, y), f32(1.3125)));
  EXPECT_TRUE(tensor_close(F::mse_loss(x, y, F::kSum), f32(5.25)));
  EXPECT_TRUE(tensor_close(F::mse_loss(x, y, F::kNone), f32({{0.25, 1.0}, {0.0, 4.0}})));
  EXPECT_TRUE(tensor_close(F::l1_loss(x, y), f32(0.875)));
  EXPECT_TRUE(tensor_close(F::l1_loss(x, y, F::kSum), f32(3.5)));
  EXPECT_TRUE(tensor_close(F::l1_loss(x, y, F::kNone), f32({{0.5, 1.0}, {0.0, 2.0}})));
  Tensor r = F::mse_loss(x, y);
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(r.device(), x.device());

  nn::MSELoss mse;
  nn::MSELoss mse_sum(F::kSum);
  nn::L1Loss l1;
  nn::L1Loss l1_none(F::kNone);
  EXPECT_TRUE(tensor_close(mse(x, y), f32(1.3125)));
  EXPECT_TRUE(tensor_close(mse_sum(x, y), f32(5.25)));
  EXPECT_TRUE(tensor_close(l1(x, y), f32(0.875)));
  EXPECT_TRUE(tensor_close(l1_none(x, y), f32({{0.5, 1.0}, {0.0, 2.0}})));
  EXPECT_EQ(mse->str(), "MSELoss()");
  EXPECT_EQ(l1->str(), "L1Loss()");
}

TEST_P(LossTest, MseAndL1GradientsByHand) {
  // By hand: d/dx mean((x - y)^2) = 2 (x - y) / n; d/dx mean|x - y| = sign(x - y) / n.
  Tensor x = f64({1.0, 2.0, 3.0, 4.0}, true), y = f64({1.5, 1.0, 3.5, 6.0});
  F::mse_loss(x, y).backward();
  EXPECT_TRUE(close64(x.grad(), f64({-0.25, 0.5, -0.25, -1.0})));
  x.mutable_grad() = Tensor();
  F::l1_loss(x, y, F::kSum).backward();
  EXPECT_TRUE(close64(x.grad(), f64({-1.0, 1.0, -1.0, -1.0})));
}

TEST_P(LossTest, MseAndL1Gradcheck) {
  Tensor x = f64({{0.3, -1.2, 2.0}, {0.7, 0.1, -0.4}}, true);
  Tensor y = f64({{1.0, 0.5, -1.0}, {0.2, 0.9, 0.0}}, true);
  for (F::Reduction r : {F::kMean, F::kSum, F::kNone}) {
    EXPECT_TRUE(grad_ok([r](const std::vector<Tensor>& in) { return F::mse_loss(in[0], in[1], r); },
                        {x, y}));
    EXPECT_TRUE(grad_ok([r](const std::vector<Tensor>& in) { return F::l1_loss(in[0], in[1], r); },
                        {x, y}));
  }
}

TEST_P(LossTest, MseIsOneNodeWhoseTargetGradientIsTheNegative) {
  Tensor x = f64({{0.3, -1.2}, {0.7, 0.1}}, true), y = f64({{1.0, 0.5}, {0.2, 0.9}}, true);
  Tensor loss = F::mse_loss(x, y, F::kSum);
  ASSERT_NE(loss.grad_fn(), nullptr);
  EXPECT_EQ(loss.grad_fn()->name(), "MseLossBackward0");
  loss.backward();
  // By hand: d/dx sum((x - y)^2) = 2 (x - y) = [[-1.4, -3.4], [1.0, -1.6]]; d/dy is its negative.
  EXPECT_TRUE(close64(x.grad(), f64({{-1.4, -3.4}, {1.0, -1.6}})));
  EXPECT_TRUE(close64(y.grad(), f64({{1.4, 3.4}, {-1.0, 1.6}})));
  // The node keeps input - target, so changing the input in place after the forward does not
  // change the gradient of that forward: d/dx2 mean((x2 - 0)^2) = x2 = [1, 2].
  Tensor x2 = f64({1.0, 2.0}, true), y2 = f64({0.0, 0.0});
  Tensor h = x2 * 1.0;
  Tensor l2 = F::mse_loss(h, y2);
  h.mul_(0.0);
  l2.backward();
  EXPECT_TRUE(close64(x2.grad(), f64({1.0, 2.0})));
}

TEST_P(LossTest, MseBroadcastsAsPyTorch) {
  // By hand: x - y broadcast to (2, 2): [[0, 1], [2, 3]] - [1, 1] -> [[-1, 0], [1, 2]].
  Tensor x = f32({{0.0, 1.0}, {2.0, 3.0}}), y = f32({1.0, 1.0});
  EXPECT_TRUE(tensor_close(F::mse_loss(x, y, F::kSum), f32(6.0)));
}

// --- cross_entropy with class indices

TEST_P(LossTest, CrossEntropyReductions) {
  Tensor x = logits(), t = targets();
  EXPECT_TRUE(close64(
      F::cross_entropy(x, t, {.reduction = F::kNone}),
      f64({1.464368784107945, 0.07077421896049133, 0.7022633214390952, 0.6802696706417346})));
  EXPECT_TRUE(close64(F::cross_entropy(x, t), 0.7294189987873165));
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.reduction = F::kSum}), 2.917675995149266));
  // float32 logits give the same to float32 precision.
  EXPECT_TRUE(tensor_close(F::cross_entropy(x.to(kFloat32), t), f32(0.7294189987873165)));
  EXPECT_EQ(F::cross_entropy(x.to(kFloat32), t).dtype(), kFloat32);
}

TEST_P(LossTest, CrossEntropyWithClassWeights) {
  Tensor x = logits(), t = targets(), w = class_weights();
  EXPECT_TRUE(close64(
      F::cross_entropy(x, t, {.reduction = F::kNone, .weight = w}),
      f64({0.292873756821589, 0.21232265688147398, 0.7022633214390952, 2.040809011925204})));
  // mean divides by the sum of the targets' weights (5.2), not by N.
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.weight = w}), 0.45114843709268915));
  EXPECT_TRUE(
      close64(F::cross_entropy(x, t, {.reduction = F::kSum, .weight = w}), 3.248268747067362));
}

TEST_P(LossTest, CrossEntropyIgnoreIndex) {
  Tensor x = logits(), t = targets(), w = class_weights();
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.reduction = F::kNone, .ignore_index = 1}),
                      f64({1.464368784107945, 0.07077421896049133, 0.0, 0.6802696706417346})));
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.ignore_index = 1}), 0.7384708912367236));
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.reduction = F::kSum, .ignore_index = 1}),
                      2.215412673710171));
  EXPECT_TRUE(
      close64(F::cross_entropy(x, t, {.ignore_index = 1, .weight = w}), 0.4106460363916559));
  EXPECT_TRUE(
      close64(F::cross_entropy(x, t, {.reduction = F::kSum, .ignore_index = 1, .weight = w}),
              2.546005425628267));
  // The default ignore_index is -100: such targets are skipped, not out of bounds.
  Tensor t2 = idx({0, 2, -100, 2});
  EXPECT_TRUE(close64(F::cross_entropy(x, t2), 0.7384708912367236));
  // The ignored element gets no gradient.
  Tensor xg = logits(true);
  F::cross_entropy(xg, t2).backward();
  EXPECT_TRUE(tensor_equal(xg.grad()[2], f64({0.0, 0.0, 0.0})));
  // Every target ignored: mean is 0 / 0, NaN as in PyTorch.
  EXPECT_TRUE(std::isnan(F::cross_entropy(x, idx({-100, -100, -100, -100})).item<double>()));
}

TEST_P(LossTest, CrossEntropyLabelSmoothing) {
  Tensor x = logits(), t = targets(), w = class_weights();
  EXPECT_TRUE(close64(
      F::cross_entropy(x, t, {.reduction = F::kNone, .label_smoothing = 0.1}),
      f64({1.447702117441278, 0.30077421896049134, 0.8355966547724285, 0.7302696706417346})));
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.label_smoothing = 0.1}), 0.8285856654539832));
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.reduction = F::kSum, .label_smoothing = 0.1}),
                      3.3143426618159326));
  // With class weights.
  EXPECT_TRUE(close64(
      F::cross_entropy(x, t, {.reduction = F::kNone, .label_smoothing = 0.1, .weight = w}),
      f64({0.48526467758120906, 0.353665448514462, 1.1303538542966591, 1.9552991979558596})));
  EXPECT_TRUE(
      close64(F::cross_entropy(x, t, {.label_smoothing = 0.1, .weight = w}), 0.5450809969928041));
  EXPECT_TRUE(
      close64(F::cross_entropy(x, t, {.reduction = F::kSum, .label_smoothing = 0.1, .weight = w}),
              3.9245831783481897));
  // With weights and an ignored class.
  F::CrossEntropyOptions o{.ignore_index = 1, .label_smoothing = 0.2, .weight = w};
  EXPECT_TRUE(close64(F::cross_entropy(x, t, o), 0.49071826168948307));
  o.reduction = F::kSum;
  EXPECT_TRUE(close64(F::cross_entropy(x, t, o), 3.042453222474795));
  o.reduction = F::kNone;
  EXPECT_TRUE(close64(F::cross_entropy(x, t, o),
                      f64({0.6776555983408291, 0.4950082401474501, 0.0, 1.8697893839865156})));
  // Out of range smoothing is an error.
  EXPECT_TRUE(throws_error([&] { F::cross_entropy(x, t, {.label_smoothing = 1.5}); },
                           ErrorKind::Value, {"label_smoothing"}));
}

TEST_P(LossTest, CrossEntropyHigherDimensionalInputs) {
  Tensor x = logits3(), t = targets3(), w = class_weights();
  EXPECT_TRUE(close64(
      F::cross_entropy(x, t, {.reduction = F::kNone}),
      f64({{1.6802696706417346, 0.20902076654506024}, {3.241311296657157, 0.2258020492315995}})));
  EXPECT_TRUE(close64(F::cross_entropy(x, t), 1.3391009457688878));
  EXPECT_TRUE(close64(F::cross_entropy(x, t, {.reduction = F::kSum}), 5.356403783075551));
  F::CrossEntropyOptions o{.label_smoothing = 0.1, .weight = w};
  EXPECT_TRUE(close64(F::cross_entropy(x, t, o), 1.4580659998137402));
  o.reduction = F::kSum;
  EXPECT_TRUE(close64(F::cross_entropy(x, t, o), 6.415490399180457));
  o.reduction = F::kNone;
  EXPECT_TRUE(close64(F::cross_entropy(x, t, o), f64({{4.748632531289193, 0.4073815972068626},
                                                      {0.7872196149302904, 0.47225665575411185}})));
  // An unbatched (C) input with a 0-dim target.
  EXPECT_TRUE(close64(F::cross_entropy(f64({0.1, -1.0, 3.0}), idx(2)), 0.07077421896049133));
  // Wrong target shape.
  EXPECT_TRUE(throws_error(
      [&] {
        F::cross_entropy(x, idx({0, 1}));
      },
      ErrorKind::Shape, {"Expected target size"}));
}

TEST_P(LossTest, CrossEntropyProbabilityTargets) {
  Tensor x = logits(), p = probs(), w = class_weights();
  EXPECT_TRUE(close64(
      F::cross_entropy(x, p, {.reduction = F::kNone}),
      f64({1.3143687841079448, 0.07077421896049133, 1.7022633214390952, 1.1802696706417346})));
  EXPECT_TRUE(close64(F::cross_entropy(x, p), 1.0669189987873167));
  EXPECT_TRUE(close64(F::cross_entropy(x, p, {.reduction = F::kSum}), 4.267675995149267));
  F::CrossEntropyOptions o{.label_smoothing = 0.1, .weight = w};
  EXPECT_TRUE(close64(F::cross_entropy(x, p, o), 1.6448739969798485));
  o.reduction = F::kSum;
  EXPECT_TRUE(close64(F::cross_entropy(x, p, o), 6.579495987919394));
  o.reduction = F::kNone;
  EXPECT_TRUE(close64(F::cross_entropy(x, p, o), f64({1.0201547160879554, 0.353665448514462,
                                                      4.019964951085215, 1.1857108722317617})));
  // One-hot probabilities give the same loss as the class indices (by hand: the same formula).
  Tensor one_hot_t = one_hot(targets(), 3).to(kFloat64);
  EXPECT_TRUE(close64(F::cross_entropy(x, one_hot_t), 0.7294189987873165));
  EXPECT_TRUE(throws_error([&] { F::cross_entropy(x, f64({{1.0, 0.0}})); }, ErrorKind::Shape, {}));
}

TEST_P(LossTest, CrossEntropyIsStableForHugeLogits) {
  // By hand: logits (1000, 0, -1000) with target 0 give -log(1 / (1 + e^-1000 + e^-2000)) = 0;
  // target 1 gives 1000.
  Tensor x = f32({{1000.0, 0.0, -1000.0}, {1000.0, 0.0, -1000.0}});
  Tensor l = F::cross_entropy(x, idx({0, 1}), {.reduction = F::kNone});
  EXPECT_TRUE(tensor_close(l, f32({0.0, 1000.0})));
}

TEST_P(LossTest, CrossEntropyErrors) {
  Tensor x = logits();
  EXPECT_TRUE(throws_error(
      [&] {
        F::cross_entropy(x, idx({0, 3, 1, 2}));
      },
      ErrorKind::Index, {"out of bounds"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::cross_entropy(x, idx({0, -1, 1, 2}));
      },
      ErrorKind::Index, {"out of bounds"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::cross_entropy(x, targets(), {.weight = f64({1.0, 2.0})});
      },
      ErrorKind::Shape, {"weight"}));
}

TEST_P(LossTest, CrossEntropyModule) {
  nn::CrossEntropyLoss plain;
  EXPECT_TRUE(close64(plain(logits(), targets()), 0.7294189987873165));
  nn::CrossEntropyLoss weighted(
      F::CrossEntropyOptions{.label_smoothing = 0.1, .weight = class_weights()});
  EXPECT_TRUE(close64(weighted(logits(), targets()), 0.5450809969928041));
  nn::CrossEntropyLoss ignoring(F::CrossEntropyOptions{.reduction = F::kSum, .ignore_index = 1});
  EXPECT_TRUE(close64(ignoring(logits(), targets()), 2.215412673710171));
  EXPECT_EQ(plain->str(), "CrossEntropyLoss()");
}

TEST_P(LossTest, CrossEntropyGradientByHand) {
  // By hand: d/dx mean_n CE = (softmax(x) - onehot(t)) / N.
  Tensor x = logits(true), t = targets();
  F::cross_entropy(x, t).backward();
  Tensor expected = (softmax(logits(), 1) - one_hot(t, 3).to(kFloat64)) / 4.0;
  EXPECT_TRUE(close64(x.grad(), expected));
}

TEST_P(LossTest, CrossEntropyGradcheck) {
  Tensor x = logits(true), t = targets(), w = class_weights();
  std::vector<F::CrossEntropyOptions> options = {
      {},
      {.reduction = F::kSum},
      {.reduction = F::kNone},
      {.weight = w},
      {.ignore_index = 1},
      {.label_smoothing = 0.1},
      {.ignore_index = 1, .label_smoothing = 0.2, .weight = w},
      {.reduction = F::kNone, .label_smoothing = 0.3, .weight = w},
  };
  for (const auto& o : options) {
    EXPECT_TRUE(
        grad_ok([&](const std::vector<Tensor>& in) { return F::cross_entropy(in[0], t, o); }, {x}));
    EXPECT_TRUE(grad_ok(
        [&](const std::vector<Tensor>& in) { return F::cross_entropy(in[0], probs(), o); }, {x}));
  }
  Tensor x3 = logits3(true);
  EXPECT_TRUE(grad_ok(
      [&](const std::vector<Tensor>& in) {
        return F::cross_entropy(in[0], targets3(), {.label_smoothing = 0.1, .weight = w});
      },
      {x3}));
}

// --- nll_loss

TEST_P(LossTest, NllLossOnLogProbabilities) {
  Tensor lp = log_softmax(logits(), 1), t = targets(), w = class_weights();
  EXPECT_TRUE(close64(lp, f64({{-1.464368784107945, -0.4643687841079449, -1.964368784107945},
                               {-2.970774218960491, -4.070774218960492, -0.07077421896049133},
                               {-0.7022633214390952, -0.7022633214390952, -4.702263321439095},
                               {-1.6802696706417346, -1.1802696706417346, -0.6802696706417346}})));
  // The same numbers as cross_entropy on the logits, by the definition CE = NLL(log_softmax).
  EXPECT_TRUE(close64(F::nll_loss(lp, t), 0.7294189987873165));
  EXPECT_TRUE(close64(F::nll_loss(lp, t, {.reduction = F::kSum}), 2.917675995149266));
  EXPECT_TRUE(close64(F::nll_loss(lp, t, {.weight = w}), 0.45114843709268915));
  EXPECT_TRUE(close64(F::nll_loss(lp, t, {.ignore_index = 1, .weight = w}), 0.4106460363916559));
  EXPECT_TRUE(close64(F::nll_loss(lp, t, {.reduction = F::kNone, .ignore_index = 1}),
                      f64({1.464368784107945, 0.07077421896049133, 0.0, 0.6802696706417346})));
  // By hand: nll picks -input[n, t[n]] of any input, log-probabilities or not.
  EXPECT_TRUE(
      tensor_close(F::nll_loss(f32({{1.0, 2.0}, {3.0, 4.0}}), idx({1, 0}), {.reduction = F::kNone}),
                   f32({-2.0, -3.0})));
  Tensor lp3 = log_softmax(logits3(), 1);
  EXPECT_TRUE(close64(F::nll_loss(lp3, targets3()), 1.3391009457688878));

  nn::NLLLoss module(F::NllLossOptions{.weight = w});
  EXPECT_TRUE(close64(module(lp, t), 0.45114843709268915));
  EXPECT_EQ(module->str(), "NLLLoss()");

  EXPECT_TRUE(throws_error([&] { F::nll_loss(lp, t.to(kInt32)); }, ErrorKind::DType, {"int64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::nll_loss(lp, idx({0, 1, 2, 5}));
      },
      ErrorKind::Index, {"out of bounds"}));
}

TEST_P(LossTest, NllLossGradcheck) {
  Tensor lp = log_softmax(logits(), 1).detach().requires_grad_();
  Tensor t = targets(), w = class_weights();
  for (const F::NllLossOptions& o : {F::NllLossOptions{}, F::NllLossOptions{.reduction = F::kSum},
                                     F::NllLossOptions{.reduction = F::kNone, .weight = w},
                                     F::NllLossOptions{.ignore_index = 2, .weight = w}}) {
    EXPECT_TRUE(
        grad_ok([&](const std::vector<Tensor>& in) { return F::nll_loss(in[0], t, o); }, {lp}));
  }
}

// --- binary_cross_entropy

TEST_P(LossTest, BinaryCrossEntropyClampsLogsAtMinus100) {
  // Inputs exactly 0 and 1: log(0) = -inf is clamped to -100, so a wrong certain prediction costs
  // 100 and a right one 0.
  Tensor x = f64({0.9, 0.2, 0.0, 1.0, 0.0, 1.0}), y = f64({1.0, 0.0, 0.0, 1.0, 1.0, 0.0});
  Tensor w = f64({1.0, 2.0, 1.0, 1.0, 0.5, 0.25});
  EXPECT_TRUE(close64(F::binary_cross_entropy(x, y, F::kNone),
                      f64({0.10536051565782628, 0.2231435513142097, 0.0, 0.0, 100.0, 100.0})));
  EXPECT_TRUE(close64(F::binary_cross_entropy(x, y), 33.388084011162));
  EXPECT_TRUE(close64(F::binary_cross_entropy(x, y, F::kSum), 200.32850406697202));
  EXPECT_TRUE(close64(F::binary_cross_entropy(x, y, F::kNone, w),
                      f64({0.10536051565782628, 0.4462871026284194, 0.0, 0.0, 50.0, 25.0})));
  EXPECT_TRUE(close64(F::binary_cross_entropy(x, y, F::kMean, w), 12.591941269714374));
  // float32 too.
  EXPECT_TRUE(
      tensor_close(F::binary_cross_entropy(x.to(kFloat32), y.to(kFloat32)), f32(33.388084011162)));

  nn::BCELoss module;
  EXPECT_TRUE(close64(module(x, y), 33.388084011162));
  nn::BCELoss module_sum(F::kSum);
  EXPECT_TRUE(close64(module_sum(x, y), 200.32850406697202));
  EXPECT_EQ(module->str(), "BCELoss()");

  EXPECT_TRUE(throws_error([&] { F::binary_cross_entropy(f64({1.5}), f64({1.0})); },
                           ErrorKind::Value, {"between 0 and 1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::binary_cross_entropy(f64({0.5, 0.5}), f64({1.0}));
      },
      ErrorKind::Shape, {"target size"}));
}

TEST_P(LossTest, BinaryCrossEntropyGradientIsFiniteAtZeroAndOne) {
  // PyTorch's binary_cross_entropy_backward: grad * (x - y) / max(x (1 - x), 1e-12) (by hand
  // below, with the 1/N of the mean). A saturated sigmoid gives exactly 0 or 1 in float32, so
  // this must not be NaN.
  Tensor x = f64({0.0, 1.0, 0.0, 1.0, 0.25}, true), y = f64({0.0, 1.0, 1.0, 0.0, 1.0});
  F::binary_cross_entropy(x, y).backward();
  EXPECT_TRUE(tensor_close(
      x.grad(), f64({0.0, 0.0, -1e12 / 5, 1e12 / 5, (0.25 - 1) / (0.25 * 0.75) / 5}), 1e-10));
}

TEST_P(LossTest, BinaryCrossEntropyGradcheck) {
  Tensor x = f64({{0.1, 0.5, 0.93}, {0.3, 0.7, 0.02}}, true);
  Tensor y = f64({{0.0, 1.0, 1.0}, {0.4, 0.0, 1.0}}, true);
  Tensor w = f64({0.5, 2.0, 1.0});
  for (F::Reduction r : {F::kMean, F::kSum, F::kNone}) {
    EXPECT_TRUE(grad_ok(
        [&](const std::vector<Tensor>& in) { return F::binary_cross_entropy(in[0], in[1], r); },
        {x, y}));
    EXPECT_TRUE(grad_ok(
        [&](const std::vector<Tensor>& in) {
          return F::binary_cross_entropy(in[0], in[1], r, w.expand({2, 3}));
        },
        {x, y}));
  }
}

// --- binary_cross_entropy_with_logits

TEST_P(LossTest, BinaryCrossEntropyWithLogitsIsStable) {
  // Logits of +-100 with the wrong label cost exactly 100; no inf or NaN.
  Tensor x = f64({100.0, -100.0, 0.5, -2.0, 3.0, 0.0}), y = f64({0.0, 1.0, 1.0, 0.0, 0.3, 1.0});
  EXPECT_TRUE(close64(F::binary_cross_entropy_with_logits(x, y, F::kNone),
                      f64({100.0, 100.0, 0.4740769841801067, 0.1269280110429725, 2.148587351573742,
                           0.6931471805599453})));
  EXPECT_TRUE(close64(F::binary_cross_entropy_with_logits(x, y), 33.90712325455946));
  Tensor l32 = F::binary_cross_entropy_with_logits(x.to(kFloat32), y.to(kFloat32), F::kNone);
  EXPECT_TRUE(tensor_close(l32, f32({100.0, 100.0, 0.4740769841801067, 0.1269280110429725,
                                     2.148587351573742, 0.6931471805599453})));
  // Right labels at +-100 cost ~0 (log(1 + e^-100)), gradients stay finite.
  Tensor xg = f32({100.0, -100.0}).requires_grad_();
  Tensor l = F::binary_cross_entropy_with_logits(xg, f32({1.0, 0.0}), F::kSum);
  EXPECT_TRUE(tensor_close(l, f32(0.0)));
  l.backward();
  // By hand: d/dx = sigmoid(x) - y = (1 - 1, 0 - 0) up to e^-100.
  EXPECT_TRUE(tensor_close(xg.grad(), f32({0.0, 0.0})));
}

TEST_P(LossTest, BinaryCrossEntropyWithLogitsPosWeight) {
  Tensor x = f64({{0.5, -1.0, 2.0}, {-0.3, 0.8, -2.5}}),
         y = f64({{1.0, 0.0, 1.0}, {0.0, 1.0, 0.5}});
  Tensor pw = f64({2.0, 0.5, 3.0});
  Tensor expected = f64({{0.9481539683602134, 0.31326168751822286, 0.3807840331289175},
                         {0.5543552444685271, 0.18555033297388884, 3.9077794685850993}});
  EXPECT_TRUE(close64(F::binary_cross_entropy_with_logits(x, y, F::kNone, Tensor(), pw), expected));
  EXPECT_TRUE(
      close64(F::binary_cross_entropy_with_logits(x, y, F::kSum, Tensor(), pw), 6.289884735034869));
  nn::BCEWithLogitsLoss module(F::kSum, pw);
  EXPECT_TRUE(close64(module(x, y), 6.289884735034869));
  EXPECT_EQ(module->str(), "BCEWithLogitsLoss()");
  // pos_weight 2 at +-100 with label 1: 2 log(1 + e^-100) ~ 7.44e-44, and 2 * 100.
  EXPECT_TRUE(close64(F::binary_cross_entropy_with_logits(f64({100.0, -100.0}), f64({1.0, 1.0}),
                                                          F::kNone, Tensor(), f64(2.0)),
                      f64({7.440151952041672e-44, 200.0})));
  // Matches binary_cross_entropy on sigmoid(x) where that is accurate (by hand: the definition).
  EXPECT_TRUE(
      close64(F::binary_cross_entropy_with_logits(x, y), F::binary_cross_entropy(sigmoid(x), y)));
}

TEST_P(LossTest, BinaryCrossEntropyWithLogitsGradcheck) {
  Tensor x = f64({{0.5, -1.0, 2.0}, {-0.3, 0.8, -2.5}}, true);
  Tensor y = f64({{1.0, 0.0, 1.0}, {0.0, 1.0, 0.5}}, true);
  Tensor pw = f64({2.0, 0.5, 3.0}), w = f64({{1.0, 0.5, 2.0}, {0.1, 1.0, 1.0}});
  for (F::Reduction r : {F::kMean, F::kSum, F::kNone}) {
    EXPECT_TRUE(grad_ok(
        [&](const std::vector<Tensor>& in) {
          return F::binary_cross_entropy_with_logits(in[0], in[1], r);
        },
        {x, y}));
    EXPECT_TRUE(grad_ok(
        [&](const std::vector<Tensor>& in) {
          return F::binary_cross_entropy_with_logits(in[0], in[1], r, w, pw);
        },
        {x, y}));
  }
}

TEST_P(LossTest, LossesTrainAModelParameter) {
  // A loss module drives a parameter to the target: mean((p - 3)^2) with plain gradient steps.
  Tensor p = zeros({4}, on(kFloat64)).requires_grad_();
  nn::MSELoss loss_fn;
  Tensor target = full({4}, 3.0, on(kFloat64));
  for (int i = 0; i < 50; ++i) {
    Tensor loss = loss_fn(p, target);
    p.mutable_grad() = Tensor();
    loss.backward();
    NoGradGuard no_grad;
    p.sub_(p.grad() * 1.0);  // lr 1: p -= 2 (p - 3) / 4
  }
  EXPECT_TRUE(tensor_close(p, full({4}, 3.0, on(kFloat64)), 1e-9, 1e-9));
}

EMBER_INSTANTIATE_DEVICE_TESTS(LossTest);

}  // namespace
}  // namespace ember
