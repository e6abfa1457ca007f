// tests/test_autograd.cpp: the autograd interface and engine on small cases with exact answers --
// backward and its errors, gradient accumulation, retain_graph, detach, leaves and grad_fn
// names, grad mode guards, autograd::grad, retain_grad, in-place ops and their version checks,
// type promotion and device moves in the graph, and a small gradient-descent fit.
#include <cmath>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

class AutogradTest : public testing::DeviceTest {
 protected:
  // A leaf requiring grad on this test's device (float32 unless dtype says otherwise).
  Tensor leaf(const NestedValues& values, DType dtype = kFloat32) const {
    return tensor(values, {.dtype = dtype, .device = device(), .requires_grad = true});
  }
  // A constant (no grad) on this test's device.
  Tensor value(const NestedValues& values, DType dtype = kFloat32) const {
    return tensor(values, {.dtype = dtype, .device = device()});
  }
};

// --- exact gradients

TEST_P(AutogradTest, SumOfSquaresGivesTwiceX) {
  Tensor x = leaf({1.0, -2.0, 3.0});
  Tensor y = (x * x).sum();
  EXPECT_TRUE(y.requires_grad());
  y.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(tensor_equal(x.grad(), value({2.0, -4.0, 6.0})));
  EXPECT_EQ(x.grad().device(), x.device());
  EXPECT_FALSE(x.grad().requires_grad());
}

TEST_P(AutogradTest, ExactGradientsOfSmallExpressions) {
  Tensor x = leaf({1.0, -2.0}), w = leaf({3.0, 4.0});
  (x * w).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({3.0, 4.0})));
  EXPECT_TRUE(tensor_equal(w.grad(), value({1.0, -2.0})));

  Tensor a = leaf({0.5, 1.0, -1.0});
  ((2 * a + 1).pow(2)).sum().backward();  // d/da (2a+1)^2 = 4(2a+1)
  EXPECT_TRUE(tensor_close(a.grad(), value({8.0, 12.0, -4.0})));

  Tensor m = leaf({1.0, 2.0, 3.0, 4.0});
  m.mean().backward();
  EXPECT_TRUE(tensor_equal(m.grad(), value({0.25, 0.25, 0.25, 0.25})));

  // (A @ B).sum(): dA = ones @ B^T (row sums of B in every row), dB = A^T @ ones.
  Tensor A = leaf({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}),
         B = leaf({{1.0, -1.0, 2.0}, {0.5, 0.0, 1.0}});
  matmul(A, B).sum().backward();
  EXPECT_TRUE(tensor_close(A.grad(), value({{2.0, 1.5}, {2.0, 1.5}, {2.0, 1.5}})));
  EXPECT_TRUE(tensor_close(B.grad(), value({{9.0, 9.0, 9.0}, {12.0, 12.0, 12.0}})));

  // A shared subexpression: z = y*y + y with y = 2x gives dz/dx = (2y + 1) * 2.
  Tensor s = leaf({1.0, -0.5});
  Tensor y = s * 2;
  (y * y + y).sum().backward();
  EXPECT_TRUE(tensor_close(s.grad(), value({10.0, -2.0})));
}

TEST_P(AutogradTest, ExactGradientsOfActivationsAndReductions) {
  Tensor x = leaf({-1.0, 0.0, 0.5, 2.0});
  (x.relu() * value({5.0, 6.0, 7.0, 8.0})).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({0.0, 0.0, 7.0, 8.0})));  // 0 at 0, as PyTorch
  Tensor m = leaf({{1.0, 5.0}, {7.0, 2.0}});
  std::get<0>(m.max(1)).sum().backward();
  EXPECT_TRUE(tensor_equal(m.grad(), value({{0.0, 1.0}, {1.0, 0.0}})));
  Tensor p = leaf({2.0, 3.0, 4.0});
  p.prod().backward();
  EXPECT_TRUE(tensor_close(p.grad(), value({12.0, 8.0, 6.0})));
  // Ties in max() share the gradient.
  Tensor t = leaf({1.0, 3.0, 3.0});
  t.max().backward();
  EXPECT_TRUE(tensor_close(t.grad(), value({0.0, 0.5, 0.5})));
}

