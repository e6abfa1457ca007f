// tests/test_amp.cpp: mixed precision -- autocast's op lists (lower precision for matmul, mm,
// bmm, linear and conv2d; float32 for exp, log, pow, softmax, sum, layer_norm and the losses;
// the widest input type for scatter_add, cat and stack; others follow their inputs), scopes,
// nesting, enabled=false, device types, float64 untouched, backward outside the scope, and
// GradScaler's scaling, unscaling, step skipping, growth, backoff, errors and state dict.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_close;
using testing::tensor_equal;

class AutocastTest : public testing::DeviceTest {
 protected:
  Tensor f32(const Shape& s) const { return randn(s).to(device()); }
  DeviceType type() const { return device().type(); }
};

TEST_P(AutocastTest, LowerPrecisionOpsComputeIn16Bits) {
  Tensor a = f32({4, 6}), b = f32({6, 3}), w = f32({3, 6}), bias = f32({3});
  for (DType low : {kBFloat16, kFloat16}) {
    autocast ac(type(), low);
    EXPECT_TRUE(is_autocast_enabled(type()));
    EXPECT_EQ(get_autocast_dtype(type()), low);
    Tensor y = mm(a, b);
    EXPECT_EQ(y.dtype(), low);
    EXPECT_TRUE(tensor_equal(y.cpu(), mm(a.to(low), b.to(low)).cpu()));
    EXPECT_EQ(matmul(a, b).dtype(), low);
    EXPECT_EQ(bmm(a.unsqueeze(0), b.unsqueeze(0)).dtype(), low);
    EXPECT_EQ(F::linear(a, w, bias).dtype(), low);
    EXPECT_EQ(F::conv2d(f32({1, 2, 5, 5}), f32({3, 2, 3, 3})).dtype(), low);
    // Mixed float32 and 16-bit operands are both cast.
    EXPECT_EQ(mm(a.to(low), b).dtype(), low);
    // float64 is never touched; ops off the lists follow their inputs.
    EXPECT_EQ(mm(a.to(kFloat64), b.to(kFloat64)).dtype(), kFloat64);
    EXPECT_EQ(relu(y).dtype(), low);
    EXPECT_EQ((y + a.narrow(1, 0, 3)).dtype(), kFloat32);  // widest of the two
  }
  EXPECT_FALSE(is_autocast_enabled(type()));
  EXPECT_EQ(mm(a, b).dtype(), kFloat32);
}

TEST_P(AutocastTest, Float32OpsCompute16BitInputsInFloat32) {
  autocast ac(type(), kBFloat16);
  Tensor h = f32({3, 5}).to(kBFloat16);
  Tensor target = tensor({1, 0, 4}, {.dtype = kInt64, .device = device()});
  for (const Tensor& y :
       {exp(h), log(abs(h) + 1), pow(h, 2.0), softmax(h, 1), log_softmax(h, 1), logsumexp(h, {1}),
        sum(h), prod(h), F::layer_norm(h, {5}), F::cross_entropy(h, target), F::mse_loss(h, h * 2),
        F::nll_loss(log_softmax(h, 1), target)})
    EXPECT_EQ(y.dtype(), kFloat32);
  // The float32 result is that of the 16-bit values.
  EXPECT_TRUE(tensor_equal(softmax(h, 1).cpu(), softmax(h.to(kFloat32), 1).cpu()));
  // float32 inputs of a float32 op stay as they are.
  EXPECT_EQ(exp(h.to(kFloat32)).dtype(), kFloat32);
}

