// tests/test_half.cpp: the 16-bit floating types -- every float16 value to float32 and back, a
// sweep of float32 values to bfloat16 and float16 bit-exact with PyTorch's conversions
// (tests/reference/half_conversions.txt), NaN and infinity rules, numeric_limits, and tensors of
// both dtypes: creation, to(dtype), element-wise ops computed in float32, reductions, printing.
#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;

using testing::tensor_close;
using testing::tensor_equal;

// float16's value by its definition: (-1)^s * 2^(e-15) * 1.m, subnormals 2^-14 * 0.m.
double half_value(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  if (e == 0x1f) v = m ? std::nan("") : std::numeric_limits<double>::infinity();
  return s ? -v : v;
}

TEST(Half, EveryFloat16ValueConvertsExactlyAndBack) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = Half::from_bits(static_cast<uint16_t>(h));
    const double expected = half_value(static_cast<uint16_t>(h));
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
    ASSERT_EQ(Half(f).x, h) << std::hex << h;
  }
}

TEST(Half, EveryBFloat16ValueConvertsExactlyAndBack) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = BFloat16::from_bits(static_cast<uint16_t>(b));
    ASSERT_EQ(std::bit_cast<uint32_t>(f), b << 16) << std::hex << b;
    if (!std::isnan(f)) {
      ASSERT_EQ(BFloat16(f).x, b) << std::hex << b;
    }
  }
}

TEST(Half, Float32ConversionsMatchPyTorchBitForBit) {
  std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/half_conversions.txt");
  ASSERT_TRUE(in) << "cannot read tests/reference/half_conversions.txt";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    uint32_t f = 0, bf = 0, hf = 0;
    std::istringstream(line) >> std::hex >> f >> bf >> hf;
    const float v = std::bit_cast<float>(f);
    ASSERT_EQ(BFloat16(v).x, bf) << "bfloat16 of float32 bits " << std::hex << f;
    ASSERT_EQ(Half(v).x, hf) << "float16 of float32 bits " << std::hex << f;
    ++checked;
  }
  EXPECT_GT(checked, 3000);
}

TEST(Half, NaNInfinityAndRoundingRules) {
  // NaN: bfloat16 0x7fc0 (c10::BFloat16's rule), float16 a quiet NaN with the sign.
  EXPECT_EQ(BFloat16(std::nanf("")).x, 0x7fc0);
  EXPECT_EQ(BFloat16(-std::nanf("")).x, 0x7fc0);
  EXPECT_EQ(Half(std::nanf("")).x, 0x7e00);
  EXPECT_EQ(Half(-std::nanf("")).x, 0xfe00);
  EXPECT_EQ(Half(65504.0f).x, 0x7bff);  // the largest float16
  EXPECT_EQ(Half(65519.0f).x, 0x7bff);  // below the midpoint to 65536: rounds down
  EXPECT_EQ(Half(65520.0f).x, 0x7c00);  // the midpoint, ties to even: infinity
  EXPECT_EQ(Half(-1e9f).x, 0xfc00);
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).x, 0x0001);  // the smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).x, 0x0000);  // half of it: a tie, to even (zero)
  EXPECT_EQ(Half(std::ldexp(1.5f, -25)).x, 0x0001);
  EXPECT_EQ(BFloat16(1.00390625f).x, 0x3f80);  // 1 + 2^-8: a tie, to even (1.0)
  EXPECT_EQ(BFloat16(1.01171875f).x, 0x3f82);  // 1 + 3 * 2^-8: a tie, to even (1 + 2^-6)
  EXPECT_EQ(BFloat16(3.0e38f).x, 0x7f62);
  EXPECT_EQ(BFloat16(3.4e38f).x, 0x7f80);  // rounds past the largest finite: infinity
}