// As PyTorch: ops that are differentiable almost nowhere give a zero gradient, not none.
TEST_P(AutogradTest, SignHasAZeroGradient) {
  Tensor x = leaf({-2.0, 0.0, 3.0});
  Tensor y = sign(x);
  ASSERT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->name(), "SignBackward0");
  y.sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(tensor_equal(x.grad(), value({0.0, 0.0, 0.0})));
}

TEST_P(AutogradTest, GradientsAccumulateAcrossBackwardCalls) {
  Tensor x = leaf({1.0, 2.0});
  (x * x).sum().backward();
  (x * x).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({4.0, 8.0})));
  (x * 3).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({7.0, 11.0})));
  // Zeroing, as an optimizer does, starts afresh.
  x.mutable_grad().zero_();
  x.sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({1.0, 1.0})));
  x.mutable_grad() = Tensor();
  EXPECT_FALSE(x.grad().defined());
  (x * 5).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({5.0, 5.0})));
}

TEST_P(AutogradTest, ImplicitGradientOnlyForScalarOutputs) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x * 2;
  EXPECT_TRUE(throws_error([&] { y.backward(); }, ErrorKind::Value,
                           {"grad can be implicitly created only for scalar outputs", "[3]"}));
  EXPECT_FALSE(x.grad().defined());
  // One element of any shape is fine.
  Tensor one = leaf({{2.0}});
  (one * 3).backward();
  EXPECT_TRUE(tensor_equal(one.grad(), value({{3.0}})));
}

TEST_P(AutogradTest, BackwardWithAnExplicitGradient) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x * x;
  y.backward(value({1.0, 0.5, -1.0}));
  EXPECT_TRUE(tensor_equal(x.grad(), value({2.0, 2.0, -6.0})));
  Tensor z = x * 2;
  EXPECT_TRUE(throws_error(
      [&] {
        z.backward(value({1.0, 2.0}));
      },
      ErrorKind::Shape, {"Mismatch in shape", "[2]", "[3]"}));
  // Several outputs at once: their gradients add up.
  Tensor a = leaf({1.0, 2.0});
  autograd::backward({(a * 2).sum(), a * a}, {value(1.0), value({1.0, 1.0})});
  EXPECT_TRUE(tensor_equal(a.grad(), value({4.0, 6.0})));
}

TEST_P(AutogradTest, BackwardWithoutGraphIsAnError) {
  Tensor c = value({1.0, 2.0});
  EXPECT_TRUE(throws_error([&] { c.sum().backward(); }, ErrorKind::Value,
                           {"does not require grad and does not have a grad_fn"}));
}

TEST_P(AutogradTest, RetainGraphAllowsASecondBackward) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({4.0, 8.0})));
  // The second backward freed the graph.
  EXPECT_TRUE(throws_error([&] { y.backward(); }, ErrorKind::Value,
                           {"backward through the graph a second time", "retain_graph"}));
  Tensor z = (x.exp() * 2).sum();
  z.backward();
  EXPECT_TRUE(throws_error([&] { z.backward(); }, ErrorKind::Value,
                           {"backward through the graph a second time"}));
}

