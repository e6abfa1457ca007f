// tests/test_conv.cpp: the image layers -- conv2d (by hand with stride, padding, dilation and
// groups; against a direct float64 convolution on random inputs; gradcheck), max / avg / adaptive
// pooling, batch_norm and its running statistics, dropout2d's statistics, the modules' init,
// printing and device moves, and the errors they raise.
#include <cmath>
#include <sstream>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;
using testing::throws_error;

class ConvTest : public testing::DeviceTest {
 protected:
  Tensor make(const NestedValues& values, DType dtype = kFloat32) const {
    return tensor(values, on(dtype));
  }
  // arange(n) as float32 (or dtype) of `shape` on this test's device.
  Tensor ramp(const Shape& shape, DType dtype = kFloat32) const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return arange(0, n, 1, on(dtype)).view(shape);
  }
  Tensor random(const Shape& shape, DType dtype = kFloat64, bool grad = false) const {
    Tensor t = randn(shape, on(dtype));
    if (grad) t.requires_grad_();
    return t;
  }
  ::testing::AssertionResult grad_ok(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                     const std::vector<Tensor>& inputs) const {
    try {
      if (!autograd::gradcheck(f, inputs)) return ::testing::AssertionFailure() << "mismatch";
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << e.what();
    }
    return ::testing::AssertionSuccess();
  }
};

// Direct convolution in float64 on the host: out[n][o][y][x] = b[o] + sum over the group's
// channels and taps of w * input (0 outside).
Tensor reference_conv(const Tensor& input, const Tensor& weight, const Tensor& bias,
                      const F::Conv2dFuncOptions& o) {
  auto x = testing::values_of(input), w = testing::values_of(weight);
  auto b = bias.defined() ? testing::values_of(bias) : std::vector<double>(weight.size(0), 0.0);
  int64_t n = input.size(0), c = input.size(1), h = input.size(2), wd = input.size(3);
  int64_t oc = weight.size(0), cg = weight.size(1), kh = weight.size(2), kw = weight.size(3);
  int64_t oh = (h + 2 * o.padding.h - o.dilation.h * (kh - 1) - 1) / o.stride.h + 1;
  int64_t ow = (wd + 2 * o.padding.w - o.dilation.w * (kw - 1) - 1) / o.stride.w + 1;
  int64_t per_group = oc / o.groups;
  std::vector<double> out(n * oc * oh * ow);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t io = 0; io < oc; ++io)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = b[io];
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = y * o.stride.h - o.padding.h + ky * o.dilation.h;
                int64_t ix = xo * o.stride.w - o.padding.w + kx * o.dilation.w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                int64_t chan = io / per_group * cg + ic;
                acc += w[((io * cg + ic) * kh + ky) * kw + kx] *
                       x[((in * c + chan) * h + iy) * wd + ix];
              }
          out[((in * oc + io) * oh + y) * ow + xo] = acc;
        }
  return from_vector(out, Shape{n, oc, oh, ow}, {.dtype = kFloat64});
}

// --- conv2d by hand

TEST_P(ConvTest, Conv2dByHand) {
  Tensor x = ramp({1, 1, 3, 3}) + 1;  // 1..9
  Tensor diag = make({{{{1.0, 0.0}, {0.0, -1.0}}}});
  // x[i][j] - x[i + 1][j + 1] = -4 everywhere, plus the bias.
  EXPECT_TRUE(
      tensor_close(F::conv2d(x, diag, make({0.5})), make({{{{-3.5, -3.5}, {-3.5, -3.5}}}})));

  Tensor box = ones({1, 1, 2, 2}, on());
  // Padding 1, stride 2: windows at rows/cols {-1, 0} and {1, 2}.
  EXPECT_TRUE(tensor_close(F::conv2d(x, box, {}, {.stride = 2, .padding = 1}),
                           make({{{{1.0, 5.0}, {11.0, 28.0}}}})));
  // Dilation 2: the four corners.
  EXPECT_TRUE(tensor_close(F::conv2d(x, box, {}, {.dilation = 2}), make({{{{20.0}}}})));
  // Rectangular stride and padding.
  EXPECT_TRUE(tensor_close(F::conv2d(x, box, {}, {.stride = {1, 2}, .padding = {0, 1}}),
                           make({{{{1.0 + 4, 2.0 + 3 + 5 + 6}, {4.0 + 7, 5.0 + 6 + 8 + 9}}}})));
  // Unbatched input gives unbatched output.
  EXPECT_EQ(F::conv2d(x[0], box).sizes(), (Shape{1, 2, 2}));
}

