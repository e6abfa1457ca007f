// tests/test_layer_norm.cpp: F::layer_norm's fused kernels (one NativeLayerNormBackward0 node)
// against the composite definition computed in float64, over a table of shapes that reach the
// kernels' lane tails and row blocks, every weight/bias combination and every subset of inputs
// requiring grad; the results' independence of the thread count; the cases that keep the
// composite path.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "ember/settings.h"
#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;

class LayerNormTest : public testing::DeviceTest {};

struct Case {
  Shape x;
  Shape normalized;
};
// Rows of 37 (two 16-lane steps and a tail of 5), 3 and 300; 5000 rows make blocks of 20 (the
// CPU's parameter-gradient blocks: the other devices leave that case out, for which it only
// repeats the others' path at many times their cost -- 95 s on the emulated CUDA device).
const Case kCases[] = {{{3, 5, 37}, {37}},      {{70, 3}, {3}},     {{4, 300}, {300}},
                       {{2, 25, 8, 4}, {8, 4}}, {{5000, 16}, {16}}, {{1, 1}, {1}}};

// The definition, in float64 and differentiable by composition.
Tensor reference(const Tensor& x, const Shape& normalized, const Tensor& w, const Tensor& b) {
  Shape dims;
  const int64_t k = static_cast<int64_t>(normalized.size());
  for (int64_t i = 0; i < k; ++i) dims.push_back(x.dim() - k + i);
  Tensor m = x.mean(dims, true), v = ((x - m) * (x - m)).mean(dims, true);
  Tensor y = (x - m) / sqrt(v + 1e-5);
  if (w.defined()) y = y * w;
  if (b.defined()) y = y + b;
  return y;
}

TEST_P(LayerNormTest, FusedMatchesTheDefinitionAndItsGradients) {
  manual_seed(4);
  for (DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 2e-5 : 1e-11;
    for (const Case& c : kCases) {
      if (!device().is_cpu() && c.x[0] == 5000) continue;
      for (int affine = 0; affine < 4; ++affine) {
        for (int needs = 1; needs < 8; ++needs) {
          const bool has_w = affine & 1, has_b = affine & 2;
          if ((!has_w && (needs & 2)) || (!has_b && (needs & 4))) continue;
          SCOPED_TRACE(std::string(dtype_name(dt)) + " x " + shape_str(c.x) + " affine " +
                       std::to_string(affine) + " needs " + std::to_string(needs));
          // Rows with an offset and a scale of their own, as activations have.
          Tensor x0 = randn(c.x, on(kFloat64)) * 3.0 + 1.5;
          Tensor w0 = has_w ? randn(c.normalized, on(kFloat64)) : Tensor();
          Tensor b0 = has_b ? randn(c.normalized, on(kFloat64)) : Tensor();
          Tensor g0 = randn(c.x, on(kFloat64));
          auto leaf = [&](const Tensor& t, bool grad) {
            return t.defined() ? t.to(dt).detach().requires_grad_(grad) : Tensor();
          };
          Tensor x = leaf(x0, needs & 1), w = leaf(w0, needs & 2), b = leaf(b0, needs & 4);
          Tensor y = F::layer_norm(x, c.normalized, w, b);
          ASSERT_NE(y.grad_fn(), nullptr);
          EXPECT_EQ(y.grad_fn()->name(), "NativeLayerNormBackward0");
          EXPECT_EQ(y.dtype(), dt);
          // The reference sees the same (rounded) values, in float64.
          auto ref_leaf = [](const Tensor& t) {
            return t.defined() ? t.detach().to(kFloat64).requires_grad_(true) : Tensor();
          };
          Tensor xr = ref_leaf(x), wr = ref_leaf(w), br = ref_leaf(b);
          Tensor yr = reference(xr, c.normalized, wr, br);
          EXPECT_TRUE(tensor_close(y, yr, tol, tol));
          std::vector<Tensor> inputs, ref_inputs;
          for (auto [t, r] : {std::pair{x, xr}, {w, wr}, {b, br}})
            if (t.defined() && t.requires_grad()) {
              inputs.push_back(t);
              ref_inputs.push_back(r);
            }
          std::vector<Tensor> grads = autograd::grad({y}, inputs, {g0.to(dt)});
          std::vector<Tensor> ref_grads = autograd::grad({yr}, ref_inputs, {g0});
          ASSERT_EQ(grads.size(), ref_grads.size());
          for (size_t i = 0; i < grads.size(); ++i) {
            EXPECT_EQ(grads[i].sizes(), inputs[i].sizes()) << i;
            EXPECT_EQ(grads[i].dtype(), dt) << i;
            // Parameter gradients sum over rows: scale the tolerance with their count.
            const double scale = i == 0 && (needs & 1) ? 1.0 : 1.0 + x.numel() / 1000.0;
            EXPECT_TRUE(tensor_close(grads[i], ref_grads[i], tol * scale, tol * scale)) << i;
          }
        }
      }
    }
  }
}

