// tests/test_clip_grad.cpp: nn::utils::clip_grad_norm_ and clip_grad_value_ against PyTorch's
// results on the same gradients (values printed by torch 1.13's torch.nn.utils), the error on a
// non-finite norm, and vector_norm's gradient at zero (0, not NaN, as PyTorch).
#include <cmath>
#include <limits>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;

class ClipGradTest : public testing::DeviceTest {
 protected:
  // Two parameters with gradients [3, 4] and [[1, 2], [2, -1]] (total 2-norm sqrt(35)).
  std::vector<Tensor> params() const {
    Tensor a = zeros({2}, on()).requires_grad_(true), b = zeros({2, 2}, on()).requires_grad_(true);
    a.mutable_grad() = tensor({3.0f, 4.0f}, on());
    b.mutable_grad() = tensor({{1.0f, 2.0f}, {2.0f, -1.0f}}, on());
    return {a, b};
  }
};

TEST_P(ClipGradTest, NormScalesAllGradientsTogether) {
  std::vector<Tensor> p = params();
  Tensor total = nn::utils::clip_grad_norm_(p, 1.0);
  EXPECT_NEAR(total.item<double>(), 5.916079998016357, 1e-6);
  EXPECT_TRUE(tensor_close(p[0].grad(), tensor({0.5070924758911133f, 0.6761232614517212f}, on())));
  EXPECT_TRUE(tensor_close(p[1].grad(), tensor({{0.1690308153629303f, 0.3380616307258606f},
                                                {0.3380616307258606f, -0.1690308153629303f}},
                                               on())));
}

TEST_P(ClipGradTest, InfinityNormAndNoClippingBelowTheLimit) {
  std::vector<Tensor> p = params();
  Tensor total = nn::utils::clip_grad_norm_(p, 2.0, std::numeric_limits<double>::infinity());
  EXPECT_NEAR(total.item<double>(), 4.0, 1e-6);
  EXPECT_TRUE(tensor_close(p[0].grad(), tensor({1.4999996423721313f, 1.9999995231628418f}, on())));
  std::vector<Tensor> q = params();
  EXPECT_NEAR(nn::utils::clip_grad_norm_(q, 100.0).item<double>(), 5.916079998016357, 1e-6);
  EXPECT_TRUE(testing::tensor_equal(q[0].grad(), tensor({3.0f, 4.0f}, on())));
  // No gradients at all: a zero norm, nothing to do.
  EXPECT_EQ(nn::utils::clip_grad_norm_({zeros({2}, on())}, 1.0).item<double>(), 0.0);
}

TEST_P(ClipGradTest, NonFiniteNormIsAnErrorWhenAsked) {
  std::vector<Tensor> p = params();
  p[0].mutable_grad() = tensor({std::nanf(""), 1.0f}, on());
  EXPECT_TRUE(testing::throws_error([&] { nn::utils::clip_grad_norm_(p, 1.0, 2.0, true); },
                                    ErrorKind::Value,
                                    {"[clip_grad_norm_]", "non-finite", "error_if_nonfinite"}));
  EXPECT_TRUE(testing::tensor_equal(p[1].grad(), params()[1].grad()));  // left as it was
}

TEST_P(ClipGradTest, ValueClampsEachElement) {
  std::vector<Tensor> p = params();
  nn::utils::clip_grad_value_(p, 3.5);
  EXPECT_TRUE(testing::tensor_equal(p[0].grad(), tensor({3.0f, 3.5f}, on())));
  EXPECT_TRUE(testing::tensor_equal(p[1].grad(), tensor({{1.0f, 2.0f}, {2.0f, -1.0f}}, on())));
}

TEST_P(ClipGradTest, VectorNormGradientAtZeroIsZero) {
  for (double ord : {2.0, 3.0}) {
    Tensor x = zeros({3}, on()).requires_grad_(true);
    linalg::vector_norm(x, ord).backward();
    EXPECT_TRUE(testing::tensor_equal(x.grad(), zeros({3}, on()))) << "ord " << ord;
  }
}

EMBER_INSTANTIATE_DEVICE_TESTS(ClipGradTest);

}  // namespace
}  // namespace ember