TEST_P(ConvTest, Conv2dGroupsByHand) {
  // Channels 1, 2, 3, 4 everywhere; groups of two input channels each feed two outputs.
  Tensor x = (arange(1, 5, 1, on(kFloat32)).view({1, 4, 1, 1}) * ones({1, 4, 2, 2}, on()));
  Tensor w = make({{{{1.0}}, {{0.0}}}, {{{0.0}}, {{1.0}}}, {{{1.0}}, {{1.0}}}, {{{2.0}}, {{0.0}}}});
  Tensor out = F::conv2d(x, w, {}, {.groups = 2});
  // Group 0 sees channels (1, 2): 1, 2; group 1 sees (3, 4): 3 + 4, 2 * 3.
  Tensor expected = make({1.0, 2.0, 7.0, 6.0}).view({1, 4, 1, 1}) * ones({1, 4, 2, 2}, on());
  EXPECT_TRUE(tensor_close(out, expected));
  // Depthwise: groups = channels.
  Tensor dw = F::conv2d(x, full({4, 1, 1, 1}, 2.0, on()), {}, {.groups = 4});
  EXPECT_TRUE(tensor_close(dw, x * 2));
}

TEST_P(ConvTest, Conv2dMatchesDirectConvolution) {
  manual_seed(7);
  struct Case {
    Shape input, weight;
    F::Conv2dFuncOptions options;
  };
  std::vector<Case> cases = {
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {}},
      {{3, 2, 10, 11}, {5, 2, 3, 2}, {.stride = {2, 3}, .padding = {1, 2}}},
      {{1, 4, 12, 9}, {6, 2, 3, 3}, {.padding = 2, .dilation = {2, 3}, .groups = 2}},
      {{2, 6, 7, 7}, {6, 1, 5, 5}, {.stride = 2, .padding = 2, .groups = 6}},
      {{4, 1, 28, 28}, {8, 1, 3, 3}, {.padding = 1}},
  };
  for (const auto& c : cases) {
    Tensor x = random(c.input, kFloat32), w = random(c.weight, kFloat32);
    Tensor b = random({c.weight[0]}, kFloat32);
    Tensor out = F::conv2d(x, w, b, c.options);
    EXPECT_EQ(out.dtype(), kFloat32);
    EXPECT_EQ(out.device(), x.device());
    EXPECT_TRUE(tensor_close(out, reference_conv(x, w, b, c.options), 1e-4, 1e-4))
        << shape_str(c.input) << " * " << shape_str(c.weight);
  }
}

TEST_P(ConvTest, Conv2dGradcheck) {
  manual_seed(3);
  struct Case {
    Shape input, weight;
    F::Conv2dFuncOptions options;
  };
  std::vector<Case> cases = {
      {{2, 2, 5, 4}, {3, 2, 2, 3}, {}},
      {{1, 2, 6, 7}, {2, 2, 3, 3}, {.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}}},
      {{2, 4, 5, 5}, {4, 2, 2, 2}, {.stride = 2, .padding = 1, .groups = 2}},
  };
  for (const auto& c : cases) {
    Tensor x = random(c.input, kFloat64, true), w = random(c.weight, kFloat64, true);
    Tensor b = random({c.weight[0]}, kFloat64, true);
    auto o = c.options;
    EXPECT_TRUE(grad_ok([o](auto& t) { return F::conv2d(t[0], t[1], t[2], o); }, {x, w, b}))
        << shape_str(c.input) << " * " << shape_str(c.weight);
    EXPECT_TRUE(grad_ok([o](auto& t) { return F::conv2d(t[0], t[1], Tensor(), o); }, {x, w}));
  }
  // Unbatched input, gradient only w.r.t. the input.
  Tensor x = random({2, 4, 4}, kFloat64, true);
  Tensor w = random({3, 2, 3, 3}, kFloat64);
  EXPECT_TRUE(grad_ok([w](auto& t) { return F::conv2d(t[0], w, Tensor(), {.padding = 1}); }, {x}));
}

// --- pooling