TEST(Half, NumericLimits) {
  EXPECT_EQ(float(std::numeric_limits<Half>::max()), 65504.0f);
  EXPECT_EQ(float(std::numeric_limits<Half>::lowest()), -65504.0f);
  EXPECT_EQ(float(std::numeric_limits<Half>::min()), std::ldexp(1.0f, -14));
  EXPECT_EQ(float(std::numeric_limits<Half>::epsilon()), std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isinf(float(std::numeric_limits<Half>::infinity())));
  EXPECT_TRUE(std::isnan(float(std::numeric_limits<Half>::quiet_NaN())));
  EXPECT_EQ(float(std::numeric_limits<BFloat16>::max()), 3.3895313892515355e38f);
  EXPECT_EQ(float(std::numeric_limits<BFloat16>::min()), std::ldexp(1.0f, -126));
  EXPECT_EQ(float(std::numeric_limits<BFloat16>::epsilon()), std::ldexp(1.0f, -7));
  EXPECT_TRUE(std::isnan(float(std::numeric_limits<BFloat16>::quiet_NaN())));
}

TEST(Half, DTypeFacts) {
  EXPECT_EQ(element_size(kFloat16), 2u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_TRUE(is_floating_point(kBFloat16) && is_floating_point(kHalf));
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(kFloat16), "float16");
  EXPECT_EQ(dtype_from_name("half"), kFloat16);
  EXPECT_EQ(dtype_of<BFloat16>(), kBFloat16);
  EXPECT_EQ(dtype_of<Half>(), kFloat16);
  static_assert(std::is_same_v<opmath_t<Half>, float> && std::is_same_v<opmath_t<BFloat16>, float>);
  static_assert(std::is_same_v<opmath_t<double>, double> &&
                std::is_same_v<opmath_t<int32_t>, int32_t>);
  static_assert(promote_types(kBFloat16, kFloat16) == kFloat32);
}

class HalfTensorTest : public ::testing::TestWithParam<std::tuple<Device, DType>> {
 protected:
  void SetUp() override {
    if (!testing::device_present(device())) GTEST_SKIP() << device() << " is not present";
  }
  Device device() const { return std::get<0>(GetParam()); }
  DType dtype() const { return std::get<1>(GetParam()); }
  TensorOptions on() const { return {.dtype = dtype(), .device = device()}; }
  // PyTorch's default tolerances for the dtype (torch.testing.assert_close).
  double rtol() const { return dtype() == kBFloat16 ? 1.6e-2 : 1e-3; }
  double atol() const { return 1e-5; }
};