TEST_P(AutogradTest, DetachCutsTheGraphAndSharesStorage) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.storage(), x.storage());
  (x * d).sum().backward();  // d is a constant: the gradient is d, not 2x
  EXPECT_TRUE(tensor_equal(x.grad(), value({1.0, 2.0, 3.0})));
  // Writing through the detached tensor changes x.
  d.mul_(2);
  EXPECT_TRUE(tensor_equal(x.detach(), value({2.0, 4.0, 6.0})));
  // Detaching a computed tensor: no gradient flows through it.
  Tensor y = x * 3;
  Tensor yd = y.detach();
  EXPECT_TRUE(yd.is_leaf());
  EXPECT_EQ(yd.grad_fn(), nullptr);
  EXPECT_FALSE((yd * 2).requires_grad());
  Tensor fresh = y.detach().requires_grad_();
  (fresh * fresh).sum().backward();
  EXPECT_TRUE(tensor_equal(fresh.grad(), value({12.0, 24.0, 36.0})));
  // detach_ in place.
  Tensor z = x * 2;
  z.detach_();
  EXPECT_FALSE(z.requires_grad());
  EXPECT_TRUE(z.is_leaf());
}

TEST_P(AutogradTest, LeavesAndGradFnNames) {
  Tensor x = leaf({1.0, 2.0}), c = value({3.0, 4.0});
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn(), nullptr);
  EXPECT_TRUE(c.is_leaf());
  EXPECT_FALSE(c.requires_grad());
  Tensor y = x * c;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.requires_grad());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  ASSERT_EQ(y.grad_fn()->next_edges().size(), 2u);
  ASSERT_NE(y.grad_fn()->next_edges()[0].fn, nullptr);
  EXPECT_EQ(y.grad_fn()->next_edges()[0].fn->name(), "AccumulateGrad");
  EXPECT_EQ(y.grad_fn()->next_edges()[1].fn, nullptr);  // c needs no gradient
  EXPECT_EQ((x + c).grad_fn()->name(), "AddBackward0");
  EXPECT_EQ((x - c).grad_fn()->name(), "SubBackward0");
  EXPECT_EQ((x / c).grad_fn()->name(), "DivBackward0");
  EXPECT_EQ(x.exp().grad_fn()->name(), "ExpBackward0");
  EXPECT_EQ(x.tanh().grad_fn()->name(), "TanhBackward0");
  EXPECT_EQ(x.view({2, 1}).grad_fn()->name(), "ViewBackward0");
  EXPECT_EQ(x.unsqueeze(0).t().grad_fn()->name(), "TransposeBackward0");
  EXPECT_EQ(x.select(0, 1).grad_fn()->name(), "SelectBackward0");
  EXPECT_EQ(x.sum({0}).grad_fn()->name(), "SumBackward1");
  EXPECT_EQ(x.mean({0}).grad_fn()->name(), "MeanBackward1");
  // Ops on constants only record nothing; nor do non-differentiable results.
  EXPECT_EQ((c * c).grad_fn(), nullptr);
  EXPECT_FALSE((c * c).requires_grad());
  EXPECT_FALSE((x > 1.5).requires_grad());
  EXPECT_FALSE(x.argmax().requires_grad());
  // A computed tensor's flag can't be switched off; a leaf's can.
  EXPECT_TRUE(throws_error([&] { y.requires_grad_(false); }, ErrorKind::Value,
                           {"only change requires_grad flags of leaf variables"}));
  x.requires_grad_(false);
  EXPECT_FALSE(x.requires_grad());
  EXPECT_FALSE((x * 2).requires_grad());
}

TEST_P(AutogradTest, OnlyFloatingPointTensorsCanRequireGrad) {
  Tensor i = value({1, 2, 3}, kInt64);
  EXPECT_TRUE(
      throws_error([&] { i.requires_grad_(); }, ErrorKind::DType,
                   {"only Tensors of floating point dtype can require gradients", "int64"}));
  EXPECT_FALSE(i.requires_grad());
  EXPECT_TRUE(throws_error(
      [&] {
        tensor({true, false}, {.device = device(), .requires_grad = true});
      },
      ErrorKind::DType, {"floating point"}));
  EXPECT_TRUE(throws_error(
      [&] { zeros({2}, {.dtype = kInt32, .device = device(), .requires_grad = true}); },
      ErrorKind::DType, {"floating point"}));
  i.requires_grad_(false);  // switching it off is always fine
  EXPECT_FALSE(i.requires_grad());
  EXPECT_TRUE(
      zeros({2}, {.dtype = kFloat64, .device = device(), .requires_grad = true}).requires_grad());
}