TEST_P(ConvTest, MaxPoolByHand) {
  Tensor x = ramp({1, 1, 4, 4});
  EXPECT_TRUE(tensor_close(F::max_pool2d(x, 2), make({{{{5.0, 7.0}, {13.0, 15.0}}}})));
  // Stride 1, and padding (which never wins, even over negative values).
  EXPECT_TRUE(tensor_close(F::max_pool2d(x - 100, 3, {.stride = 2, .padding = 1}) + 100,
                           make({{{{5.0, 7.0}, {13.0, 15.0}}}})));
  // Dilation 2 with a 2x2 kernel reads (i, j), (i, j + 2), (i + 2, j), (i + 2, j + 2).
  EXPECT_TRUE(tensor_close(F::max_pool2d(x, 2, {.stride = 1, .dilation = 2}),
                           make({{{{10.0, 11.0}, {14.0, 15.0}}}})));
  // ceil_mode keeps the partial windows at the end: 5 -> 3.
  Tensor y = ramp({1, 1, 5, 5});
  EXPECT_EQ(F::max_pool2d(y, 2).sizes(), (Shape{1, 1, 2, 2}));
  EXPECT_TRUE(tensor_close(F::max_pool2d(y, 2, {.ceil_mode = true}),
                           make({{{{6.0, 8.0, 9.0}, {16.0, 18.0, 19.0}, {21.0, 23.0, 24.0}}}})));
}

TEST_P(ConvTest, MaxPoolGradientGoesToTheMaxima) {
  Tensor x = ramp({1, 1, 4, 4}).requires_grad_();
  F::max_pool2d(x, 2).sum().backward();
  Tensor expected = zeros({1, 1, 4, 4}, on());
  for (int64_t i : {5, 7, 13, 15}) expected.view({-1})[i].fill_(1);
  EXPECT_TRUE(tensor_close(x.grad(), expected));
  // Overlapping windows add up: with stride 1 the centre of a 3x3 peak is picked four times.
  Tensor peak = make({{{{0.0, 0.0, 0.0}, {0.0, 9.0, 0.0}, {0.0, 0.0, 0.0}}}}).requires_grad_();
  F::max_pool2d(peak, 2, {.stride = 1}).sum().backward();
  EXPECT_DOUBLE_EQ(peak.grad().view({-1})[4].item<double>(), 4.0);
  EXPECT_DOUBLE_EQ(peak.grad().sum().item<double>(), 4.0);
}

TEST_P(ConvTest, MaxPoolTiesGoToTheFirstMaximumAndNanWins) {
  // Equal values: the first position of each window (in row-major order) takes the gradient,
  // as in PyTorch.
  Tensor x = ones({1, 1, 2, 4}, on()).requires_grad_();
  F::max_pool2d(x, 2).sum().backward();
  EXPECT_TRUE(tensor_close(x.grad(), make({{{{1.0, 0.0, 1.0, 0.0}, {0.0, 0.0, 0.0, 0.0}}}})));
  // A NaN is the window's maximum and takes the gradient, even after a larger value.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor y = make({{{{5.0, 1.0, 2.0, 3.0}, {nan, 9.0, 4.0, 0.0}}}}).requires_grad_();
  Tensor out = F::max_pool2d(y, 2);
  EXPECT_TRUE(std::isnan(out.view({-1})[0].item<double>()));
  EXPECT_DOUBLE_EQ(out.view({-1})[1].item<double>(), 4.0);
  out.sum().backward();
  EXPECT_TRUE(tensor_close(y.grad(), make({{{{0.0, 0.0, 0.0, 0.0}, {1.0, 0.0, 1.0, 0.0}}}})));
}