TEST_P(HalfTensorTest, CreationAndConversionsRoundAsPyTorch) {
  Tensor x = tensor({1.0, 0.1, -2.5, 65504.0, 1e-7}, {.dtype = kFloat32}).to(device());
  Tensor h = x.to(dtype());
  EXPECT_EQ(h.dtype(), dtype());
  EXPECT_EQ(h.element_size(), 2u);
  // Back to float32: each value is the float32 input rounded to the 16-bit type.
  std::vector<float> in = x.cpu().to_vector<float>(),
                     back = h.to(kFloat32).cpu().to_vector<float>();
  for (size_t i = 0; i < in.size(); ++i) {
    float expected = dtype() == kBFloat16 ? float(BFloat16(in[i])) : float(Half(in[i]));
    EXPECT_EQ(back[i], expected) << in[i];
  }
  EXPECT_TRUE(tensor_equal(ones({2, 2}, on()).to(kFloat64), ones({2, 2}, {.dtype = kFloat64})));
  EXPECT_TRUE(tensor_equal(full({3}, 0.5, on()).to(kFloat32), full({3}, 0.5f)));
  EXPECT_TRUE(tensor_equal(arange(4, on()).to(kInt64), arange(4, {.dtype = kInt64})));
  EXPECT_TRUE(
      tensor_equal(tensor({-1.7, 2.9}, on()).to(kInt32), tensor({-1, 2}, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(tensor({0.0, 0.5}, on()).to(kBool), tensor({false, true})));
}

TEST_P(HalfTensorTest, ElementwiseOpsComputeInFloat32AndStoreInHalf) {
  Tensor a32 = tensor({0.5, -1.25, 3.0, 100.0}, {.dtype = kFloat32});
  Tensor b32 = tensor({2.0, 0.75, -0.5, 0.01}, {.dtype = kFloat32});
  Tensor a = a32.to(device(), dtype()), b = b32.to(device(), dtype());
  // Each result is the float32 result of the 16-bit inputs, rounded once to the 16-bit type.
  auto expect = [&](const Tensor& got, const Tensor& want32) {
    EXPECT_EQ(got.dtype(), dtype());
    EXPECT_TRUE(tensor_equal(got.cpu(), want32.to(dtype())));
  };
  Tensor ar = a.cpu().to(kFloat32), br = b.cpu().to(kFloat32);
  expect(a + b, ar + br);
  expect(a * b, ar * br);
  expect(a / b, ar / br);
  expect(exp(a * 0.01), exp(ar * 0.01f));
  expect(tanh(a), tanh(ar));
  expect(sigmoid(b), sigmoid(br));
  expect(relu(a), relu(ar));
  EXPECT_TRUE(tensor_equal((a > b).cpu(), ar > br));
  // Mixed with float32 the result is float32; with a Python-style float scalar it stays 16-bit.
  EXPECT_EQ((a + b32.to(device())).dtype(), kFloat32);
  EXPECT_EQ((a * 2.5).dtype(), dtype());
  EXPECT_EQ((a + ones({4}, {.dtype = kInt64, .device = device()})).dtype(), dtype());
  DType other = dtype() == kBFloat16 ? kFloat16 : kBFloat16;
  EXPECT_EQ((a + b.to(other)).dtype(), kFloat32);
}

TEST_P(HalfTensorTest, ReductionsAccumulateInFloat) {
  // 4096 ones: a 16-bit accumulator would stop at 256 (bfloat16) or 2048 (float16).
  Tensor x = ones({4096}, on());
  EXPECT_EQ(x.sum().dtype(), dtype());
  EXPECT_EQ(x.sum().item<double>(), 4096.0);
  EXPECT_EQ(x.mean().item<double>(), 1.0);
  Tensor y = tensor({1.5, -3.0, 0.5, 2.25}, on()).reshape({2, 2});
  EXPECT_TRUE(tensor_equal(y.amax({1}).cpu(), tensor({1.5, 2.25}, {.dtype = dtype()})));
  EXPECT_TRUE(tensor_equal(y.argmin(1).cpu(), tensor({1, 0}, {.dtype = kInt64})));
  Tensor r = randn({64, 33}, {.dtype = kFloat32});
  EXPECT_TRUE(tensor_close(r.to(device(), dtype()).sum({0}).cpu(),
                           r.to(dtype()).to(kFloat32).sum({0}), rtol(), 1e-2));
}

// Asks for the widening bfloat16 GEMM (one product at a time, as float32 adds them) for a scope.
struct WideningBf16Matmul {
  WideningBf16Matmul() { set_bf16_matmul_reduced_precision_reduction(false); }
  ~WideningBf16Matmul() { set_bf16_matmul_reduced_precision_reduction(true); }
};

TEST_P(HalfTensorTest, MatmulSoftmaxAndConvComputeInFloat32) {
  WideningBf16Matmul exact;
  Tensor a = randn({33, 70}).to(device(), dtype()), b = randn({70, 41}).to(device(), dtype());
  // The product of the 16-bit values in float32, rounded once.
  Tensor want = mm(a.to(kFloat32), b.to(kFloat32)).to(dtype());
  EXPECT_TRUE(tensor_equal(mm(a, b).cpu(), want.cpu()));
  EXPECT_TRUE(tensor_equal(matmul(a, b).cpu(), want.cpu()));
  Tensor a3 = a.reshape({3, 11, 70}), w = b.t().contiguous();
  EXPECT_TRUE(tensor_equal(F::linear(a3, w).cpu(),
                           matmul(a3.to(kFloat32), b.to(kFloat32)).to(dtype()).cpu()));
  Tensor s = softmax(a, 1);
  EXPECT_EQ(s.dtype(), dtype());
  EXPECT_TRUE(tensor_equal(s.cpu(), softmax(a.to(kFloat32), 1).to(dtype()).cpu()));
  Tensor img = randn({2, 3, 8, 8}).to(device(), dtype()),
         k = randn({4, 3, 3, 3}).to(device(), dtype());
  Tensor c = F::conv2d(img, k);
  EXPECT_EQ(c.dtype(), dtype());
  EXPECT_TRUE(tensor_equal(c.cpu(), F::conv2d(img.to(kFloat32), k.to(kFloat32)).to(dtype()).cpu()));
  EXPECT_EQ(F::max_pool2d(img, {2, 2}).dtype(), dtype());
}

// By default a CPU with bfloat16 dot products (EMBER_CPU_ISA amx, avx512_bf16) adds the products
// of bfloat16 operands in pairs: the result, still accumulated in float32 and rounded once, is
// within a bfloat16 rounding of the widening path's, for mm, bmm and linear alike.
TEST_P(HalfTensorTest, MatmulOnBFloat16DotProductsIsCloseToTheWideningPath) {
  EXPECT_TRUE(get_bf16_matmul_reduced_precision_reduction());
  Tensor a = randn({3, 70, 300}).to(device(), dtype()), b = randn({300, 90}).to(device(), dtype());
  Tensor w = b.t().contiguous();
  std::vector<Tensor> fast = {matmul(a, b), F::linear(a, w), bmm(a, b.expand({3, 300, 90}))};
  std::vector<Tensor> exact;
  {
    WideningBf16Matmul widening;
    exact = {matmul(a, b), F::linear(a, w), bmm(a, b.expand({3, 300, 90}))};
  }
  for (size_t i = 0; i < fast.size(); ++i)
    EXPECT_TRUE(tensor_close(fast[i].cpu().to(kFloat32), exact[i].cpu().to(kFloat32), 8e-3, 1e-2))
        << i;
}

// A Linear without bias large enough for the GEMM (AMX or AVX512-BF16 for bfloat16 where the CPU
// has them, also in the backward's two products): gradients within 16-bit precision of float32's.
TEST_P(HalfTensorTest, LinearGradientsThroughTheGemm) {
  Tensor x = randn({40, 300}).to(device(), dtype()).requires_grad_();
  Tensor w = (randn({90, 300}) * 0.05).to(device(), dtype()).requires_grad_();
  Tensor g = randn({40, 90}).to(device(), dtype());
  (F::linear(x, w) * g).sum().backward();
  Tensor x32 = x.detach().to(kFloat32).requires_grad_();
  Tensor w32 = w.detach().to(kFloat32).requires_grad_();
  (F::linear(x32, w32) * g.to(kFloat32)).sum().backward();
  EXPECT_EQ(x.grad().dtype(), dtype());
  EXPECT_TRUE(tensor_close(x.grad().cpu().to(kFloat32), x32.grad().cpu(), 4 * rtol(), 2e-2));
  EXPECT_TRUE(tensor_close(w.grad().cpu().to(kFloat32), w32.grad().cpu(), 4 * rtol(), 1e-1));
}

TEST_P(HalfTensorTest, GradientsFlowInTheParameterDtype) {
  Tensor a = randn({5, 7}).to(device(), dtype()).requires_grad_();
  Tensor b = randn({7, 3}).to(device(), dtype());
  (softmax(mm(a, b), 1) * tanh(a.sum({1}, true))).sum().backward();
  ASSERT_TRUE(a.grad().defined());
  EXPECT_EQ(a.grad().dtype(), dtype());
  // The same graph in float32 from the same values: the 16-bit gradient agrees within its
  // precision.
  Tensor a32 = a.detach().to(kFloat32).requires_grad_();
  (softmax(mm(a32, b.to(kFloat32)), 1) * tanh(a32.sum({1}, true))).sum().backward();
  EXPECT_TRUE(tensor_close(a.grad().cpu(), a32.grad().cpu(), 4 * rtol(), 2e-2));
}

TEST_P(HalfTensorTest, RandomFactoriesDrawInFloat32AndRound) {
  manual_seed(7);
  Tensor r = randn({4096}, on());
  EXPECT_EQ(r.dtype(), dtype());
  manual_seed(7);
  Tensor r32 = randn({4096}, {.device = device()});
  EXPECT_TRUE(tensor_equal(r.cpu(), r32.to(dtype()).cpu()));
  Tensor u = rand({1000}, on());
  EXPECT_GE(u.amin({0}).item<double>(), 0.0);
  EXPECT_LE(u.amax({0}).item<double>(), 1.0);
}

TEST_P(HalfTensorTest, AdamStepsHalfParametersInFloat32) {
  manual_seed(3);
  Tensor p0 = randn({64}).to(dtype());
  // Gradients of at least 0.5 in magnitude: Adam's state is kept in the parameter's dtype (as
  // PyTorch keeps it), and float16 would flush exp_avg_sq = 0.001 * g^2 of tiny gradients to 0.
  Tensor g = (sign(randn({64})) * (rand({64}) + 0.5)).to(dtype());
  Tensor p = p0.to(device(), dtype(), false, true).requires_grad_();
  Tensor p32 = p0.to(kFloat32).to(device()).requires_grad_();
  optim::Adam opt({p}, {.lr = 0.01});
  optim::Adam opt32({p32}, {.lr = 0.01});
  for (int step = 0; step < 3; ++step) {
    p.mutable_grad() = g.to(device());
    p32.mutable_grad() = g.to(kFloat32).to(device());
    opt.step();
    opt32.step();
  }
  EXPECT_EQ(p.dtype(), dtype());
  EXPECT_FALSE(tensor_equal(p.cpu(), p0));  // it moved
  // Each step is the float32 step of the 16-bit values, rounded: close to the float32 run.
  EXPECT_TRUE(tensor_close(p.cpu().to(kFloat32), p32.detach().cpu(), rtol(), 1e-2));
}

TEST_P(HalfTensorTest, Float32OptimizerStateOnRequest) {
  // Tiny gradients: 0.001 * g^2 is below float16's smallest subnormal, so float16 state would
  // hold exp_avg_sq = 0; float32 state keeps the float32 run's step.
  manual_seed(4);
  Tensor p0 = randn({32}).to(dtype());
  Tensor g = (rand({32}) + 1) * 1e-5;
  Tensor p = p0.to(device(), dtype(), false, true).requires_grad_();
  Tensor p32 = p0.to(kFloat32).to(device()).requires_grad_();
  optim::Adam opt({p}, {.lr = 0.01, .state_dtype = kFloat32});
  optim::Adam opt32({p32}, {.lr = 0.01});
  for (int step = 0; step < 3; ++step) {
    p.mutable_grad() = g.to(device(), dtype());
    p32.mutable_grad() = g.to(device(), dtype()).to(kFloat32);
    opt.step();
    opt32.step();
  }
  for (const auto& [name, t] : opt.state_dict()) {
    if (name.find("exp_avg") != std::string::npos) {
      EXPECT_EQ(t.dtype(), kFloat32) << name;
    }
  }
  EXPECT_EQ(p.dtype(), dtype());
  EXPECT_TRUE(tensor_close(p.cpu().to(kFloat32), p32.detach().cpu(), rtol(), 1e-2));
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9, .state_dtype = kFloat32});
  p.mutable_grad() = g.to(device(), dtype());
  sgd.step();
  for (const auto& [name, t] : sgd.state_dict()) {
    if (name.find("momentum_buffer") != std::string::npos) {
      EXPECT_EQ(t.dtype(), kFloat32);
    }
  }
  // Other dtypes for the state of other parameters are refused.
  Tensor q = ones({2}, {.device = device()}).requires_grad_();
  q.mutable_grad() = ones({2}, {.device = device()});
  optim::Adam bad({q}, {.state_dtype = kFloat64});
  EXPECT_TRUE(testing::throws_error([&] { bad.step(); }, ErrorKind::DType,
                                    {"[Adam] state_dtype float64 for a float32 parameter"}));
}

TEST_P(HalfTensorTest, PrintsAsPyTorch) {
  std::ostringstream os;
  os << tensor({1.5, 2.25}, {.dtype = dtype()});
  EXPECT_EQ(os.str(),
            std::string("tensor([1.5000, 2.2500], dtype=torch.") + dtype_name(dtype()) + ")");
}

INSTANTIATE_TEST_SUITE_P(Devices, HalfTensorTest,
                         ::testing::Combine(::testing::Values(Device("cpu"), Device("cuda")),
                                            ::testing::Values(kBFloat16, kFloat16)),
                         [](const ::testing::TestParamInfo<std::tuple<Device, DType>>& info) {
                           return std::string(dtype_name(std::get<1>(info.param))) + "_" +
                                  device_type_name(std::get<0>(info.param).type());
                         });

}  // namespace
}  // namespace ember