TEST_P(AutogradTest, NoGradGuardRecordsNothing) {
  Tensor x = leaf({1.0, 2.0});
  EXPECT_TRUE(autograd::is_grad_enabled());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(autograd::is_grad_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    EXPECT_TRUE(tensor_equal(y, value({2.0, 4.0})));
    // In place on a leaf is allowed without grad, and it stays a leaf.
    x.add_(1);
    EXPECT_TRUE(x.is_leaf());
    EXPECT_TRUE(x.requires_grad());
    {
      NoGradGuard nested;
      EXPECT_FALSE(autograd::is_grad_enabled());
    }
    EXPECT_FALSE(autograd::is_grad_enabled());
  }
  EXPECT_TRUE(autograd::is_grad_enabled());
  EXPECT_TRUE(tensor_equal(x.detach(), value({2.0, 3.0})));
  Tensor z = x * 2;
  EXPECT_TRUE(z.requires_grad());
  ASSERT_NE(z.grad_fn(), nullptr);
}

TEST_P(AutogradTest, EnableGradGuardRecordsInsideNoGrad) {
  Tensor x = leaf({1.0, 2.0});
  NoGradGuard no_grad;
  EXPECT_FALSE((x * 2).requires_grad());
  Tensor y;
  {
    EnableGradGuard enable;
    EXPECT_TRUE(autograd::is_grad_enabled());
    y = (x * x).sum();
    EXPECT_TRUE(y.requires_grad());
    ASSERT_NE(y.grad_fn(), nullptr);
  }
  EXPECT_FALSE(autograd::is_grad_enabled());
  // backward works inside no_grad: the graph was recorded.
  y.backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({2.0, 4.0})));
}

TEST_P(AutogradTest, GradReturnsGradientsWithoutTouchingDotGrad) {
  Tensor x = leaf({1.0, 2.0}), w = leaf({3.0, -1.0});
  Tensor y = (x * x * w).sum();
  std::vector<Tensor> g = autograd::grad({y}, {x, w});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(tensor_equal(g[0], value({6.0, -4.0})));
  EXPECT_TRUE(tensor_equal(g[1], value({1.0, 4.0})));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  // With respect to an intermediate, and with an explicit output gradient.
  Tensor h = x * 3;
  Tensor out = h * h;
  std::vector<Tensor> gh = autograd::grad({out}, {h}, {value({1.0, 0.5})});
  EXPECT_TRUE(tensor_equal(gh[0], value({6.0, 6.0})));
  EXPECT_FALSE(x.grad().defined());
}

TEST_P(AutogradTest, GradAllowUnused) {
  Tensor x = leaf({1.0, 2.0}), unused = leaf({5.0});
  EXPECT_TRUE(throws_error(
      [&] {
        autograd::grad({(x * 2).sum()}, {x, unused});
      },
      ErrorKind::Value, {"appears to not have been used in the graph", "allow_unused"}));
  std::vector<Tensor> g = autograd::grad({(x * 2).sum()}, {x, unused}, {}, false, true);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(tensor_equal(g[0], value({2.0, 2.0})));
  EXPECT_FALSE(g[1].defined());
  Tensor c = value({1.0});
  EXPECT_TRUE(throws_error([&] { autograd::grad({(x * 2).sum()}, {c}); }, ErrorKind::Value,
                           {"does not require grad"}));
}