TEST_P(ConvTest, PoolingGradcheck) {
  manual_seed(11);
  // Random float64 values have no ties, so max's gradient is well defined.
  Tensor x = random({2, 3, 7, 6}, kFloat64, true);
  EXPECT_TRUE(grad_ok([](auto& t) { return F::max_pool2d(t[0], 2); }, {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        return F::max_pool2d(t[0], {3, 2}, {.stride = {2, 1}, .padding = 1, .dilation = {1, 2}});
      },
      {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return F::max_pool2d(t[0], 3, {.ceil_mode = true}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return F::avg_pool2d(t[0], 2); }, {x}));
  EXPECT_TRUE(grad_ok(
      [](auto& t) {
        return F::avg_pool2d(
            t[0], 3, {.stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false});
      },
      {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return F::adaptive_avg_pool2d(t[0], {3, 4}); }, {x}));
  EXPECT_TRUE(grad_ok([](auto& t) { return F::adaptive_avg_pool2d(t[0], 1); }, {x}));
}

TEST_P(ConvTest, AvgPoolByHand) {
  Tensor x = ramp({1, 1, 4, 4});
  EXPECT_TRUE(tensor_close(F::avg_pool2d(x, 2), make({{{{2.5, 4.5}, {10.5, 12.5}}}})));
  // Ones with padding 1: count_include_pad divides by 4 even where the window is mostly padding.
  Tensor one = ones({1, 1, 3, 3}, on());
  EXPECT_TRUE(tensor_close(F::avg_pool2d(one, 2, {.stride = 2, .padding = 1}),
                           make({{{{0.25, 0.5}, {0.5, 1.0}}}})));
  EXPECT_TRUE(
      tensor_close(F::avg_pool2d(one, 2, {.stride = 2, .padding = 1, .count_include_pad = false}),
                   ones({1, 1, 2, 2}, on())));
  // ceil_mode's extra windows divide only by what they cover.
  EXPECT_TRUE(tensor_close(F::avg_pool2d(ones({1, 1, 5, 5}, on()), 2, {.ceil_mode = true}),
                           ones({1, 1, 3, 3}, on())));
  // Unbatched.
  EXPECT_EQ(F::avg_pool2d(ones({2, 4, 4}, on()), 2).sizes(), (Shape{2, 2, 2}));
}

TEST_P(ConvTest, AdaptiveAvgPoolByHand) {
  EXPECT_TRUE(tensor_close(F::adaptive_avg_pool2d(ramp({1, 1, 4, 4}), 2),
                           make({{{{2.5, 4.5}, {10.5, 12.5}}}})));
  // 3 x 5 -> 2 x 3: rows {0, 1}, {1, 2}; columns {0, 1}, {1, 2, 3}, {3, 4}; x = 5 r + c.
  EXPECT_TRUE(tensor_close(F::adaptive_avg_pool2d(ramp({1, 1, 3, 5}), {2, 3}),
                           make({{{{3.0, 4.5, 6.0}, {8.0, 9.5, 11.0}}}})));
  // Output 1 is the global mean.
  Tensor x = random({2, 3, 5, 7}, kFloat32);
  EXPECT_TRUE(tensor_close(F::adaptive_avg_pool2d(x, 1), x.mean({2, 3}, true), 1e-5, 1e-6));
}

// --- batch norm and dropout2d

TEST_P(ConvTest, BatchNormRunningStatsByHand) {
  nn::BatchNorm1d bn(2);
  bn->to(device());
  // Channel 0: 1, 3, 5 (mean 3, biased var 8/3, unbiased 4); channel 1: 2, 4, 9 (mean 5,
  // unbiased var 13).
  Tensor x = make({{1.0, 2.0}, {3.0, 4.0}, {5.0, 9.0}});
  Tensor y = bn(x);
  Tensor expected = make({{-2.0 / std::sqrt(8.0 / 3 + 1e-5), -3.0 / std::sqrt(26.0 / 3 + 1e-5)},
                          {0.0, -1.0 / std::sqrt(26.0 / 3 + 1e-5)},
                          {2.0 / std::sqrt(8.0 / 3 + 1e-5), 4.0 / std::sqrt(26.0 / 3 + 1e-5)}});
  EXPECT_TRUE(tensor_close(y, expected));
  EXPECT_TRUE(tensor_close(bn->running_mean, make({0.3, 0.5})));
  EXPECT_TRUE(tensor_close(bn->running_var, make({0.9 + 0.4, 0.9 + 1.3})));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  // A second step: running = 0.9 running + 0.1 batch.
  bn(x);
  EXPECT_TRUE(tensor_close(bn->running_mean, make({0.3 * 0.9 + 0.3, 0.5 * 0.9 + 0.5})));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  // Eval normalizes with the running statistics and changes nothing.
  bn->eval();
  Tensor rm = bn->running_mean.clone(), rv = bn->running_var.clone();
  EXPECT_TRUE(tensor_close(bn(x), (x - rm) / sqrt(rv + 1e-5)));
  EXPECT_TRUE(tensor_close(bn->running_mean, rm));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);

  // Without momentum the running statistics are the cumulative average.
  nn::BatchNorm1d avg(2, {.momentum = std::nullopt});
  avg->to(device());
  avg(x);
  EXPECT_TRUE(tensor_close(avg->running_mean, make({3.0, 5.0})));
  EXPECT_TRUE(tensor_close(avg->running_var, make({4.0, 13.0})));
  avg(x * 3);
  EXPECT_TRUE(tensor_close(avg->running_mean, make({6.0, 10.0})));
}

