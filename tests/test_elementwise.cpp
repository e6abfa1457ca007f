// tests/test_elementwise.cpp: the semantics of the element-wise ops of ops.h that the op table
// (tests/op_table, run by test_op_table.cpp: values against references, broadcasting, dtypes,
// non-contiguous, 0-dim and empty inputs) does not check -- alpha, true division, integer
// wraparound, scalars on either side and mixed devices, promotion between dtypes, special values
// (NaN, infinities, saturation), exact bits for any layout, clamp, where and masked_fill forms,
// the operators and their in-place (compound assignment) forms, and the errors PyTorch raises.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Expected values as float64 (for tensor_close, which does not compare dtypes).
Tensor f64(const std::vector<double>& v, std::optional<Shape> shape = std::nullopt) {
  return from_vector<double>(v, shape);
}

class ElementwiseTest : public testing::DeviceTest {};

// --- arithmetic

TEST_P(ElementwiseTest, AlphaScalesTheSecondOperand) {
  // torch.add(a, b, alpha=k) is a + k * b; torch.sub(a, b, alpha=k) is a - k * b.
  Tensor a = tensor({1.0, 2.0, 3.0}, on()), b = tensor({10.0, 20.0, 30.0}, on());
  EXPECT_TRUE(tensor_equal(add(a, b, 2), tensor({21.0, 42.0, 63.0})));
  EXPECT_TRUE(tensor_equal(add(a, b, 0.5), tensor({6.0, 12.0, 18.0})));
  EXPECT_TRUE(tensor_equal(sub(a, b, 0.5), tensor({-4.0, -8.0, -12.0})));
  EXPECT_TRUE(tensor_equal(a.sub(b, -1), tensor({11.0, 22.0, 33.0})));
  EXPECT_TRUE(tensor_equal(add(a, b, 0), a));
  Tensor i = tensor({1, 2}, on()), j = tensor({3, 4}, on());
  EXPECT_TRUE(tensor_equal(add(i, j, 3), tensor({10, 14})));
  EXPECT_TRUE(tensor_equal(sub(i, j, 2), tensor({-5, -6})));
  // In place with alpha.
  Tensor c = a.clone();
  c.add_(b, -2);
  EXPECT_TRUE(tensor_equal(c, tensor({-19.0, -38.0, -57.0})));
  c.sub_(b, 0.1);
  EXPECT_TRUE(tensor_close(c, f64({-20.0, -40.0, -60.0})));
}

TEST_P(ElementwiseTest, TrueDivisionOfIntegersGivesFloat32) {
  // torch.div performs true division: int / int is float (default dtype), x / 0 is inf, 0 / 0 NaN.
  Tensor a = tensor({1, 2, 3, -1, 0}, on()), b = tensor({2, 2, 2, 0, 0}, on());
  EXPECT_TRUE(tensor_equal(div(a, b), tensor({0.5, 1.0, 1.5, -kInf, kNaN})));
  EXPECT_TRUE(tensor_equal(tensor({7}, on(kInt32)) / 2, tensor({3.5})));
  EXPECT_TRUE(tensor_equal(1 / tensor({4, 8}, on(kUInt8)), tensor({0.25, 0.125})));
  EXPECT_TRUE(tensor_equal(tensor({1, 2}, on()) / tensor({2.0}, on(kFloat64)),
                           tensor({0.5, 1.0}, {.dtype = kFloat64})));
}

TEST_P(ElementwiseTest, IntegerArithmeticWrapsAround) {
  // Fixed-width integer arithmetic wraps as in PyTorch (two's complement / modulo 256).
  EXPECT_TRUE(tensor_equal(tensor({250, 5}, on(kUInt8)) + 10, tensor({4, 15}, {.dtype = kUInt8})));
  EXPECT_TRUE(tensor_equal(tensor({2}, on(kUInt8)) - 3, tensor({255}, {.dtype = kUInt8})));
  const int32_t big = std::numeric_limits<int32_t>::max();
  EXPECT_TRUE(tensor_equal(from_vector<int32_t>({big}).to(device()) + 1,
                           from_vector<int32_t>({std::numeric_limits<int32_t>::min()})));
  EXPECT_TRUE(tensor_equal(tensor({16}, on(kUInt8)) * 16, tensor({0}, {.dtype = kUInt8})));
}