TEST_P(LayerNormTest, NonContiguousInputAndGradcheck) {
  manual_seed(5);
  Tensor x = randn({6, 5}, on(kFloat64)).t().requires_grad_(true);  // (5, 6), strided
  Tensor w = randn({6}, on(kFloat64)).requires_grad_(true);
  Tensor b = randn({6}, on(kFloat64)).requires_grad_(true);
  EXPECT_TRUE(tensor_close(F::layer_norm(x, {6}, w, b), reference(x, {6}, w, b), 1e-12, 1e-12));
  EXPECT_TRUE(autograd::gradcheck(
      [](const std::vector<Tensor>& in) { return F::layer_norm(in[0], {6}, in[1], in[2]); },
      {x, w, b}));
  // A saved input changed in place is refused at backward, as for every saved tensor.
  Tensor xc = randn({3, 6}, on(kFloat64)).requires_grad_(true);
  Tensor h = xc * 1.0;
  Tensor y = F::layer_norm(h, {6}, w, b);
  {
    NoGradGuard no_grad;
    h.add_(1.0);
  }
  EXPECT_TRUE(testing::throws_error([&] { y.sum().backward(); }, ErrorKind::Value,
                                    {"modified by an inplace operation"}));
}

// The composite path keeps what the fused kernels do not take: a weight of another dtype
// (promoted), a weight that broadcasts, an empty input.
TEST_P(LayerNormTest, OtherCasesKeepTheComposite) {
  manual_seed(6);
  Tensor x = randn({4, 3}, on(kFloat32));
  Tensor w64 = randn({3}, on(kFloat64));
  Tensor y = F::layer_norm(x, {3}, w64);
  EXPECT_EQ(y.dtype(), kFloat64);
  EXPECT_TRUE(tensor_close(y, reference(x.to(kFloat64), {3}, w64, Tensor()), 1e-6, 1e-6));
  Tensor wb = randn({1}, on(kFloat32));
  EXPECT_TRUE(tensor_close(F::layer_norm(x, {3}, wb), reference(x, {3}, wb, Tensor())));
  EXPECT_EQ(F::layer_norm(randn({0, 3}, on(kFloat32)), {3}).sizes(), (Shape{0, 3}));
}

// Rows are independent and the parameter gradients sum fixed blocks of rows in order: one thread
// or two, the same bits.
TEST_P(LayerNormTest, ResultsDoNotDependOnTheThreadCount) {
  if (device().is_cuda() && !testing::fake_cuda_backend())
    GTEST_SKIP() << "the CUDA kernels have no thread count to set";
  manual_seed(7);
  Tensor x = randn({3000, 40}, on(kFloat32)).requires_grad_(true);
  Tensor w = randn({40}, on(kFloat32)).requires_grad_(true);
  Tensor b = randn({40}, on(kFloat32)).requires_grad_(true);
  Tensor g = randn({3000, 40}, on(kFloat32));
  auto run = [&](int threads) {
    set_num_threads(threads);
    Tensor y = F::layer_norm(x, {40}, w, b);
    std::vector<Tensor> grads = autograd::grad({y}, {x, w, b}, {g});
    grads.push_back(y);
    return grads;
  };
  const int before = get_num_threads();
  std::vector<Tensor> one = run(1), two = run(2);
  set_num_threads(before);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(testing::tensor_equal(one[i], two[i])) << i;
}

EMBER_INSTANTIATE_DEVICE_TESTS(LayerNormTest);

}  // namespace
}  // namespace ember