TEST_P(ConvTest, BatchNorm2dAffineAndEvalWithoutTracking) {
  manual_seed(5);
  nn::BatchNorm2d bn(3);
  bn->to(device());
  {
    NoGradGuard no_grad;
    bn->weight.copy_(make({1.0, 2.0, 3.0}));
    bn->bias.copy_(make({0.0, -1.0, 1.0}));
  }
  Tensor x = random({4, 3, 5, 5}, kFloat32) * 3 + 2;
  Tensor y = bn(x);
  Tensor mean = x.mean({0, 2, 3}, true), var = x.var({0, 2, 3}, false, true);
  Tensor expected = (x - mean) / sqrt(var + 1e-5) * make({1.0, 2.0, 3.0}).view({1, 3, 1, 1}) +
                    make({0.0, -1.0, 1.0}).view({1, 3, 1, 1});
  EXPECT_TRUE(tensor_close(y, expected, 1e-4, 1e-5));
  EXPECT_TRUE(tensor_close(bn->running_var, var.view({3}) * (100.0 / 99) * 0.1 + 0.9, 1e-5));
  // Not tracking: no buffers, batch statistics also in eval.
  nn::BatchNorm2d free(3, {.affine = false, .track_running_stats = false});
  free->to(device());
  EXPECT_TRUE(free->buffers().empty());
  EXPECT_TRUE(free->parameters().empty());
  free->eval();
  EXPECT_TRUE(tensor_close(free(x), (x - mean) / sqrt(var + 1e-5), 1e-4, 1e-5));
}

TEST_P(ConvTest, BatchNormGradcheck) {
  manual_seed(9);
  Tensor x = random({3, 2, 3, 2}, kFloat64, true);
  Tensor w = random({2}, kFloat64, true), b = random({2}, kFloat64, true);
  Tensor rm = zeros({2}, on(kFloat64)), rv = ones({2}, on(kFloat64));
  EXPECT_TRUE(
      grad_ok([&](auto& t) { return F::batch_norm(t[0], rm, rv, t[1], t[2], true); }, {x, w, b}));
  EXPECT_TRUE(
      grad_ok([&](auto& t) { return F::batch_norm(t[0], rm, rv, t[1], t[2], false); }, {x, w, b}));
  Tensor x1 = random({5, 3}, kFloat64, true);
  EXPECT_TRUE(grad_ok([](auto& t) { return F::batch_norm(t[0], {}, {}, {}, {}, true); }, {x1}));
}

TEST_P(ConvTest, Dropout2dZeroesWholeChannels) {
  manual_seed(1);
  Tensor x = ones({100, 50, 3, 3}, on()).requires_grad_();
  Tensor y = F::dropout2d(x, 0.3, true);
  // Per channel: all 0 or all 1 / 0.7.
  Tensor lo = y.amin({2, 3}), hi = y.amax({2, 3});
  EXPECT_TRUE(tensor_close(lo, hi));
  Tensor dropped = (hi == 0).to(kFloat64);
  Tensor kept = (abs(hi - 1 / 0.7) < 1e-5).to(kFloat64);
  EXPECT_TRUE(tensor_close(dropped + kept, ones({100, 50}, on(kFloat64))));
  double rate = dropped.mean().item<double>();
  EXPECT_NEAR(rate, 0.3, 0.03);  // 5000 channels: the std of the rate is 0.0065
  EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.05);
  // The gradient is the same mask and scale.
  y.sum().backward();
  EXPECT_TRUE(tensor_close(x.grad(), y.detach()));
  // Eval and p = 0 are the identity; p = 1 zeroes everything.
  EXPECT_TRUE(F::dropout2d(x, 0.3, false).is_same(x));
  EXPECT_TRUE(tensor_close(F::dropout2d(x, 1.0, true), zeros({100, 50, 3, 3}, on())));
  nn::Dropout2d layer(0.5);
  layer->eval();
  EXPECT_TRUE(layer(x).is_same(x));
}

// --- modules