TEST_P(ElementwiseTest, BroadcastingColumnWithRow) {
  Tensor col = tensor({{0.0}, {1.0}, {2.0}}, on());      // (3, 1)
  Tensor row = tensor({{0.0, 10.0, 20.0, 30.0}}, on());  // (1, 4)
  Tensor expected =
      tensor({{0.0, 10.0, 20.0, 30.0}, {1.0, 11.0, 21.0, 31.0}, {2.0, 12.0, 22.0, 32.0}});
  EXPECT_TRUE(tensor_equal(col + row, expected));
  EXPECT_TRUE(tensor_equal(row + col, expected));
  EXPECT_TRUE(tensor_equal(
      col * row, tensor({{0.0, 0.0, 0.0, 0.0}, {0.0, 10.0, 20.0, 30.0}, {0.0, 20.0, 40.0, 60.0}})));
  // (4,) against (3, 1): leading dims are added on the left.
  Tensor flat = tensor({0.0, 10.0, 20.0, 30.0}, on());
  EXPECT_TRUE(tensor_equal(
      flat - col,
      tensor({{0.0, 10.0, 20.0, 30.0}, {-1.0, 9.0, 19.0, 29.0}, {-2.0, 8.0, 18.0, 28.0}})));
  // (2, 1, 3) with (4, 1) gives (2, 4, 3).
  Tensor x = ones({2, 1, 3}, on()), y = arange(4, on(kFloat32)).reshape({4, 1});
  Tensor z = x + y;
  EXPECT_EQ(z.sizes(), (Shape{2, 4, 3}));
  EXPECT_EQ(z.index({1, 3, 2}).item<double>(), 4.0);
  EXPECT_EQ(broadcast_shapes({2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
}

TEST_P(ElementwiseTest, ScalarOperandsOnEitherSide) {
  Tensor t = tensor({1.0, 2.0, 4.0}, on());
  EXPECT_TRUE(tensor_equal(t + 1.5, tensor({2.5, 3.5, 5.5})));
  EXPECT_TRUE(tensor_equal(1.5 + t, tensor({2.5, 3.5, 5.5})));
  EXPECT_TRUE(tensor_equal(t - 1, tensor({0.0, 1.0, 3.0})));
  EXPECT_TRUE(tensor_equal(10 - t, tensor({9.0, 8.0, 6.0})));
  EXPECT_TRUE(tensor_equal(t * 3, tensor({3.0, 6.0, 12.0})));
  EXPECT_TRUE(tensor_equal(3 * t, tensor({3.0, 6.0, 12.0})));
  EXPECT_TRUE(tensor_equal(t / 2, tensor({0.5, 1.0, 2.0})));
  EXPECT_TRUE(tensor_equal(8 / t, tensor({8.0, 4.0, 2.0})));
  EXPECT_EQ((t + 1).device(), t.device());
}

TEST_P(ElementwiseTest, ZeroDimOperands) {
  Tensor t = tensor({{1.0, 2.0}, {3.0, 4.0}}, on());
  Tensor s = tensor(2.0, on());
  ASSERT_EQ(s.dim(), 0);
  EXPECT_TRUE(tensor_equal(t * s, tensor({{2.0, 4.0}, {6.0, 8.0}})));
  EXPECT_TRUE(tensor_equal(s - t, tensor({{1.0, 0.0}, {-1.0, -2.0}})));
  Tensor r = s + tensor(0.5, on());
  EXPECT_EQ(r.dim(), 0);
  EXPECT_EQ(r.item<double>(), 2.5);
  Tensor e = exp(tensor(0.0, on()));
  EXPECT_EQ(e.dim(), 0);
  EXPECT_EQ(e.item<double>(), 1.0);
  Tensor c = tensor(3, on()) > 2;
  EXPECT_EQ(c.dim(), 0);
  EXPECT_EQ(c.dtype(), kBool);
  EXPECT_TRUE(c.item<bool>());
  // A 0-dim CPU tensor goes along with a tensor on any device, as in PyTorch.
  Tensor host_scalar = tensor(10.0);
  Tensor moved = t + host_scalar;
  EXPECT_EQ(moved.device(), t.device());
  EXPECT_TRUE(tensor_equal(moved, tensor({{11.0, 12.0}, {13.0, 14.0}})));
}

TEST_P(ElementwiseTest, MixingDevicesNeedsZeroDimOrSameDevice) {
  Tensor t = tensor({1.0, 2.0}, on());
  EXPECT_TRUE(tensor_equal(t * tensor(3.0), tensor({3.0, 6.0})));
  if (device().is_cpu()) {
    EXPECT_TRUE(tensor_equal(t + tensor({1.0, 1.0}), tensor({2.0, 3.0})));
  } else {
    EXPECT_TRUE(throws_error(
        [&] {
          t + tensor({1.0, 1.0});
        },
        ErrorKind::Device, {"Expected all tensors to be on the same device", "cpu", "add"}));
  }
}

TEST_P(ElementwiseTest, NonContiguousInputs) {
  Tensor x = arange(12, on(kFloat32)).reshape({3, 4});
  Tensor xt = x.t();  // (4, 3), strides (1, 4)
  ASSERT_FALSE(xt.is_contiguous());
  Tensor y = arange(12, on(kFloat32)).reshape({4, 3}) * 100;
  EXPECT_TRUE(tensor_equal(xt + y, xt.contiguous() + y));
  // xt[i][j] = 4 j + i and y[i][j] = 100 (3 i + j).
  EXPECT_TRUE(tensor_equal(xt + y, tensor({{0.0, 104.0, 208.0},
                                           {301.0, 405.0, 509.0},
                                           {602.0, 706.0, 810.0},
                                           {903.0, 1007.0, 1111.0}})));
  // Columns 0 and 2 (slice with step 2), both operands strided.
  Tensor cols = x.slice(1, 0, 4, 2);  // [[0, 2], [4, 6], [8, 10]]
  ASSERT_FALSE(cols.is_contiguous());
  EXPECT_TRUE(tensor_equal(cols * cols, tensor({{0.0, 4.0}, {16.0, 36.0}, {64.0, 100.0}})));
  EXPECT_TRUE(tensor_equal(cols - xt.slice(0, 1, 4, 2).t(),
                           tensor({{-1.0, -1.0}, {-1.0, -1.0}, {-1.0, -1.0}})));
  // Unary ops and comparisons read strided inputs too.
  EXPECT_TRUE(tensor_equal(neg(xt), neg(xt.contiguous())));
  EXPECT_TRUE(tensor_close(sqrt(cols), sqrt(cols.contiguous())));
  EXPECT_TRUE(tensor_equal(cols > 5.0, tensor({{false, false}, {false, true}, {true, true}})));
  EXPECT_TRUE(tensor_equal(clamp(xt, 2.0, 9.0), clamp(xt.contiguous(), 2.0, 9.0)));
  // In-place ops on a strided view write through to the base tensor.
  cols += 100;
  EXPECT_TRUE(tensor_equal(
      x, tensor({{100.0, 1.0, 102.0, 3.0}, {104.0, 5.0, 106.0, 7.0}, {108.0, 9.0, 110.0, 11.0}})));
  Tensor z = zeros({2, 3}, on());
  Tensor zt = z.t();
  zt.masked_fill_(tensor({{true, false}, {false, false}, {false, true}}, on()), 7.0);
  EXPECT_TRUE(tensor_equal(z, tensor({{7.0, 0.0, 0.0}, {0.0, 0.0, 7.0}})));
}

TEST_P(ElementwiseTest, EmptyTensors) {
  Tensor e = zeros({0, 3}, on());
  EXPECT_EQ((e + ones({1, 3}, on())).sizes(), (Shape{0, 3}));
  EXPECT_EQ((e * ones({3}, on())).sizes(), (Shape{0, 3}));
  EXPECT_EQ((e + 1).sizes(), (Shape{0, 3}));
  EXPECT_EQ(exp(e).sizes(), (Shape{0, 3}));
  EXPECT_EQ(gelu(e).sizes(), (Shape{0, 3}));
  Tensor c = e < 1.0;
  EXPECT_EQ(c.sizes(), (Shape{0, 3}));
  EXPECT_EQ(c.dtype(), kBool);
  EXPECT_EQ(where(c, e, 2.0).sizes(), (Shape{0, 3}));
  EXPECT_EQ(clamp(e, 0.0).sizes(), (Shape{0, 3}));
  EXPECT_EQ(masked_fill(e, c, 1.0).sizes(), (Shape{0, 3}));
  EXPECT_EQ((zeros({0, 3}, on(kInt32)) + 2.5).dtype(), kFloat32);
  e += 1;
  EXPECT_EQ(e.sizes(), (Shape{0, 3}));
  EXPECT_TRUE(throws_error(
      [&] {
        e + ones({2, 3}, on());
      },
      ErrorKind::Shape, {"[0, 3]", "[2, 3]"}));
}

TEST_P(ElementwiseTest, BadShapesNameTheOpAndBothShapes) {
  Tensor a = ones({2, 3}, on()), b = ones({4}, on());
  using Fn = std::function<Tensor()>;
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"add", [&] { return add(a, b); }},
      {"sub", [&] { return a - b; }},
      {"mul", [&] { return mul(a, b); }},
      {"div", [&] { return a / b; }},
      {"pow", [&] { return pow(a, b); }},
      {"maximum", [&] { return maximum(a, b); }},
      {"minimum", [&] { return minimum(a, b); }},
      {"eq", [&] { return a == b; }},
      {"lt", [&] { return lt(a, b); }},
      {"ge", [&] { return a >= b; }},
      {"logical_and", [&] { return logical_and(a, b); }},
      {"logical_xor", [&] { return logical_xor(a, b); }},
  };
  for (const auto& [name, fn] : cases)
    EXPECT_TRUE(throws_error(fn, ErrorKind::Shape,
                             {"[" + name + "]", "[2, 3]", "[4]",
                              "The size of tensor a (3) must "
                              "match the size of tensor b (4)"}))
        << name;
  EXPECT_TRUE(throws_error(
      [&] {
        where(ones({2, 3}, on(kBool)), a, b);
      },
      ErrorKind::Shape, {"[where]", "[2, 3]", "[4]"}));
  EXPECT_TRUE(throws_error([&] { masked_fill(a, ones({4}, on(kBool)), 0.0); }, ErrorKind::Shape,
                           {"[masked_fill]", "[2, 3]", "[4]"}));
  EXPECT_TRUE(throws_error(
      [] {
        broadcast_shapes({3, 2}, {3});
      },
      ErrorKind::Shape, {"[3, 2]", "[3]"}));
}

TEST_P(ElementwiseTest, BoolSubtractionAndNegationAreErrors) {
  // PyTorch: "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^`
  // or `logical_xor()` operator instead." and the matching message for negation.
  Tensor p = tensor({true, false}, on()), q = tensor({false, false}, on());
  EXPECT_TRUE(
      throws_error([&] { p - q; }, ErrorKind::DType, {"Subtraction", "bool", "logical_xor"}));
  EXPECT_TRUE(throws_error([&] { sub(p, q); }, ErrorKind::DType, {"Subtraction"}));
  EXPECT_TRUE(throws_error([&] { p - true; }, ErrorKind::DType, {"Subtraction"}));
  EXPECT_TRUE(throws_error([&] { p.sub_(q); }, ErrorKind::DType, {"Subtraction"}));
  EXPECT_TRUE(throws_error([&] { -p; }, ErrorKind::DType, {"Negation", "bool", "logical_not"}));
  EXPECT_TRUE(throws_error([&] { neg(p); }, ErrorKind::DType, {"Negation"}));
  // With a non-bool operand the bool one is promoted, so subtraction is fine.
  EXPECT_TRUE(tensor_equal(p - tensor({1, 1}, on()), tensor({0, -1})));
  EXPECT_TRUE(tensor_equal(p - 0.5, tensor({0.5, -0.5})));
  EXPECT_TRUE(tensor_equal(logical_xor(p, q), tensor({true, false})));
}

// --- pow

TEST_P(ElementwiseTest, PowWithTensorExponent) {
  EXPECT_TRUE(tensor_equal(pow(tensor({2.0, 3.0, 4.0}, on()), tensor({3.0, 2.0, 0.5}, on())),
                           tensor({8.0, 9.0, 2.0})));
  // Broadcast exponent, and integers stay integers.
  EXPECT_TRUE(tensor_equal(pow(tensor({{2}, {3}}, on()), tensor({0, 1, 2, 3}, on())),
                           tensor({{1, 2, 4, 8}, {1, 3, 9, 27}})));
  EXPECT_TRUE(tensor_equal(pow(tensor({-2, 5}, on(kInt32)), tensor({3, 2}, on(kInt32))),
                           tensor({-8, 25}, {.dtype = kInt32})));
  // Integer tensor exponents may be negative: 1 and -1 keep magnitude 1, others truncate to 0
  // (aten's powi).
  EXPECT_TRUE(tensor_equal(pow(tensor({2, 1, -1, -1}, on()), tensor({-1, -5, -3, -2}, on())),
                           tensor({0, 1, -1, 1})));
  EXPECT_TRUE(
      tensor_equal(tensor({2.0, 3.0}, on()).pow(tensor({2, 3}, on())), tensor({4.0, 27.0})));
  // A Scalar base: torch.pow(2, t).
  EXPECT_TRUE(tensor_equal(pow(2, tensor({0, 1, 3}, on())), tensor({1, 2, 8})));
  EXPECT_TRUE(
      tensor_equal(pow(2, tensor({0, 1, 3}, on(kInt32))), tensor({1, 2, 8}, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(pow(2.0, tensor({0, 1, 3}, on())), tensor({1.0, 2.0, 8.0})));
  EXPECT_TRUE(tensor_close(pow(2, tensor({0.5, -1.0}, on())), f64({std::sqrt(2.0), 0.5})));
}

TEST_P(ElementwiseTest, PowWithScalarExponent) {
  Tensor x = tensor({1.0, 2.0, 4.0}, on());
  EXPECT_TRUE(tensor_equal(pow(x, 2), tensor({1.0, 4.0, 16.0})));
  EXPECT_TRUE(tensor_equal(x.pow(3), tensor({1.0, 8.0, 64.0})));
  EXPECT_TRUE(tensor_equal(pow(x, 0.5), tensor({1.0, std::sqrt(2.0), 2.0})));
  EXPECT_TRUE(tensor_equal(pow(x, -1), tensor({1.0, 0.5, 0.25})));
  EXPECT_TRUE(tensor_equal(pow(x, 0), tensor({1.0, 1.0, 1.0})));
  EXPECT_TRUE(tensor_equal(pow(x, 1), x));
  EXPECT_TRUE(tensor_close(pow(x, 1.5), f64({1.0, std::pow(2.0, 1.5), 8.0})));
  EXPECT_TRUE(tensor_equal(pow(tensor({0.0, -1.0}, on()), 0.5), tensor({0.0, kNaN})));
  // Integers: an integer exponent keeps the dtype, a float one gives float32.
  Tensor i = tensor({1, 2, 3}, on(kInt32));
  EXPECT_TRUE(tensor_equal(pow(i, 2), tensor({1, 4, 9}, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(pow(tensor({-3, 2}, on()), 3), tensor({-27, 8})));
  EXPECT_TRUE(tensor_close(pow(i, 2.5), f64({1.0, std::pow(2.0, 2.5), std::pow(3.0, 2.5)})));
  EXPECT_EQ(pow(i, 2.5).dtype(), kFloat32);
  EXPECT_TRUE(tensor_equal(pow(tensor({2, 4}, on()), -1.0), tensor({0.5, 0.25})));
  EXPECT_TRUE(tensor_equal(pow(tensor({true, false}, on()), 2), tensor({1, 0})));
  EXPECT_TRUE(tensor_equal(pow(tensor({1.0, 2.0}, on(kFloat64)), 2),
                           tensor({1.0, 4.0}, {.dtype = kFloat64})));
}

TEST_P(ElementwiseTest, IntegerToNegativeScalarPowerIsAnError) {
  // PyTorch: "Integers to negative integer powers are not allowed."
  EXPECT_TRUE(throws_error(
      [&] {
        pow(tensor({2, 3}, on()), -1);
      },
      ErrorKind::Value, {"Integers to negative integer powers are not allowed"}));
  EXPECT_TRUE(throws_error([&] { tensor({2}, on(kUInt8)).pow(-2); }, ErrorKind::Value,
                           {"negative integer powers"}));
  EXPECT_TRUE(throws_error([&] { pow(tensor({true}, on()), -1); }, ErrorKind::Value,
                           {"negative integer powers"}));
}

// --- maximum / minimum

TEST_P(ElementwiseTest, MaximumMinimum) {
  Tensor a = tensor({1.0, 5.0, -2.0}, on()), b = tensor({3.0, 4.0, -2.0}, on());
  EXPECT_TRUE(tensor_equal(maximum(a, b), tensor({3.0, 5.0, -2.0})));
  EXPECT_TRUE(tensor_equal(minimum(a, b), tensor({1.0, 4.0, -2.0})));
  EXPECT_TRUE(tensor_equal(a.maximum(b), maximum(b, a)));
  EXPECT_TRUE(tensor_equal(a.minimum(b), minimum(b, a)));
  // Broadcasting and promotion: int64 with float32 gives float32.
  EXPECT_TRUE(tensor_equal(maximum(tensor({{1}, {5}}, on()), tensor({2.5, 0.5}, on())),
                           tensor({{2.5, 1.0}, {5.0, 5.0}})));
  EXPECT_TRUE(tensor_equal(minimum(tensor({7, -3}, on(kInt32)), tensor(0, on())),
                           tensor({0, -3}, {.dtype = kInt32})));
}

TEST_P(ElementwiseTest, MaximumMinimumPropagateNaN) {
  // torch.maximum / torch.minimum: "If one of the elements being compared is a NaN, then that
  // element is returned."
  Tensor a = tensor({1.0, kNaN, 3.0, kNaN}, on()), b = tensor({kNaN, 2.0, 1.0, kNaN}, on());
  EXPECT_TRUE(tensor_equal(maximum(a, b), tensor({kNaN, kNaN, 3.0, kNaN})));
  EXPECT_TRUE(tensor_equal(minimum(a, b), tensor({kNaN, kNaN, 1.0, kNaN})));
  EXPECT_TRUE(tensor_equal(maximum(tensor({-kInf, kInf}, on()), tensor({kNaN, kNaN}, on())),
                           tensor({kNaN, kNaN})));
  EXPECT_TRUE(std::isnan(maximum(tensor({0.0}, on()), tensor(kNaN, on())).item<double>()));
}

// --- comparisons

TEST_P(ElementwiseTest, ComparisonsComputeInThePromotedDtype) {
  // int tensor vs 2.5 compares as float32: no element equals 2.5, and 2 < 2.5.
  Tensor i = tensor({1, 2, 3}, on());
  EXPECT_TRUE(tensor_equal(i == 2.5, tensor({false, false, false})));
  EXPECT_TRUE(tensor_equal(i < 2.5, tensor({true, true, false})));
  EXPECT_TRUE(tensor_equal(i >= 2, tensor({false, true, true})));
  EXPECT_TRUE(tensor_equal(i != tensor({1.0, 2.5, 3.0}, on()), tensor({false, true, false})));
  EXPECT_TRUE(tensor_equal(tensor({true, false}, on()) == 1, tensor({true, false})));
  // NaN is unequal to everything, itself included.
  Tensor n = tensor({kNaN, 1.0}, on());
  EXPECT_TRUE(tensor_equal(n == n, tensor({false, true})));
  EXPECT_TRUE(tensor_equal(n != n, tensor({true, false})));
  EXPECT_TRUE(tensor_equal(n < kInf, tensor({false, true})));
  EXPECT_TRUE(tensor_equal(n > -kInf, tensor({false, true})));
}

// --- logical

TEST_P(ElementwiseTest, LogicalOps) {
  Tensor p = tensor({true, true, false, false}, on()), q = tensor({true, false, true, false}, on());
  EXPECT_TRUE(tensor_equal(logical_and(p, q), tensor({true, false, false, false})));
  EXPECT_TRUE(tensor_equal(logical_or(p, q), tensor({true, true, true, false})));
  EXPECT_TRUE(tensor_equal(logical_xor(p, q), tensor({false, true, true, false})));
  EXPECT_TRUE(tensor_equal(logical_not(p), tensor({false, false, true, true})));
  EXPECT_TRUE(tensor_equal(p.logical_and(q), logical_and(p, q)));
  EXPECT_TRUE(tensor_equal(p.logical_or(q), logical_or(p, q)));
  EXPECT_TRUE(tensor_equal(p.logical_not(), logical_not(p)));
  // Numbers count as true when nonzero (NaN included); the result is always bool.
  Tensor f = tensor({0.0, 1.5, -2.0, kNaN}, on()), i = tensor({1, 0, 3, 0}, on());
  EXPECT_TRUE(tensor_equal(logical_and(f, i), tensor({false, false, true, false})));
  EXPECT_TRUE(tensor_equal(logical_or(f, i), tensor({true, true, true, true})));
  EXPECT_TRUE(tensor_equal(logical_xor(f, i), tensor({true, true, false, true})));
  EXPECT_TRUE(tensor_equal(logical_not(f), tensor({true, false, false, false})));
  EXPECT_TRUE(tensor_equal(logical_not(tensor({0, 7}, on(kUInt8))), tensor({true, false})));
  // Broadcasting.
  EXPECT_TRUE(tensor_equal(logical_and(p.reshape({4, 1}), tensor({true, false}, on())),
                           tensor({{true, false}, {true, false}, {false, false}, {false, false}})));
}

// --- unary math

TEST_P(ElementwiseTest, UnaryMathSpecialValues) {
  Tensor s = tensor({0.0, -1.0, kInf, -kInf, kNaN}, on());
  EXPECT_TRUE(tensor_equal(log(s), tensor({-kInf, kNaN, kInf, kNaN, kNaN})));
  EXPECT_TRUE(tensor_equal(sqrt(s), tensor({0.0, kNaN, kInf, kNaN, kNaN})));
  EXPECT_TRUE(tensor_equal(rsqrt(s), tensor({kInf, kNaN, 0.0, kNaN, kNaN})));
  EXPECT_TRUE(tensor_equal(relu(s), tensor({0.0, 0.0, kInf, 0.0, kNaN})));
  EXPECT_TRUE(tensor_equal(abs(s), tensor({0.0, 1.0, kInf, kInf, kNaN})));
  Tensor z = tensor({0.0, kInf, -kInf, kNaN}, on());
  EXPECT_TRUE(tensor_equal(exp(z), tensor({1.0, kInf, 0.0, kNaN})));
  EXPECT_TRUE(tensor_equal(sigmoid(z), tensor({0.5, 1.0, 0.0, kNaN})));
  EXPECT_TRUE(tensor_equal(tanh(z), tensor({0.0, 1.0, -1.0, kNaN})));
  // Saturation far from 0 (no overflow into NaN).
  EXPECT_TRUE(tensor_equal(sigmoid(tensor({-200.0, 200.0}, on())), tensor({0.0, 1.0})));
  EXPECT_TRUE(tensor_equal(tanh(tensor({-50.0, 50.0}, on())), tensor({-1.0, 1.0})));
  EXPECT_TRUE(tensor_equal(gelu(tensor({-50.0, 50.0}, on())), tensor({-0.0, 50.0})));
  // Perfect squares give exact roots.
  Tensor p = tensor({0.25, 1.0, 4.0, 100.0}, on());
  EXPECT_TRUE(tensor_equal(sqrt(p), tensor({0.5, 1.0, 2.0, 10.0})));
  EXPECT_TRUE(tensor_equal(rsqrt(p), tensor({2.0, 1.0, 0.5, 0.1})));
}

// float32 exp, log, sigmoid and tanh run a vectorized loop on contiguous runs and the same scalar
// function on other strides (on the CPU): a transposed or strided input gives the same bits.
TEST_P(ElementwiseTest, Float32TranscendentalsSameBitsForAnyLayout) {
  Generator gen(21);
  Tensor x = (rand({67, 45}, on(), &gen) - 0.5) * 60;  // [-30, 30]: the tails of sigmoid and tanh
  Tensor t = x.t().contiguous().t();                   // same values, column-major
  Tensor s = x.unsqueeze(2).expand({67, 45, 2}).contiguous().select(2, 0);  // element stride 2
  Tensor p = x.abs() + 1e-30;
  Tensor pt = p.t().contiguous().t();
  using UnaryFn = Tensor (*)(const Tensor&);
  for (UnaryFn fn : {&exp, &sigmoid, &tanh}) {
    Tensor want = fn(x);
    EXPECT_TRUE(tensor_equal(fn(t), want));
    EXPECT_TRUE(tensor_equal(fn(s), want));
  }
  EXPECT_TRUE(tensor_equal(log(pt), log(p)));
  // and agree with double precision within a few float32 ulps
  Tensor xd = x.to(kFloat64);
  EXPECT_TRUE(tensor_close(exp(x).to(kFloat64), exp(xd), 3e-7, 0));
  EXPECT_TRUE(tensor_close(sigmoid(x).to(kFloat64), sigmoid(xd), 4e-7, 0));
  EXPECT_TRUE(tensor_close(tanh(x).to(kFloat64), tanh(xd), 3e-7, 0));
  EXPECT_TRUE(tensor_close(log(p).to(kFloat64), log(p.to(kFloat64)), 3e-7, 0));
}

TEST_P(ElementwiseTest, UnaryResultDtypes) {
  // Float-valued ops on integers give the default dtype; neg/abs/relu keep integers.
  Tensor i = tensor({-4, 0, 9}, on());
  EXPECT_TRUE(tensor_equal(neg(i), tensor({4, 0, -9})));
  EXPECT_TRUE(tensor_equal(abs(i), tensor({4, 0, 9})));
  EXPECT_TRUE(tensor_equal(relu(i), tensor({0, 0, 9})));
  EXPECT_TRUE(tensor_equal(relu(tensor({-1, 2}, on(kInt32))), tensor({0, 2}, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(sqrt(tensor({4, 9}, on())), tensor({2.0, 3.0})));
  EXPECT_TRUE(tensor_equal(exp(tensor({0}, on(kUInt8))), tensor({1.0})));
  EXPECT_TRUE(tensor_equal(sigmoid(tensor({0}, on(kInt32))), tensor({0.5})));
  EXPECT_TRUE(tensor_equal(log(tensor({true}, on())), tensor({0.0})));
  using UnaryFn = Tensor (*)(const Tensor&);
  for (UnaryFn fn : {&exp, &log, &sqrt, &rsqrt, &sigmoid, &tanh}) {
    EXPECT_EQ(fn(i).dtype(), kFloat32);
    EXPECT_EQ(fn(ones({2}, on(kFloat64))).dtype(), kFloat64);
  }
  EXPECT_EQ(gelu(i).dtype(), kFloat32);
  // -x of uint8 wraps modulo 256, as in PyTorch.
  EXPECT_TRUE(tensor_equal(-tensor({1, 0}, on(kUInt8)), tensor({255, 0}, {.dtype = kUInt8})));
  // float64 keeps its precision (far beyond float32's 6e-8).
  Tensor d = from_vector<double>({1.0, 2.0}).to(device());
  EXPECT_TRUE(tensor_close(exp(d), f64({std::exp(1.0), std::exp(2.0)}), 1e-15, 0));
  EXPECT_TRUE(tensor_close(tanh(d), f64({std::tanh(1.0), std::tanh(2.0)}), 1e-15, 0));
}

TEST_P(ElementwiseTest, GeluBothForms) {
  // gelu(x) = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); the "tanh" form is
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (torch.nn.functional.gelu's docs).
  // The expected values were computed in double precision with those formulas.
  Tensor x = tensor({-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0}, on());
  EXPECT_TRUE(tensor_close(
      gelu(x), f64({-0.00404969409489031, -0.15865525393145707, -0.15426876936299344, 0.0,
                    0.34573123063700656, 0.8413447460685429, 1.9544997361036416})));
  EXPECT_TRUE(tensor_close(
      gelu(x, "tanh"), f64({-0.0036373920817729943, -0.15880800939172324, -0.15428599017485606, 0.0,
                            0.34571400982514394, 0.8411919906082768, 1.954597694087775})));
  EXPECT_TRUE(tensor_equal(x.gelu(), gelu(x, "none")));
  EXPECT_TRUE(tensor_equal(x.gelu("tanh"), gelu(x, "tanh")));
  EXPECT_FALSE(tensor_equal(gelu(x), gelu(x, "tanh")));
  EXPECT_TRUE(throws_error([&] { gelu(x, "erf"); }, ErrorKind::Value, {"approximate", "erf"}));
}

// --- clamp

TEST_P(ElementwiseTest, ClampBounds) {
  Tensor x = tensor({-3.0, -1.0, 0.5, 2.0, 7.0}, on());
  EXPECT_TRUE(tensor_equal(clamp(x, -1.5), tensor({-1.5, -1.0, 0.5, 2.0, 7.0})));
  EXPECT_TRUE(tensor_equal(clamp(x, std::nullopt, 1.0), tensor({-3.0, -1.0, 0.5, 1.0, 1.0})));
  EXPECT_TRUE(tensor_equal(clamp(x, -1, 2), tensor({-1.0, -1.0, 0.5, 2.0, 2.0})));
  EXPECT_TRUE(tensor_equal(x.clamp(0.0, 5.0), tensor({0.0, 0.0, 0.5, 2.0, 5.0})));
  // torch.clamp: "If min is greater than max, all elements are set to max".
  EXPECT_TRUE(tensor_equal(clamp(x, 3.0, 1.0), tensor({1.0, 1.0, 1.0, 1.0, 1.0})));
  // NaN inputs stay NaN; infinities are clamped.
  EXPECT_TRUE(
      tensor_equal(clamp(tensor({kNaN, -kInf, kInf}, on()), -1.0, 1.0), tensor({kNaN, -1.0, 1.0})));
  EXPECT_TRUE(throws_error([&] { clamp(x, std::nullopt, std::nullopt); }, ErrorKind::Value,
                           {"At least one of 'min' or 'max'"}));
}

TEST_P(ElementwiseTest, ClampPromotesWithItsBounds) {
  // clamp's result type is result_type(input, min, max): integer bounds keep an int tensor's
  // dtype, a float bound makes it float32 (torch.clamp(torch.tensor([1, 2, 3]), min=1.5) is
  // tensor([1.5, 2., 3.])).
  Tensor i = tensor({1, 2, 3}, on());
  EXPECT_TRUE(tensor_equal(clamp(i, 2), tensor({2, 2, 3})));
  EXPECT_TRUE(
      tensor_equal(clamp(tensor({1, 5}, on(kInt32)), 0, 4), tensor({1, 4}, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(clamp(i, 1.5), tensor({1.5, 2.0, 3.0})));
  EXPECT_TRUE(tensor_equal(clamp(i, std::nullopt, 2.5), tensor({1.0, 2.0, 2.5})));
  EXPECT_TRUE(tensor_equal(clamp(i, 0, 2.5), tensor({1.0, 2.0, 2.5})));
  EXPECT_TRUE(
      tensor_equal(clamp(tensor({0.5}, on(kFloat64)), 1.0), tensor({1.0}, {.dtype = kFloat64})));
}

TEST_P(ElementwiseTest, ClampInPlace) {
  Tensor x = tensor({-3.0, 0.5, 7.0}, on());
  void* data = x.impl().data();
  Tensor& r = x.clamp_(-1.0, 1.0);
  EXPECT_EQ(&r, &x);
  EXPECT_EQ(x.impl().data(), data);
  EXPECT_TRUE(tensor_equal(x, tensor({-1.0, 0.5, 1.0})));
  Tensor i = tensor({-3, 5}, on());
  i.clamp_(0);
  EXPECT_TRUE(tensor_equal(i, tensor({0, 5})));
  // A float bound would make the result float32, which can't be stored in an int64 tensor.
  EXPECT_TRUE(throws_error([&] { i.clamp_(0.5); }, ErrorKind::DType, {"can't be cast", "int64"}));
  EXPECT_TRUE(tensor_equal(i, tensor({0, 5})));
}

// --- where and masked_fill

TEST_P(ElementwiseTest, WhereSelectsAndBroadcasts) {
  Tensor cond = tensor({true, false, true}, on());
  Tensor a = tensor({1.0, 2.0, 3.0}, on()), b = tensor({10.0, 20.0, 30.0}, on());
  EXPECT_TRUE(tensor_equal(where(cond, a, b), tensor({1.0, 20.0, 3.0})));
  // cond (3, 1), a (1, 2), b 0-dim -> (3, 2).
  Tensor c2 = tensor({{true}, {false}, {true}}, on());
  EXPECT_TRUE(tensor_equal(where(c2, tensor({{1.0, 2.0}}, on()), tensor(0.0, on())),
                           tensor({{1.0, 2.0}, {0.0, 0.0}, {1.0, 2.0}})));
  // Scalar forms.
  EXPECT_TRUE(tensor_equal(where(cond, -1.0, b), tensor({-1.0, 20.0, -1.0})));
  EXPECT_TRUE(tensor_equal(where(cond, a, 0.0), tensor({1.0, 0.0, 3.0})));
  // The usual pattern: where(x > 0, x, 0).
  Tensor x = tensor({-1.0, 2.0}, on());
  EXPECT_TRUE(tensor_equal(where(x > 0, x, 0), tensor({0.0, 2.0})));
}

TEST_P(ElementwiseTest, WherePromotesItsValues) {
  Tensor cond = tensor({true, false}, on());
  Tensor i = tensor({1, 2}, on());
  // torch.where(cond, 2.5, int_tensor) is float32; with an int Scalar it stays int64.
  EXPECT_TRUE(tensor_equal(where(cond, 2.5, i), tensor({2.5, 2.0})));
  EXPECT_TRUE(tensor_equal(where(cond, i, 0), tensor({1, 0})));
  EXPECT_TRUE(tensor_equal(where(cond, tensor({1.5, 1.5}, on()), i), tensor({1.5, 2.0})));
  EXPECT_TRUE(tensor_equal(where(cond, tensor({1, 1}, on(kInt32)), tensor({7, 7}, on(kUInt8))),
                           tensor({1, 7}, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(where(cond, i, tensor({0.5, 0.5}, on(kFloat64))),
                           tensor({1.0, 0.5}, {.dtype = kFloat64})));
  EXPECT_TRUE(
      throws_error([&] { where(i, i, i); }, ErrorKind::DType, {"[where]", "bool", "int64"}));
}

TEST_P(ElementwiseTest, MaskedFillOutOfPlace) {
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on());
  Tensor mask = tensor({{true, false, true}, {false, false, true}}, on());
  Tensor y = masked_fill(x, mask, -1.0);
  EXPECT_TRUE(tensor_equal(y, tensor({{-1.0, 2.0, -1.0}, {4.0, 5.0, -1.0}})));
  EXPECT_TRUE(tensor_equal(x, tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})));  // unchanged
  EXPECT_TRUE(tensor_equal(x.masked_fill(mask, 0), tensor({{0.0, 2.0, 0.0}, {4.0, 5.0, 0.0}})));
  // A (1, 3) mask broadcasts over rows; the attention-style -inf fill.
  Tensor row = tensor({{false, true, false}}, on());
  EXPECT_TRUE(
      tensor_equal(masked_fill(x, row, -kInf), tensor({{1.0, -kInf, 3.0}, {4.0, -kInf, 6.0}})));
  // Out of place, a larger mask broadcasts the input (aten's expand_outplace).
  Tensor v = tensor({1, 2, 3}, on());
  EXPECT_TRUE(tensor_equal(masked_fill(v, mask, 0), tensor({{0, 2, 0}, {1, 2, 0}})));
  // The value is cast to the tensor's dtype.
  EXPECT_TRUE(tensor_equal(masked_fill(v, v > 1, 9), tensor({1, 9, 9})));
  EXPECT_TRUE(throws_error(
      [&] {
        masked_fill(x, tensor({{1, 0, 1}}, on()), 0.0);
      },
      ErrorKind::DType, {"bool", "int64"}));
}

TEST_P(ElementwiseTest, MaskedFillInPlace) {
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on());
  Tensor alias = x;
  void* data = x.impl().data();
  Tensor& r = x.masked_fill_(tensor({true, false, false}, on()), 0.5);
  EXPECT_EQ(&r, &x);
  EXPECT_EQ(x.impl().data(), data);
  EXPECT_TRUE(tensor_equal(alias, tensor({{0.5, 2.0, 3.0}, {0.5, 5.0, 6.0}})));
  // The mask must broadcast to the tensor's own shape.
  EXPECT_TRUE(throws_error(
      [&] {
        tensor({1.0, 2.0, 3.0}, on()).masked_fill_(ones({2, 3}, on(kBool)), 0.0);
      },
      ErrorKind::Shape, {"masked_fill_", "[2, 3]", "[3]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.masked_fill_(ones({2, 3}, on()), 0.0);
      },
      ErrorKind::DType, {"masked_fill_", "bool", "float32"}));
}

// --- operators and in-place forms

TEST_P(ElementwiseTest, OperatorsMatchTheNamedOps) {
  Tensor a = tensor({1.0, -2.0, 3.0}, on()), b = tensor({2.0, -2.0, 1.0}, on());
  EXPECT_TRUE(tensor_equal(a + b, add(a, b)));
  EXPECT_TRUE(tensor_equal(a - b, sub(a, b)));
  EXPECT_TRUE(tensor_equal(a * b, mul(a, b)));
  EXPECT_TRUE(tensor_equal(a / b, div(a, b)));
  EXPECT_TRUE(tensor_equal(-a, tensor({-1.0, 2.0, -3.0})));
  EXPECT_TRUE(tensor_equal(a == b, tensor({false, true, false})));
  EXPECT_TRUE(tensor_equal(a != b, tensor({true, false, true})));
  EXPECT_TRUE(tensor_equal(a < b, tensor({true, false, false})));
  EXPECT_TRUE(tensor_equal(a <= b, tensor({true, true, false})));
  EXPECT_TRUE(tensor_equal(a > b, tensor({false, false, true})));
  EXPECT_TRUE(tensor_equal(a >= b, tensor({false, true, true})));
  EXPECT_TRUE(tensor_equal(a == 3, tensor({false, false, true})));
  EXPECT_TRUE(tensor_equal(a != 3, tensor({true, true, false})));
  EXPECT_TRUE(tensor_equal(a < 0, tensor({false, true, false})));
  EXPECT_TRUE(tensor_equal(a <= 1, tensor({true, true, false})));
  EXPECT_TRUE(tensor_equal(a > 1, tensor({false, false, true})));
  EXPECT_TRUE(tensor_equal(a >= 1, tensor({true, false, true})));
  Tensor p = a > 0, q = b > 0;
  EXPECT_TRUE(tensor_equal(p && q, tensor({true, false, true})));
  EXPECT_TRUE(tensor_equal(p || q, tensor({true, false, true})));
  EXPECT_TRUE(tensor_equal(!p, tensor({false, true, false})));
  EXPECT_TRUE(tensor_equal((a > 0) && (a < 2), tensor({true, false, false})));
  EXPECT_TRUE(tensor_equal(a * 2 + 1, tensor({3.0, -3.0, 7.0})));
}

TEST_P(ElementwiseTest, CompoundAssignmentIsInPlace) {
  Tensor a = tensor({1.0, 2.0, 3.0}, on());
  Tensor alias = a;
  void* data = a.impl().data();
  auto storage = a.storage();
  Tensor b = tensor({10.0, 20.0, 30.0}, on());

  Tensor& r1 = (a += b);
  EXPECT_EQ(&r1, &a);
  EXPECT_TRUE(tensor_equal(alias, tensor({11.0, 22.0, 33.0})));
  Tensor& r2 = (a -= tensor({1.0, 2.0, 3.0}, on()));
  EXPECT_EQ(&r2, &a);
  EXPECT_TRUE(tensor_equal(alias, tensor({10.0, 20.0, 30.0})));
  Tensor& r3 = (a *= b);
  EXPECT_EQ(&r3, &a);
  EXPECT_TRUE(tensor_equal(alias, tensor({100.0, 400.0, 900.0})));
  Tensor& r4 = (a /= b);
  EXPECT_EQ(&r4, &a);
  EXPECT_TRUE(tensor_equal(alias, tensor({10.0, 20.0, 30.0})));
  // Scalar right-hand sides.
  EXPECT_EQ(&(a += 1), &a);
  EXPECT_EQ(&(a -= 2), &a);
  EXPECT_EQ(&(a *= 3), &a);
  EXPECT_EQ(&(a /= 4), &a);
  EXPECT_TRUE(tensor_equal(alias, tensor({6.75, 14.25, 21.75})));

  EXPECT_TRUE(a.is_same(alias));
  EXPECT_EQ(a.storage(), storage);
  EXPECT_EQ(a.impl().data(), data);
  // The named in-place methods are the same.
  EXPECT_EQ(&a.add_(1.0), &a);
  EXPECT_EQ(&a.sub_(0.75), &a);
  EXPECT_EQ(&a.mul_(tensor(2.0, on())), &a);
  EXPECT_EQ(&a.div_(tensor({2.0}, on())), &a);
  EXPECT_TRUE(tensor_equal(alias, tensor({7.0, 14.5, 22.0})));
  EXPECT_EQ(a.impl().data(), data);
}

TEST_P(ElementwiseTest, InPlaceCastsAWiderResultBack) {
  // An in-place op may compute in a wider dtype when that casts back: float32 += float64 stays
  // float32 and int32 += int64 stays int32, both in the same storage.
  Tensor f = tensor({1.0, 2.0}, on());
  void* fdata = f.impl().data();
  f += from_vector<double>({0.5, 0.25}).to(device());
  EXPECT_TRUE(tensor_equal(f, tensor({1.5, 2.25})));
  EXPECT_EQ(f.impl().data(), fdata);
  Tensor i = tensor({1, 2}, on(kInt32));
  void* idata = i.impl().data();
  i *= tensor({3, 4}, on(kInt64));
  EXPECT_TRUE(tensor_equal(i, tensor({3, 8}, {.dtype = kInt32})));
  EXPECT_EQ(i.impl().data(), idata);
  Tensor u = tensor({1, 2}, on(kUInt8));
  u += tensor({true, false}, on());
  EXPECT_TRUE(tensor_equal(u, tensor({2, 2}, {.dtype = kUInt8})));
  Tensor k = tensor({5, 7}, on());
  k *= 2;
  EXPECT_TRUE(tensor_equal(k, tensor({10, 14})));
}

TEST_P(ElementwiseTest, InPlaceDtypeRuleErrors) {
  // PyTorch: "result type Float can't be cast to the desired output type Long".
  Tensor i = tensor({1, 2}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        i += tensor({0.5, 0.5}, on());
      },
      ErrorKind::DType, {"can't be cast", "float32", "int64"}));
  EXPECT_TRUE(throws_error([&] { i += 2.5; }, ErrorKind::DType, {"can't be cast"}));
  EXPECT_TRUE(throws_error([&] { i -= tensor(1.0, on()); }, ErrorKind::DType, {"can't be cast"}));
  EXPECT_TRUE(throws_error([&] { i *= 0.5; }, ErrorKind::DType, {"can't be cast"}));
  // True division always gives a float, so /= on an integer tensor fails even with integers.
  EXPECT_TRUE(throws_error([&] { i /= 2; }, ErrorKind::DType, {"can't be cast", "int64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        i.div_(tensor({1, 1}, on()));
      },
      ErrorKind::DType, {"can't be cast"}));
  Tensor b = tensor({true, false}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        b += tensor({1, 1}, on());
      },
      ErrorKind::DType, {"can't be cast", "bool"}));
  // Nothing was written.
  EXPECT_TRUE(tensor_equal(i, tensor({1, 2})));
  EXPECT_TRUE(tensor_equal(b, tensor({true, false})));
}

TEST_P(ElementwiseTest, InPlaceBroadcastMustKeepTheShape) {
  Tensor a = tensor({1.0, 2.0, 3.0}, on());
  EXPECT_TRUE(throws_error(
      [&] {
        a += ones({2, 3}, on());
      },
      ErrorKind::Shape, {"add_", "[3]", "[2, 3]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        a.mul_(ones({2, 1}, on()));
      },
      ErrorKind::Shape, {"mul_", "[3]", "[2, 3]"}));
  EXPECT_TRUE(throws_error([&] { a -= ones({4}, on()); }, ErrorKind::Shape, {"[3]", "[4]"}));
  EXPECT_TRUE(tensor_equal(a, tensor({1.0, 2.0, 3.0})));
  // Broadcasting the right-hand side into the left one's shape is fine.
  Tensor m = zeros({2, 3}, on());
  m += tensor({1.0, 2.0, 3.0}, on());
  m += tensor({{10.0}, {20.0}}, on());
  EXPECT_TRUE(tensor_equal(m, tensor({{11.0, 12.0, 13.0}, {21.0, 22.0, 23.0}})));
}

TEST_P(ElementwiseTest, WritingIntoAnExpandedViewIsAnError) {
  Tensor base = tensor({{1.0, 2.0, 3.0}}, on());
  Tensor e = base.expand({2, 3});
  const std::vector<std::string> msg = {"more than one element of the written-to tensor",
                                        "clone()"};
  EXPECT_TRUE(throws_error([&] { e += 1; }, ErrorKind::Value, msg));
  EXPECT_TRUE(throws_error([&] { e.mul_(ones({2, 3}, on())); }, ErrorKind::Value, msg));
  EXPECT_TRUE(throws_error([&] { e.clamp_(0.0); }, ErrorKind::Value, msg));
  EXPECT_TRUE(throws_error(
      [&] {
        e.masked_fill_(ones({2, 3}, on(kBool)), 0.0);
      },
      ErrorKind::Value, msg));
  EXPECT_TRUE(throws_error([&] { e.fill_(0); }, ErrorKind::Value, msg));
  EXPECT_TRUE(tensor_equal(base, tensor({{1.0, 2.0, 3.0}})));
  // Reading from an expanded view, and writing into a clone of one, are fine.
  Tensor c = e.clone();
  c += e;
  EXPECT_TRUE(tensor_equal(c, tensor({{2.0, 4.0, 6.0}, {2.0, 4.0, 6.0}})));
  // A size-1 dim with stride 0 writes each location once, so it is allowed.
  Tensor scalar = tensor(5.0, on());
  Tensor one = scalar.expand({1});
  ASSERT_EQ(one.stride(0), 0);
  one += 1;
  EXPECT_EQ(scalar.item<double>(), 6.0);
}

EMBER_INSTANTIATE_DEVICE_TESTS(ElementwiseTest);

}  // namespace
}  // namespace ember

namespace ember {
namespace {

// torch.set_flush_denormal: subnormal results become zero while it is on, on every CPU thread.
TEST(FlushDenormal, SubnormalResultsBecomeZeroWhileOn) {
  Tensor tiny = full({100000}, 1e-30f);  // large enough to run on all OpenMP threads
  if (!set_flush_denormal(true)) GTEST_SKIP() << "not supported on this CPU";
  float flushed = (tiny * 1e-10f).max().item<float>();
  set_flush_denormal(false);
  float kept = (tiny * 1e-10f).max().item<float>();
  EXPECT_EQ(flushed, 0.0f);
  EXPECT_GT(kept, 0.0f);  // 1e-40 is a float32 subnormal
  EXPECT_LT(kept, 1e-38f);
}

}  // namespace
}  // namespace ember