// PyTorch's "promote" list: mixed floating inputs run in the widest of them (cat and stack
// always promote); outside autocast scatter_add refuses mixed dtypes.
TEST_P(AutocastTest, PromoteOpsRunInTheWidestInputType) {
  Tensor x = zeros({2, 3}).to(device()), src = ones({2, 3}).to(device());
  Tensor index = tensor({{0, 1, 0}, {1, 0, 1}}, {.dtype = kInt64}).to(device());
  EXPECT_TRUE(testing::throws_error([&] { scatter_add(x, 0, index, src.to(kBFloat16)); },
                                    ErrorKind::DType, {"[scatter_add_]", "float32", "bfloat16"}));
  autocast ac(type(), kBFloat16);
  Tensor y = scatter_add(x, 0, index, src.to(kBFloat16));
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TRUE(tensor_equal(y.cpu(), scatter_add(x, 0, index, src).cpu()));
  EXPECT_EQ(scatter_add(x.to(kFloat16), 0, index, src.to(kBFloat16)).dtype(), kFloat32);
  EXPECT_EQ(scatter_add(x.to(kFloat64), 0, index, src).dtype(), kFloat64);
  EXPECT_EQ(cat({x, src.to(kBFloat16)}).dtype(), kFloat32);
  EXPECT_EQ(stack({x.to(kBFloat16), src}).dtype(), kFloat32);
}

TEST_P(AutocastTest, ScopesNestAndCanDisable) {
  Tensor a = f32({2, 2});
  {
    autocast outer(type(), kBFloat16);
    {
      autocast inner(type(), kFloat16);
      EXPECT_EQ(mm(a, a).dtype(), kFloat16);
      {
        autocast off(type(), std::nullopt, false);
        EXPECT_FALSE(is_autocast_enabled(type()));
        EXPECT_EQ(mm(a, a).dtype(), kFloat32);
      }
      EXPECT_EQ(mm(a, a).dtype(), kFloat16);
    }
    EXPECT_EQ(mm(a, a).dtype(), kBFloat16);
  }
  EXPECT_EQ(mm(a, a).dtype(), kFloat32);
  // Autocast of another device type leaves this one alone.
  DeviceType other = type() == kCPU ? kCUDA : kCPU;
  autocast elsewhere(other, kBFloat16);
  EXPECT_EQ(mm(a, a).dtype(), kFloat32);
}

TEST_P(AutocastTest, RefusesDtypesItCannotComputeIn) {
  EXPECT_TRUE(testing::throws_error([&] { autocast ac(type(), kFloat32); }, ErrorKind::DType,
                                    {"[autocast]", "float16 or bfloat16", "float32"}));
  EXPECT_FALSE(is_autocast_enabled(type()));
}

TEST_P(AutocastTest, BackwardGivesFloat32ParametersFloat32Gradients) {
  manual_seed(5);
  auto model = nn::Sequential(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 4));
  model->to(device());
  Tensor x = f32({32, 8});
  Tensor target = randint(4, {32}, {.device = device()});
  Tensor loss;
  {
    autocast ac(type(), kBFloat16);
    Tensor logits = model(x);
    EXPECT_EQ(logits.dtype(), kBFloat16);
    loss = F::cross_entropy(logits, target);
    EXPECT_EQ(loss.dtype(), kFloat32);
  }
  loss.backward();
  std::vector<Tensor> amp_grads;
  for (const Tensor& p : model->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().dtype(), kFloat32);
    amp_grads.push_back(p.grad().clone());
  }
  model->zero_grad();
  F::cross_entropy(model(x), target).backward();
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(tensor_close(amp_grads[i].cpu(), params[i].grad().cpu(), 5e-2, 5e-3)) << i;
}

EMBER_INSTANTIATE_DEVICE_TESTS(AutocastTest);

class GradScalerTest : public testing::DeviceTest {};

TEST_P(GradScalerTest, ScalesUnscalesAndSteps) {
  Tensor p = ones({3}, on(kFloat32)).requires_grad_();
  optim::SGD opt({p}, {.lr = 0.5});
  amp::GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  Tensor loss = (p * tensor({1.0f, 2.0f, 3.0f}).to(device())).sum();
  Tensor scaled = scaler.scale(loss);
  EXPECT_DOUBLE_EQ(scaled.item<double>(), 6.0 * 65536);
  scaled.backward();
  EXPECT_TRUE(tensor_equal(p.grad().cpu(), tensor({65536.0f, 131072.0f, 196608.0f})));
  EXPECT_TRUE(scaler.step(opt));
  EXPECT_TRUE(tensor_equal(p.grad().cpu(), tensor({1.0f, 2.0f, 3.0f})));  // unscaled
  EXPECT_TRUE(tensor_equal(p.detach().cpu(), tensor({0.5f, 0.0f, -0.5f})));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 65536.0);  // one clean step of 2000
}