TEST(ConvModules, PrintAsPyTorch) {
  auto repr = [](const auto& m) {
    std::ostringstream os;
    os << m;
    return os.str();
  };
  EXPECT_EQ(repr(nn::Conv2d(1, 32, 3)), "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(repr(nn::Conv2d(3, 8, {3, 5},
                            {.stride = 2, .padding = {1, 2}, .dilation = 2, .bias = false})),
            "Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 2), padding=(1, 2), dilation=(2, 2), "
            "bias=False)");
  EXPECT_EQ(repr(nn::Conv2d(4, 8, 3, {.padding = 1, .groups = 2})),
            "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)");
  EXPECT_EQ(repr(nn::MaxPool2d(2)),
            "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(nn::MaxPool2d(3, {.stride = {2, 1}, .padding = 1, .ceil_mode = true})),
            "MaxPool2d(kernel_size=3, stride=(2, 1), padding=1, dilation=1, ceil_mode=True)");
  EXPECT_EQ(repr(nn::AvgPool2d(3, {.stride = 1, .padding = 1})),
            "AvgPool2d(kernel_size=3, stride=1, padding=1)");
  EXPECT_EQ(repr(nn::AdaptiveAvgPool2d(5, 7)), "AdaptiveAvgPool2d(output_size=(5, 7))");
  EXPECT_EQ(repr(nn::BatchNorm2d(32)),
            "BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(repr(nn::BatchNorm1d(10, {.eps = 0.001, .momentum = std::nullopt, .affine = false})),
            "BatchNorm1d(10, eps=0.001, momentum=None, affine=False, track_running_stats=True)");
  EXPECT_EQ(repr(nn::Dropout2d(0.25)), "Dropout2d(p=0.25, inplace=False)");
  nn::Sequential net(nn::Conv2d(1, 32, 3, {.padding = 1}), nn::BatchNorm2d(32), nn::ReLU(),
                     nn::MaxPool2d(2));
  EXPECT_EQ(
      repr(net),
      "Sequential(\n"
      "  (0): Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
      "  (1): BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
      "  (2): ReLU()\n"
      "  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
      ")");
}

TEST(ConvModules, Conv2dDefaultInitAsPyTorch) {
  manual_seed(0);
  nn::Conv2d conv(16, 64, 3, {.groups = 2});
  EXPECT_EQ(conv->weight.sizes(), (Shape{64, 8, 3, 3}));
  EXPECT_EQ(conv->bias.sizes(), (Shape{64}));
  // kaiming_uniform_(a = sqrt(5)) and the bias both have bound 1 / sqrt(fan_in), fan_in = 8 * 9.
  double bound = 1.0 / std::sqrt(72.0);
  double wmax = conv->weight.abs().max().item<double>();
  EXPECT_LE(wmax, bound);
  EXPECT_GT(wmax, 0.99 * bound);
  EXPECT_LE(conv->bias.abs().max().item<double>(), bound);
  EXPECT_GT(conv->bias.abs().max().item<double>(), 0.8 * bound);
  auto names = conv->named_parameters();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].first, "weight");
  EXPECT_EQ(names[1].first, "bias");
  EXPECT_EQ(nn::Conv2d(3, 4, 3, {.bias = false})->parameters().size(), 1u);
}

TEST_P(ConvTest, BatchNormBuffersMoveWithTheModule) {
  nn::BatchNorm2d bn(4);
  EXPECT_EQ(bn->named_buffers().size(), 3u);
  EXPECT_EQ(bn->named_buffers()[2].first, "num_batches_tracked");
  Tensor running_mean = bn->running_mean;
  bn->to(device());
  Device placed = zeros({1}, on()).device();
  for (const auto& [name, t] : bn->named_buffers()) EXPECT_EQ(t.device(), placed) << name;
  EXPECT_TRUE(running_mean.is_same(bn->running_mean));  // moved in place
  bn->to(kFloat64);
  EXPECT_EQ(bn->running_var.dtype(), kFloat64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  bn(random({2, 4, 3, 3}, kFloat64));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  auto state = bn->state_dict();
  EXPECT_EQ(state.size(), 5u);
}

TEST_P(ConvTest, SmallNetTrainsOneStep) {
  manual_seed(2);
  // No conv bias: batch norm would cancel it, leaving it no gradient.
  nn::Sequential net(nn::Conv2d(1, 4, 3, {.padding = 1, .bias = false}), nn::BatchNorm2d(4),
                     nn::ReLU(), nn::MaxPool2d(2), nn::Dropout2d(0.1), nn::AdaptiveAvgPool2d(1),
                     nn::Flatten(), nn::Linear(4, 3));
  net->to(device());
  Tensor x = randn({8, 1, 8, 8}, on());
  Tensor target = tensor({0, 1, 2, 0, 1, 2, 0, 1}, {.dtype = kInt64, .device = device()});
  Tensor loss = F::cross_entropy(net(x), target);
  loss.backward();
  for (const auto& [name, p] : net->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().sizes(), p.sizes()) << name;
    EXPECT_EQ(p.grad().device(), p.device()) << name;
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0) << name;
  }
}