TEST_P(AutogradTest, RetainGradKeepsAnIntermediatesGradient) {
  Tensor x = leaf({1.0, -2.0});
  Tensor y = x * 2;
  Tensor other = x + 1;
  y.retain_grad();
  EXPECT_TRUE(y.retains_grad());
  EXPECT_FALSE(other.retains_grad());
  Tensor z = (y * y + other).sum();  // dz/dy = 2y = 4x, dz/dx = 8x + 1
  z.backward();
  ASSERT_TRUE(y.grad().defined());
  EXPECT_TRUE(tensor_equal(y.grad(), value({4.0, -8.0})));
  EXPECT_TRUE(tensor_equal(x.grad(), value({9.0, -15.0})));
  EXPECT_FALSE(other.grad().defined());  // not retained
  // retain_grad on a leaf is a no-op; on a constant it is an error.
  x.retain_grad();
  EXPECT_TRUE(
      throws_error([&] { value({1.0}).retain_grad(); }, ErrorKind::Value, {"requires_grad=false"}));
}

// --- in-place ops

TEST_P(AutogradTest, InPlaceOnALeafRequiringGradIsAnError) {
  Tensor x = leaf({1.0, 2.0});
  const std::string msg =
      "a leaf Variable that requires grad is being used in an in-place operation";
  EXPECT_TRUE(throws_error([&] { x.add_(1); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x.mul_(value({2.0, 2.0})); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x.fill_(0); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x.copy_(value({3.0, 4.0})); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x.clamp_(0, 1); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x += 1.0; }, ErrorKind::Value, {msg}));
  // Nothing changed.
  EXPECT_TRUE(tensor_equal(x.detach(), value({1.0, 2.0})));
  EXPECT_TRUE(x.is_leaf());
}

TEST_P(AutogradTest, InPlaceOnAViewOfALeafIsAnError) {
  Tensor x = leaf({1.0, 2.0, 3.0});
  const std::string msg =
      "a view of a leaf Variable that requires grad is being used in an "
      "in-place operation";
  EXPECT_TRUE(throws_error([&] { x.narrow(0, 0, 2).mul_(2); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x[1].fill_(0); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(throws_error([&] { x.view({3, 1}).t().add_(1); }, ErrorKind::Value, {msg}));
  EXPECT_TRUE(tensor_equal(x.detach(), value({1.0, 2.0, 3.0})));
}

TEST_P(AutogradTest, InPlaceOnANonLeafGivesCorrectGradients) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  y.add_(1);
  y.mul_(3);
  EXPECT_TRUE(tensor_equal(y.detach(), value({9.0, 15.0})));
  EXPECT_FALSE(y.is_leaf());
  y.sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({6.0, 6.0})));

  // An in-place op whose other operand requires grad, on a tensor that did not.
  Tensor w = leaf({0.5, -1.0});
  Tensor acc = zeros({2}, {.device = device()});
  acc.add_(w * w);
  EXPECT_TRUE(acc.requires_grad());
  acc.sum().backward();
  EXPECT_TRUE(tensor_equal(w.grad(), value({1.0, -2.0})));
}

TEST_P(AutogradTest, InPlaceOnAViewOfANonLeaf) {
  Tensor x = leaf({1.0, 2.0, 3.0, 4.0});
  Tensor y = x.clone();
  y.narrow(0, 0, 2).mul_(2);
  EXPECT_TRUE(tensor_equal(y.detach(), value({2.0, 4.0, 3.0, 4.0})));
  EXPECT_TRUE(y.requires_grad());
  (y * value({1.0, 10.0, 100.0, 1000.0})).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({2.0, 20.0, 100.0, 1000.0})));

  // Overwriting a part cuts the gradient there.
  Tensor a = leaf({1.0, 2.0, 3.0});
  Tensor b = a * 1;
  b[1].fill_(7);
  EXPECT_TRUE(tensor_equal(b.detach(), value({1.0, 7.0, 3.0})));
  (b * b).sum().backward();
  EXPECT_TRUE(tensor_equal(a.grad(), value({2.0, 0.0, 6.0})));

  // A view written from another tensor that requires grad.
  Tensor base = zeros({2, 3}, {.device = device()});
  Tensor row = leaf({1.0, 2.0, 3.0});
  base.select(0, 1).copy_(row * 2);
  EXPECT_TRUE(base.requires_grad());
  (base * base).sum().backward();
  EXPECT_TRUE(tensor_equal(row.grad(), value({8.0, 16.0, 24.0})));
}

