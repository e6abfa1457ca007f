// tests/test_activation_modules.cpp: every activation layer of ember/nn/activations.h gives its
// F:: function's values and prints PyTorch's extra_repr (one table), and PReLU's weight is a
// parameter named as PyTorch's that learns, per channel or shared.
#include <functional>
#include <memory>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;

class ActivationModulesTest : public testing::DeviceTest {};

struct Case {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> f;
  std::string repr;
};

TEST_P(ActivationModulesTest, EachLayerIsItsFunction) {
  const std::vector<Case> cases = {
      {nn::SiLU().ptr(), [](const Tensor& x) { return F::silu(x); }, ""},
      {nn::Mish().ptr(), [](const Tensor& x) { return F::mish(x); }, ""},
      {nn::SELU().ptr(), [](const Tensor& x) { return F::selu(x); }, ""},
      {nn::ReLU6().ptr(), [](const Tensor& x) { return F::relu6(x); }, ""},
      {nn::Hardswish().ptr(), [](const Tensor& x) { return F::hardswish(x); }, ""},
      {nn::Hardsigmoid().ptr(), [](const Tensor& x) { return F::hardsigmoid(x); }, ""},
      {nn::LogSigmoid().ptr(), [](const Tensor& x) { return F::logsigmoid(x); }, ""},
      {nn::Softsign().ptr(), [](const Tensor& x) { return F::softsign(x); }, ""},
      {nn::Tanhshrink().ptr(), [](const Tensor& x) { return F::tanhshrink(x); }, ""},
      {nn::ELU(0.5).ptr(), [](const Tensor& x) { return F::elu(x, 0.5); }, "alpha=0.5"},
      {nn::CELU(2.0).ptr(), [](const Tensor& x) { return F::celu(x, 2.0); }, "alpha=2.0"},
      {nn::Softplus(2.0, 3.0).ptr(), [](const Tensor& x) { return F::softplus(x, 2.0, 3.0); },
       "beta=2.0, threshold=3.0"},
      {nn::Hardtanh(-0.5, 2.0).ptr(), [](const Tensor& x) { return F::hardtanh(x, -0.5, 2.0); },
       "min_val=-0.5, max_val=2.0"},
      {nn::Hardshrink(0.25).ptr(), [](const Tensor& x) { return F::hardshrink(x, 0.25); }, "0.25"},
      {nn::Softshrink(0.25).ptr(), [](const Tensor& x) { return F::softshrink(x, 0.25); }, "0.25"},
      {nn::Threshold(0.1, 20.0).ptr(), [](const Tensor& x) { return F::threshold(x, 0.1, 20.0); },
       "threshold=0.1, value=20.0"},
      {nn::GLU(1).ptr(), [](const Tensor& x) { return F::glu(x, 1); }, "dim=1"},
      {nn::Softmin(1).ptr(), [](const Tensor& x) { return F::softmin(x, 1); }, "dim=1"},
      {nn::LogSoftmax(1).ptr(), [](const Tensor& x) { return log_softmax(x, 1); }, "dim=1"},
  };
  Tensor x = randn({3, 4}, on());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.module->name());
    EXPECT_TRUE(testing::tensor_equal(c.module->forward(x), c.f(x)));
    EXPECT_EQ(c.module->extra_repr(), c.repr);
  }
}

TEST_P(ActivationModulesTest, PReLULearnsItsSlope) {
  nn::PReLU shared;
  EXPECT_EQ(shared->named_parameters().size(), 1u);
  EXPECT_EQ(shared->named_parameters()[0].first, "weight");
  EXPECT_DOUBLE_EQ(shared->weight.item<double>(), 0.25);
  nn::PReLU per_channel(3, 0.1);
  per_channel->to(device());
  Tensor x = tensor({{{-1.0f}, {2.0f}, {-4.0f}}}, on());  // (1, 3, 1)
  Tensor y = per_channel->forward(x);
  EXPECT_TRUE(testing::tensor_equal(y, tensor({{{-0.1f}, {2.0f}, {-0.4f}}}, on())));
  y.sum().backward();
  EXPECT_TRUE(
      testing::tensor_equal(per_channel->weight.grad(), tensor({-1.0f, 0.0f, -4.0f}, on())));
  EXPECT_EQ(per_channel->extra_repr(), "num_parameters=3");
  EXPECT_TRUE(testing::throws_error(
      [&] {
        per_channel->forward(zeros({2, 2}, on()));
      },
      ErrorKind::Shape, {"[prelu] 3 weights"}));
  EXPECT_TRUE(
      testing::throws_error([&] { F::glu(zeros({3}, on())); }, ErrorKind::Shape, {"even size"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(ActivationModulesTest);

}  // namespace
}  // namespace ember