// --- errors

TEST_P(ConvTest, Errors) {
  Tensor x = ones({2, 3, 5, 5}, on()), w = ones({4, 3, 3, 3}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        F::conv2d(ones({3, 5}, on()), w);
      },
      ErrorKind::Shape, {"[conv2d]", "Expected 3D (unbatched) or 4D (batched) input", "[3, 5]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::conv2d(ones({2, 2, 5, 5}, on()), w);
      },
      ErrorKind::Shape,
      {"[conv2d] Given groups=1, weight of size [4, 3, 3, 3]",
       "to have 3 channels, but got 2 channels instead"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::conv2d(ones({1, 3, 2, 2}, on()), w);
      },
      ErrorKind::Shape,
      {"[conv2d]", "padded input size per channel: (2 x 2)", "Kernel size: (3 x 3)",
       "can't be greater than actual input size"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::conv2d(x, ones({4, 3, 3}, on()));
      },
      ErrorKind::Shape, {"[conv2d] weight must be 4-D"}));
  EXPECT_TRUE(throws_error([&] { F::conv2d(x, w, ones({5}, on())); }, ErrorKind::Shape,
                           {"[conv2d]", "bias", "[5]"}));
  EXPECT_TRUE(throws_error([&] { F::conv2d(x, w.to(kFloat64)); }, ErrorKind::DType,
                           {"[conv2d] Input type (float32) and weight type (float64)"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::conv2d(x, ones({3, 1, 3, 3}, on()), {}, {.groups = 2});
      },
      ErrorKind::Shape, {"[conv2d]", "divisible by groups=2"}));
  EXPECT_TRUE(throws_error([&] { F::max_pool2d(x, 2, {.padding = 2}); }, ErrorKind::Value,
                           {"[max_pool2d] pad should be at most half of effective kernel size"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::max_pool2d(ones({1, 1, 2, 2}, on()), 3);
      },
      ErrorKind::Shape, {"[max_pool2d] Given input size: (1x2x2)", "Output size is too small"}));
  EXPECT_TRUE(throws_error([&] { F::avg_pool2d(x, 0); }, ErrorKind::Value,
                           {"[avg_pool2d] kernel_size must be greater than zero"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::max_pool2d(ones({2, 3, 4, 4}, on(kInt64)), 2);
      },
      ErrorKind::DType, {"[max_pool2d]", "int64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::batch_norm(ones({1, 3}, on()), {}, {}, {}, {}, true);
      },
      ErrorKind::Value,
      {"[batch_norm] Expected more than 1 value per channel when training", "[1, 3]"}));
  nn::BatchNorm2d bn(3);
  bn->to(device());
  EXPECT_TRUE(throws_error(
      [&] {
        bn(ones({2, 3, 4}, on()));
      },
      ErrorKind::Shape, {"[BatchNorm2d] expected 4D input (got 3D input"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bn(ones({2, 4, 2, 2}, on()));
      },
      ErrorKind::Shape, {"[BatchNorm2d] expected input with 3 channels"}));
  EXPECT_TRUE(throws_error([] { nn::Conv2d(3, 4, 3, {.groups = 2}); }, ErrorKind::Value,
                           {"[Conv2d] in_channels must be divisible by groups"}));
  EXPECT_TRUE(throws_error([&] { F::dropout2d(x, 1.5); }, ErrorKind::Value,
                           {"[dropout2d] dropout probability has to be between 0 and 1"}));
  if (!device().is_cpu()) {
    EXPECT_TRUE(throws_error([&] { F::conv2d(x, w.cpu()); }, ErrorKind::Device,
                             {"Expected all tensors to be on the same device", "conv2d"}));
    nn::Conv2d conv(3, 4, 3);  // left on the CPU
    EXPECT_TRUE(throws_error([&] { conv(x); }, ErrorKind::Device, {"conv2d"}));
  }
}

EMBER_INSTANTIATE_DEVICE_TESTS(ConvTest);

}  // namespace
}  // namespace ember