TEST_P(AutogradTest, ModifyingASavedTensorMakesBackwardFail) {
  const std::string msg = "modified by an inplace operation";
  // exp saves its output; changing it breaks exp's backward.
  Tensor x = leaf({1.0, 2.0});
  Tensor z = x.exp();
  z.add_(1);
  EXPECT_TRUE(throws_error([&] { z.sum().backward(); }, ErrorKind::Value, {msg}));
  // mul saves both operands; changing one of them (outside the graph) does too.
  Tensor a = leaf({1.0, 2.0}), w = leaf({3.0, 4.0});
  Tensor y = a * w;
  {
    NoGradGuard no_grad;
    w.add_(1);
  }
  EXPECT_TRUE(throws_error([&] { y.sum().backward(); }, ErrorKind::Value, {msg, "version"}));
  // Through a view of the saved tensor, too.
  Tensor b = leaf({1.0, 2.0, 3.0});
  Tensor s = b.sigmoid();
  Tensor t = s * 2;  // keeps the graph through s
  s.narrow(0, 0, 1).mul_(0.5);
  EXPECT_TRUE(throws_error([&] { t.sum().backward(); }, ErrorKind::Value, {msg}));
  // Changing a tensor that was not saved is fine: add saves nothing it needs.
  Tensor p = leaf({1.0, 2.0});
  Tensor q = p * 1;
  Tensor r = q + 5;
  q.mul_(10);
  r.sum().backward();
  EXPECT_TRUE(tensor_equal(p.grad(), value({1.0, 1.0})));
  // Nor does mul keep an operand only the other operand's gradient would read.
  Tensor u = leaf({1.0, 2.0});
  Tensor h = u * 2;
  Tensor k = h * value({3.0, 5.0});  // the constant needs no gradient: h is not kept
  h.add_(1);
  k.sum().backward();
  EXPECT_TRUE(tensor_equal(u.grad(), value({6.0, 10.0})));
}

TEST_P(AutogradTest, VersionCounterCountsInPlaceChanges) {
  Tensor t = zeros({4}, {.device = device()});
  uint64_t v0 = t._version();
  t.add_(1);
  EXPECT_EQ(t._version(), v0 + 1);
  t.mul_(2);
  t.fill_(3);
  EXPECT_EQ(t._version(), v0 + 3);
  // Views share the counter with their base.
  Tensor view = t.narrow(0, 1, 2);
  EXPECT_EQ(view._version(), t._version());
  view.zero_();
  EXPECT_EQ(t._version(), v0 + 4);
  EXPECT_EQ(view._version(), v0 + 4);
  // Out-of-place ops and reads leave it alone.
  Tensor u = t * 2 + t.exp();
  (void)t.sum();
  EXPECT_EQ(t._version(), v0 + 4);
  EXPECT_TRUE(tensor_equal(t, value({3.0, 0.0, 0.0, 3.0})));
  EXPECT_TRUE(tensor_close(u, value({6.0 + std::exp(3.0), 1.0, 1.0, 6.0 + std::exp(3.0)})));
  // The same in graph mode.
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  uint64_t w0 = y._version();
  y.add_(1);
  y.mul_(value({2.0, 2.0}));
  EXPECT_EQ(y._version(), w0 + 2);
}

// --- dtypes and devices