TEST_P(GradScalerTest, SkipsStepsWithInfOrNaNAndBacksOff) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    Tensor p = ones({2}, on(kFloat32)).requires_grad_();
    optim::SGD opt({p}, {.lr = 1.0});
    amp::GradScaler scaler({.init_scale = 8.0});
    p.mutable_grad() = tensor({1.0f, bad}).to(device());
    EXPECT_FALSE(scaler.step(opt));
    EXPECT_TRUE(tensor_equal(p.detach().cpu(), ones({2})));  // not stepped
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), 4.0);
  }
}

TEST_P(GradScalerTest, GrowsAfterGrowthIntervalCleanSteps) {
  Tensor p = ones({2}, on(kFloat32)).requires_grad_();
  optim::SGD opt({p}, {.lr = 0.0});
  amp::GradScaler scaler({.init_scale = 2.0, .growth_factor = 3.0, .growth_interval = 3});
  std::vector<double> scales;
  for (int i = 0; i < 7; ++i) {
    p.mutable_grad() = ones({2}, on(kFloat32));
    scaler.step(opt);
    scaler.update();
    scales.push_back(scaler.get_scale());
  }
  EXPECT_EQ(scales, (std::vector<double>{2, 2, 6, 6, 6, 18, 18}));
  nn::StateDict st = scaler.state_dict();
  amp::GradScaler restored;
  restored.load_state_dict(st);
  EXPECT_EQ(restored.get_scale(), 18.0);
  EXPECT_EQ(restored.get_growth_factor(), 3.0);
  EXPECT_EQ(restored.get_growth_interval(), 3);
  // The tracker came back too: two more clean steps grow it (7 steps: 1 after the last growth).
  for (int i = 0; i < 2; ++i) {
    p.mutable_grad() = ones({2}, on(kFloat32));
    restored.step(opt);
    restored.update();
  }
  EXPECT_EQ(restored.get_scale(), 54.0);
}

TEST_P(GradScalerTest, MisuseIsAnErrorNamingTheRule) {
  Tensor p = ones({2}, on(kFloat32)).requires_grad_();
  optim::SGD opt({p}, {.lr = 0.1});
  amp::GradScaler scaler;
  EXPECT_TRUE(testing::throws_error([&] { scaler.update(); }, ErrorKind::Value,
                                    {"No inf checks were recorded"}));
  p.mutable_grad() = ones({2}, on(kFloat32));
  scaler.unscale_(opt);
  EXPECT_TRUE(testing::throws_error([&] { scaler.unscale_(opt); }, ErrorKind::Value,
                                    {"unscale_() has already been called"}));
  scaler.step(opt);
  EXPECT_TRUE(testing::throws_error([&] { scaler.step(opt); }, ErrorKind::Value,
                                    {"step() has already been called"}));
  scaler.update();
  Tensor h = ones({2}, on(kFloat16)).requires_grad_();
  optim::SGD opt16({h}, {.lr = 0.1});
  h.mutable_grad() = ones({2}, on(kFloat16));
  EXPECT_TRUE(testing::throws_error([&] { scaler.unscale_(opt16); }, ErrorKind::DType,
                                    {"unscale FP16 gradients"}));
  // Disabled: a pass-through.
  amp::GradScaler off({.enabled = false});
  Tensor loss = ones({}, on(kFloat32)) * 3;
  EXPECT_TRUE(off.scale(loss).is_same(loss));
  EXPECT_TRUE(off.step(opt));
  EXPECT_EQ(off.get_scale(), 1.0);
  EXPECT_TRUE(off.state_dict().empty());
}

EMBER_INSTANTIATE_DEVICE_TESTS(GradScalerTest);

}  // namespace
}  // namespace ember