TEST_P(AutogradTest, GradientsKeepEachInputsDtype) {
  Tensor a = leaf({1.0, 2.0, 3.0}, kFloat32);
  Tensor s = leaf(2.0, kFloat64);  // a 0-dim tensor does not promote a dimensioned one
  Tensor y = a * s;
  EXPECT_EQ(y.dtype(), kFloat32);
  y.sum().backward();
  EXPECT_EQ(a.grad().dtype(), kFloat32);
  EXPECT_EQ(s.grad().dtype(), kFloat64);
  EXPECT_TRUE(tensor_equal(a.grad(), value({2.0, 2.0, 2.0})));
  EXPECT_TRUE(tensor_equal(s.grad(), value(6.0, kFloat64)));

  Tensor f = leaf({1.0, -1.0}, kFloat32), d = leaf({0.5, 4.0}, kFloat64);
  Tensor z = f * d;
  EXPECT_EQ(z.dtype(), kFloat64);
  z.sum().backward();
  EXPECT_TRUE(tensor_equal(f.grad(), value({0.5, 4.0}, kFloat32)));
  EXPECT_TRUE(tensor_equal(d.grad(), value({1.0, -1.0}, kFloat64)));

  // An integer operand needs no gradient; the float one gets its own dtype back.
  Tensor i = value({2, 3}, kInt64);
  Tensor h = leaf({1.0, 1.0}, kFloat64);
  (i * h).sum().backward();
  EXPECT_TRUE(tensor_equal(h.grad(), value({2.0, 3.0}, kFloat64)));

  // Through an explicit conversion.
  Tensor c = leaf({1.5, 2.5}, kFloat32);
  Tensor c64 = c.to(kFloat64);
  (c64 * c64).sum().backward();
  EXPECT_TRUE(tensor_equal(c.grad(), value({3.0, 5.0}, kFloat32)));
}

TEST_P(AutogradTest, GradientsFlowBackAcrossDeviceMoves) {
  Tensor x = tensor({1.0, 2.0, 3.0}, {.requires_grad = true});  // on the CPU
  Tensor y = x.to(device());
  EXPECT_EQ(y.device().type(), device().type());
  EXPECT_TRUE(y.requires_grad());
  (y * y).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(x.grad().is_cpu());
  EXPECT_TRUE(tensor_equal(x.grad(), tensor({2.0, 4.0, 6.0})));

  Tensor d = leaf({1.0, -1.0});  // on this test's device, moved to the CPU and back
  Tensor back = (d.cpu() * 3).to(device());
  (back * d).sum().backward();
  EXPECT_EQ(d.grad().device(), d.device());
  EXPECT_TRUE(tensor_equal(d.grad(), value({6.0, -6.0})));

  // A 0-dim CPU tensor may join a tensor on another device; its gradient comes home.
  Tensor s = tensor(2.0, {.requires_grad = true});
  Tensor v = leaf({1.0, 2.0, 4.0});
  (v * s).sum().backward();
  EXPECT_TRUE(s.grad().is_cpu());
  EXPECT_TRUE(tensor_equal(s.grad(), tensor(7.0)));
  EXPECT_EQ(v.grad().device(), v.device());
  EXPECT_TRUE(tensor_equal(v.grad(), value({2.0, 2.0, 2.0})));
}

// --- end to end

TEST_P(AutogradTest, FitsALineByGradientDescent) {
  Tensor x = linspace(-1, 1, 20, {.device = device()});
  Tensor target = 3 * x + 2;
  Tensor w = zeros({1}, {.device = device(), .requires_grad = true});
  Tensor b = zeros({1}, {.device = device(), .requires_grad = true});
  const double lr = 0.1;
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 200; ++step) {
    Tensor loss = (w * x + b - target).pow(2).mean();
    if (step == 0) first_loss = loss.item<double>();
    last_loss = loss.item<double>();
    loss.backward();
    NoGradGuard no_grad;
    w.sub_(w.grad() * lr);
    b.sub_(b.grad() * lr);
    w.mutable_grad().zero_();
    b.mutable_grad().zero_();
  }
  EXPECT_TRUE(w.is_leaf());
  EXPECT_NEAR(w.item<double>(), 3.0, 1e-3);
  EXPECT_NEAR(b.item<double>(), 2.0, 1e-3);
  EXPECT_GT(first_loss, 1.0);
  EXPECT_LT(last_loss, 1e-5);
}

EMBER_INSTANTIATE_DEVICE_TESTS(AutogradTest);

}  // namespace
}  // namespace ember
