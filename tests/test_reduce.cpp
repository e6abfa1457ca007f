// tests/test_reduce.cpp: reductions -- sum, mean, prod, max/min (with and without a dim),
// amax/amin, argmax/argmin, var/std, softmax/log_softmax/logsumexp -- for exact values over all,
// single, multiple and negative dims with and without keepdim, their result dtypes, empty and 0-dim
// inputs, non-contiguous inputs, large inputs against a float64 reference, numerical stability, and
// NaN.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor f64(const std::vector<double>& v, std::optional<Shape> shape = std::nullopt) {
  return from_vector<double>(v, shape);
}

class ReduceTest : public testing::DeviceTest {
 protected:
  // [[1, 2, 3], [4, 5, 6]]
  Tensor m() const { return tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on()); }
  // x[i][j][k] = 12 i + 4 j + k, shape (2, 3, 4)
  Tensor cube() const { return arange(24, on(kFloat32)).reshape({2, 3, 4}); }
};

// --- sum, mean, prod

TEST_P(ReduceTest, SumAllAndPerDim) {
  Tensor x = m();
  Tensor all = sum(x);
  EXPECT_EQ(all.dim(), 0);
  EXPECT_TRUE(tensor_equal(all, tensor(21.0)));
  EXPECT_TRUE(tensor_equal(sum(x, {0}), tensor({5.0, 7.0, 9.0})));
  EXPECT_TRUE(tensor_equal(sum(x, {1}), tensor({6.0, 15.0})));
  EXPECT_TRUE(tensor_equal(sum(x, {-1}), tensor({6.0, 15.0})));
  EXPECT_TRUE(tensor_equal(sum(x, {-2}, true), tensor({{5.0, 7.0, 9.0}})));
  EXPECT_TRUE(tensor_equal(sum(x, {1}, true), tensor({{6.0}, {15.0}})));
  EXPECT_TRUE(tensor_equal(sum(x, {0, 1}), tensor(21.0)));
  EXPECT_TRUE(tensor_equal(sum(x, {}, true), tensor({{21.0}})));
  EXPECT_TRUE(tensor_equal(x.sum(), all));
  EXPECT_TRUE(tensor_equal(x.sum({1}, true), sum(x, {1}, true)));
  EXPECT_EQ(all.device(), x.device());
}

TEST_P(ReduceTest, SumOverSeveralDims) {
  Tensor x = cube();
  // Over i and k: sum of 12 i + 4 j + k for i < 2, k < 4 is 60 + 32 j.
  EXPECT_TRUE(tensor_equal(sum(x, {0, 2}), tensor({60.0, 92.0, 124.0})));
  EXPECT_TRUE(tensor_equal(sum(x, {2, 0}), tensor({60.0, 92.0, 124.0})));
  EXPECT_TRUE(tensor_equal(sum(x, {0, -1}, true), tensor({{{60.0}, {92.0}, {124.0}}})));
  // Over j: 36 i + 3 k + 12.
  EXPECT_TRUE(
      tensor_equal(sum(x, {1}), tensor({{12.0, 15.0, 18.0, 21.0}, {48.0, 51.0, 54.0, 57.0}})));
  // Over k: 48 i + 16 j + 6.
  EXPECT_TRUE(tensor_equal(sum(x, {-1}), tensor({{6.0, 22.0, 38.0}, {54.0, 70.0, 86.0}})));
  EXPECT_TRUE(tensor_equal(sum(x, {0, 1, 2}), tensor(276.0)));
  EXPECT_EQ(sum(x, {1, 2}, true).sizes(), (Shape{2, 1, 1}));
}

TEST_P(ReduceTest, SumDtypes) {
  // torch.sum: "integral inputs are promoted to int64"; bool counts the trues.
  EXPECT_TRUE(tensor_equal(sum(tensor({1, 2, 3}, on(kInt32))), tensor(6)));
  EXPECT_TRUE(tensor_equal(sum(tensor({true, false, true, true}, on())), tensor(3)));
  EXPECT_TRUE(tensor_equal(sum(tensor({200, 100}, on(kUInt8))), tensor(300)));  // no wrap at 256
  EXPECT_TRUE(tensor_equal(sum(tensor({{1, 2}, {3, 4}}, on(kInt32)), {0}), tensor({4, 6})));
  EXPECT_TRUE(tensor_equal(sum(tensor({{true, true}, {false, true}}, on()), {1}), tensor({2, 1})));
  // An explicit dtype.
  EXPECT_TRUE(tensor_equal(sum(tensor({1, 2}, on()), kFloat64), tensor(3.0, {.dtype = kFloat64})));
  EXPECT_TRUE(
      tensor_equal(sum(m(), {0}, false, kFloat64), tensor({5.0, 7.0, 9.0}, {.dtype = kFloat64})));
  EXPECT_EQ(sum(ones({2}, on(kFloat64))).dtype(), kFloat64);
  // prod promotes integers the same way.
  EXPECT_TRUE(tensor_equal(prod(tensor({2, 3, 4}, on(kInt32))), tensor(24)));
  EXPECT_TRUE(tensor_equal(prod(tensor({100, 3}, on(kUInt8))), tensor(300)));
}

TEST_P(ReduceTest, Mean) {
  Tensor x = m();
  EXPECT_TRUE(tensor_equal(mean(x), tensor(3.5)));
  EXPECT_TRUE(tensor_equal(mean(x, {0}), tensor({2.5, 3.5, 4.5})));
  EXPECT_TRUE(tensor_equal(mean(x, {-1}), tensor({2.0, 5.0})));
  EXPECT_TRUE(tensor_equal(mean(x, {1}, true), tensor({{2.0}, {5.0}})));
  EXPECT_TRUE(tensor_equal(x.mean(), tensor(3.5)));
  EXPECT_TRUE(tensor_equal(x.mean({0}, true), tensor({{2.5, 3.5, 4.5}})));
  // Over j and k of the cube, the mean of 12 i + 4 j + k is 12 i + 4 + 1.5.
  EXPECT_TRUE(tensor_equal(mean(cube(), {1, 2}), tensor({5.5, 17.5})));
  EXPECT_TRUE(
      tensor_equal(mean(tensor({1.0, 2.0}, on(kFloat64))), tensor(1.5, {.dtype = kFloat64})));
}

TEST_P(ReduceTest, MeanOfIntegersIsAnError) {
  // PyTorch: "mean(): could not infer output dtype. Input dtype must be either a floating point or
  // complex dtype. Got: Long".
  EXPECT_TRUE(throws_error(
      [&] {
        mean(tensor({1, 2}, on()));
      },
      ErrorKind::DType, {"mean", "floating point", "int64"}));
  EXPECT_TRUE(throws_error([&] { tensor({true}, on()).mean({0}); }, ErrorKind::DType, {"bool"}));
  EXPECT_TRUE(tensor_equal(mean(tensor({1, 2}, on()).to(kFloat32)), tensor(1.5)));
}

TEST_P(ReduceTest, Prod) {
  Tensor x = m();
  EXPECT_TRUE(tensor_equal(prod(x), tensor(720.0)));
  EXPECT_TRUE(tensor_equal(prod(x, 0), tensor({4.0, 10.0, 18.0})));
  EXPECT_TRUE(tensor_equal(prod(x, 1), tensor({6.0, 120.0})));
  EXPECT_TRUE(tensor_equal(prod(x, -1, true), tensor({{6.0}, {120.0}})));
  EXPECT_TRUE(tensor_equal(x.prod(), tensor(720.0)));
  EXPECT_TRUE(tensor_equal(x.prod(0, true), tensor({{4.0, 10.0, 18.0}})));
  EXPECT_TRUE(tensor_equal(prod(tensor({2.0, kInf, 0.5}, on())), tensor(kInf)));
}

TEST_P(ReduceTest, BadDims) {
  Tensor x = m();
  EXPECT_TRUE(throws_error([&] { sum(x, {2}); }, ErrorKind::Index,
                           {"Dimension out of range", "[-2, 1]", "2"}));
  EXPECT_TRUE(throws_error([&] { sum(x, {-3}); }, ErrorKind::Index, {"Dimension out of range"}));
  EXPECT_TRUE(throws_error([&] { sum(x, {0, -2}); }, ErrorKind::Index, {"appears multiple times"}));
  EXPECT_TRUE(throws_error([&] { max(x, 2); }, ErrorKind::Index, {"Dimension out of range"}));
  EXPECT_TRUE(throws_error([&] { argmax(x, -3); }, ErrorKind::Index, {"Dimension out of range"}));
  EXPECT_TRUE(throws_error([&] { softmax(x, 2); }, ErrorKind::Index, {"Dimension out of range"}));
}

// --- max, min, amax, amin, argmax, argmin

TEST_P(ReduceTest, MaxMinOverAll) {
  Tensor x = tensor({{3.0, -1.0, 7.0}, {0.5, 7.0, -4.0}}, on());
  EXPECT_TRUE(tensor_equal(max(x), tensor(7.0)));
  EXPECT_TRUE(tensor_equal(min(x), tensor(-4.0)));
  EXPECT_TRUE(tensor_equal(x.max(), tensor(7.0)));
  EXPECT_TRUE(tensor_equal(x.min(), tensor(-4.0)));
  // Integers keep their dtype, and all-negative or all-large values are found (no bad identity).
  EXPECT_TRUE(tensor_equal(max(tensor({-5, -3, -9}, on())), tensor(-3)));
  EXPECT_TRUE(tensor_equal(min(tensor({250, 255}, on(kUInt8))), tensor(250, {.dtype = kUInt8})));
  EXPECT_TRUE(tensor_equal(max(tensor({-kInf, -kInf}, on())), tensor(-kInf)));
  EXPECT_TRUE(tensor_equal(min(tensor({kInf}, on())), tensor(kInf)));
  EXPECT_TRUE(tensor_equal(max(tensor({false, true}, on())), tensor(true)));
}

TEST_P(ReduceTest, MaxMinWithDimReturnValuesAndIndices) {
  // torch.max(input, dim): "If there are multiple maximal values in a reduced row then the indices
  // of the first maximal value are returned." The same holds for min.
  Tensor x = tensor({{1.0, 3.0, 3.0}, {2.0, 2.0, 0.0}}, on());
  auto [v1, i1] = max(x, 1);
  EXPECT_TRUE(tensor_equal(v1, tensor({3.0, 2.0})));
  EXPECT_TRUE(tensor_equal(i1, tensor({1, 0})));
  auto [v0, i0] = max(x, 0);
  EXPECT_TRUE(tensor_equal(v0, tensor({2.0, 3.0, 3.0})));
  EXPECT_TRUE(tensor_equal(i0, tensor({1, 0, 0})));
  auto [w1, j1] = min(x, -1);
  EXPECT_TRUE(tensor_equal(w1, tensor({1.0, 0.0})));
  EXPECT_TRUE(tensor_equal(j1, tensor({0, 2})));
  auto [w0, j0] = x.min(0, true);
  EXPECT_TRUE(tensor_equal(w0, tensor({{1.0, 2.0, 0.0}})));
  EXPECT_TRUE(tensor_equal(j0, tensor({{0, 1, 1}})));
  auto [vk, ik] = x.max(1, true);
  EXPECT_TRUE(tensor_equal(vk, tensor({{3.0}, {2.0}})));
  EXPECT_TRUE(tensor_equal(ik, tensor({{1}, {0}})));
  auto [wt, jt] = min(tensor({5, 1, 1, 7}, on(kInt32)), 0);
  EXPECT_TRUE(tensor_equal(wt, tensor(1, {.dtype = kInt32})));
  EXPECT_TRUE(tensor_equal(jt, tensor(1)));
  // On a 3-D tensor the other dims are kept in order.
  auto [vc, ic] = max(cube(), 1);
  EXPECT_EQ(vc.sizes(), (Shape{2, 4}));
  EXPECT_TRUE(tensor_equal(ic, zeros({2, 4}, {.dtype = kInt64}) + 2));
  EXPECT_TRUE(tensor_equal(vc, tensor({{8.0, 9.0, 10.0, 11.0}, {20.0, 21.0, 22.0, 23.0}})));
}

TEST_P(ReduceTest, AmaxAmin) {
  Tensor x = cube();
  // Over i and k the extreme of 12 i + 4 j + k is at i = 1, k = 3 (max) and i = 0, k = 0 (min).
  EXPECT_TRUE(tensor_equal(amax(x, {0, 2}), tensor({15.0, 19.0, 23.0})));
  EXPECT_TRUE(tensor_equal(amin(x, {0, -1}), tensor({0.0, 4.0, 8.0})));
  EXPECT_TRUE(tensor_equal(amax(x, {-1}, true),
                           tensor({{{3.0}, {7.0}, {11.0}}, {{15.0}, {19.0}, {23.0}}})));
  EXPECT_TRUE(tensor_equal(amin(x, {1}), tensor({{0.0, 1.0, 2.0, 3.0}, {12.0, 13.0, 14.0, 15.0}})));
  // torch.amax(x, dim=()) reduces every dim.
  EXPECT_TRUE(tensor_equal(amax(x, {}), tensor(23.0)));
  EXPECT_TRUE(tensor_equal(x.amin({}, true), tensor({{{0.0}}})));
  EXPECT_TRUE(tensor_equal(x.amax({0, 1}), tensor({20.0, 21.0, 22.0, 23.0})));
  EXPECT_TRUE(tensor_equal(amax(tensor({{1, 9}, {4, 2}}, on(kInt32)), {0}),
                           tensor({4, 9}, {.dtype = kInt32})));
}

TEST_P(ReduceTest, ArgmaxArgmin) {
  Tensor x = tensor({{1.0, 3.0, 3.0}, {2.0, 2.0, 0.0}}, on());
  // Without a dim: the index into the flattened tensor, first occurrence on ties.
  EXPECT_TRUE(tensor_equal(argmax(x), tensor(1)));
  EXPECT_TRUE(tensor_equal(argmin(x), tensor(5)));
  EXPECT_TRUE(tensor_equal(x.argmax(), tensor(1)));
  EXPECT_TRUE(tensor_equal(argmax(tensor({4, 9, 9, 1}, on(kInt32))), tensor(1)));
  EXPECT_TRUE(tensor_equal(argmin(tensor({4, 1, 9, 1}, on())), tensor(1)));
  // With keepdim and no dim, every dim is kept with size 1 (aten's argmax meta function;
  // pytorch/pytorch#129838).
  EXPECT_TRUE(tensor_equal(argmax(x, std::nullopt, true), tensor({{1}})));
  EXPECT_TRUE(tensor_equal(argmin(x, std::nullopt, true), tensor({{5}})));
  // With a dim.
  EXPECT_TRUE(tensor_equal(argmax(x, 1), tensor({1, 0})));
  EXPECT_TRUE(tensor_equal(argmin(x, 1), tensor({0, 2})));
  EXPECT_TRUE(tensor_equal(argmax(x, 0), tensor({1, 0, 0})));
  EXPECT_TRUE(tensor_equal(argmin(x, -2), tensor({0, 1, 1})));
  EXPECT_TRUE(tensor_equal(argmax(x, 0, true), tensor({{1, 0, 0}})));
  EXPECT_TRUE(tensor_equal(x.argmin(1, true), tensor({{0}, {2}})));
  EXPECT_TRUE(tensor_equal(argmax(cube(), 2), zeros({2, 3}, {.dtype = kInt64}) + 3));
  // A 0-dim tensor's only element is at index 0.
  EXPECT_TRUE(tensor_equal(argmax(tensor(7.0, on())), tensor(0)));
  EXPECT_TRUE(tensor_equal(argmin(tensor(7.0, on()), 0), tensor(0)));
}

// --- var, std

TEST_P(ReduceTest, VarStd) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, on());
  // Squared deviations from the mean 2.5 sum to 5: unbiased 5 / 3, biased 5 / 4.
  EXPECT_TRUE(tensor_close(var(x), f64({5.0 / 3.0}, Shape{})));
  EXPECT_TRUE(tensor_equal(var(x, {}, false), tensor(1.25)));
  EXPECT_TRUE(tensor_close(std(x), f64({1.2909944487358056}, Shape{})));
  EXPECT_TRUE(tensor_close(std(x, {}, false), f64({1.118033988749895}, Shape{})));
  EXPECT_TRUE(tensor_close(x.var(), var(x)));
  EXPECT_TRUE(tensor_close(x.std({}, false), std(x, {}, false)));
  Tensor y = tensor({{1.0, 2.0}, {3.0, 5.0}}, on());
  // var(y, {0}) would pick var(y, bool unbiased): dims are spelled Shape{...} for var and std.
  EXPECT_TRUE(tensor_equal(var(y, Shape{0}), tensor({2.0, 4.5})));
  EXPECT_TRUE(tensor_equal(var(y, Shape{0}, false), tensor({1.0, 2.25})));
  EXPECT_TRUE(tensor_equal(var(y, Shape{-1}), tensor({0.5, 2.0})));
  EXPECT_TRUE(tensor_equal(var(y, Shape{1}, true, true), tensor({{0.5}, {2.0}})));
  EXPECT_TRUE(tensor_close(var(y, Shape{0, 1}), f64({8.75 / 3.0}, Shape{})));
  EXPECT_TRUE(tensor_close(std(y, Shape{1}), f64({0.7071067811865476, 1.4142135623730951})));
  EXPECT_TRUE(tensor_close(y.std(Shape{0}, false, true), f64({1.0, 1.5}, Shape{1, 2})));
  EXPECT_EQ(var(y.to(kFloat64), Shape{0}).dtype(), kFloat64);
  // A constant row has variance exactly 0.
  EXPECT_TRUE(tensor_equal(var(full({5}, 0.1, on())), tensor(0.0)));
}

TEST_P(ReduceTest, VarDegreesOfFreedom) {
  // With N - correction <= 0 degrees of freedom PyTorch divides by max(0, N - correction): one
  // element gives NaN unbiased and 0 biased, no elements give NaN either way.
  EXPECT_TRUE(tensor_equal(var(tensor({3.0}, on())), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(var(tensor({3.0}, on()), {}, false), tensor(0.0)));
  EXPECT_TRUE(tensor_equal(std(tensor({{1.0, 2.0}}, on()), Shape{0}), tensor({kNaN, kNaN})));
  EXPECT_TRUE(tensor_equal(var(zeros({0}, on())), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(var(zeros({0}, on()), {}, false), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(var(zeros({0, 2}, on()), Shape{0}), tensor({kNaN, kNaN})));
  EXPECT_TRUE(throws_error([&] { var(tensor({1, 2}, on())); }, ErrorKind::DType, {"var", "int64"}));
  EXPECT_TRUE(throws_error(
      [&] {
        std(tensor({1, 2}, on()), Shape{0});
      },
      ErrorKind::DType, {"int64"}));
}

// --- softmax, log_softmax, logsumexp

TEST_P(ReduceTest, SoftmaxValues) {
  // softmax([1, 2, 3]) = e^x / sum e^x, computed in double precision.
  const std::vector<double> p = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
  Tensor x = tensor({1.0, 2.0, 3.0}, on());
  EXPECT_TRUE(tensor_close(softmax(x, 0), f64(p)));
  EXPECT_EQ(softmax(x, 0).dtype(), kFloat32);
  EXPECT_TRUE(tensor_close(x.softmax(-1), f64(p)));
  // Per row and per column of a matrix.
  Tensor r = tensor({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}}, on());
  EXPECT_TRUE(
      tensor_close(softmax(r, 1), f64({p[0], p[1], p[2], 1 / 3.0, 1 / 3.0, 1 / 3.0}, Shape{2, 3})));
  Tensor c = tensor({{1.0, 2.0}, {3.0, 4.0}}, on());
  const double lo = 0.11920292202211755, hi = 0.8807970779778824;  // softmax([0, 2])
  EXPECT_TRUE(tensor_close(softmax(c, 0), f64({lo, lo, hi, hi}, Shape{2, 2})));
  EXPECT_TRUE(tensor_close(sum(softmax(c, 1), {1}), f64({1.0, 1.0})));
  EXPECT_TRUE(tensor_close(softmax(cube(), 1).sum({1}), ones({2, 4})));
  // float64 stays float64; integers are computed as float32.
  EXPECT_EQ(softmax(c.to(kFloat64), 1).dtype(), kFloat64);
  EXPECT_TRUE(tensor_close(softmax(tensor({1, 2, 3}, on()), 0), f64(p)));
}

TEST_P(ReduceTest, LogSoftmaxAndLogsumexpValues) {
  // logsumexp([1, 2, 3]) = log(e + e^2 + e^3); log_softmax = x - logsumexp.
  const double lse = 3.40760596444438;
  Tensor x = tensor({1.0, 2.0, 3.0}, on());
  EXPECT_TRUE(tensor_close(logsumexp(x, {0}), f64({lse}, Shape{})));
  EXPECT_TRUE(tensor_close(log_softmax(x, 0), f64({1 - lse, 2 - lse, 3 - lse})));
  EXPECT_TRUE(tensor_close(x.log_softmax(0), f64({1 - lse, 2 - lse, 3 - lse})));
  Tensor r = tensor({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}}, on());
  EXPECT_TRUE(tensor_close(logsumexp(r, {1}), f64({lse, 1 + std::log(3.0)})));
  EXPECT_TRUE(tensor_close(r.logsumexp({-1}, true), f64({lse, 1 + std::log(3.0)}, Shape{2, 1})));
  EXPECT_TRUE(tensor_close(logsumexp(r, {0, 1}), f64({3.6466950823946482}, Shape{})));
  EXPECT_TRUE(tensor_close(log_softmax(r, 1), f64({1 - lse, 2 - lse, 3 - lse, -std::log(3.0),
                                                   -std::log(3.0), -std::log(3.0)},
                                                  Shape{2, 3})));
  // log_softmax is log(softmax) where both are representable.
  Tensor c = tensor({{0.5, -1.0}, {2.0, 0.25}}, on());
  EXPECT_TRUE(tensor_close(log_softmax(c, 0), log(softmax(c, 0))));
  EXPECT_TRUE(tensor_close(exp(log_softmax(c, 1)), softmax(c, 1)));
}

TEST_P(ReduceTest, SoftmaxFamilyIsStableForLargeInputs) {
  // Shifting the inputs by a constant changes nothing: [1000, 1001, 1002] behaves as [0, 1, 2]
  // (no overflow to inf / NaN), and so does [-1000, -1001, -1002] (no underflow to 0 / 0).
  const std::vector<double> p = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
  const double lse = 2.40760596444438;  // logsumexp([0, 1, 2])
  Tensor big = tensor({1000.0, 1001.0, 1002.0}, on());
  EXPECT_TRUE(tensor_close(softmax(big, 0), f64(p)));
  EXPECT_TRUE(tensor_close(log_softmax(big, 0), f64({-lse, 1 - lse, 2 - lse})));
  EXPECT_TRUE(tensor_close(logsumexp(big, {0}), f64({1000 + lse}, Shape{})));
  Tensor small = tensor({-1000.0, -1001.0, -1002.0}, on());
  EXPECT_TRUE(tensor_close(softmax(small, 0), f64({p[2], p[1], p[0]})));
  EXPECT_TRUE(tensor_close(log_softmax(small, 0), f64({2 - lse, 1 - lse, -lse})));
  EXPECT_TRUE(tensor_close(logsumexp(small, {0}), f64({-1000 + (lse - 2)}, Shape{})));
  // One huge logit takes all the mass.
  EXPECT_TRUE(tensor_close(softmax(tensor({0.0, 1e4}, on()), 0), f64({0.0, 1.0})));
  EXPECT_TRUE(tensor_close(log_softmax(tensor({0.0, 1e4}, on()), 0), f64({-1e4, 0.0})));
}

TEST_P(ReduceTest, SoftmaxFamilyWithInfiniteRows) {
  // A fully masked row (all -inf): logsumexp is -inf and softmax is NaN, as in PyTorch (0 / 0);
  // a partly masked row puts no mass on the -inf entries.
  Tensor x = tensor({{-kInf, -kInf}, {0.0, -kInf}, {1.0, 1.0}}, on());
  Tensor l = logsumexp(x, {1});
  EXPECT_TRUE(tensor_equal(l.slice(0, 0, 2), tensor({-kInf, 0.0})));
  EXPECT_TRUE(tensor_close(l.index({2}), f64({1.0 + std::log(2.0)}, Shape{})));
  EXPECT_TRUE(tensor_equal(softmax(x, 1), tensor({{kNaN, kNaN}, {1.0, 0.0}, {0.5, 0.5}})));
  Tensor ls = log_softmax(x, 1);
  EXPECT_TRUE(tensor_equal(ls.index({1}), tensor({0.0, -kInf})));
  EXPECT_TRUE(tensor_close(ls.index({2}), f64({-std::log(2.0), -std::log(2.0)})));
  // +inf dominates.
  EXPECT_TRUE(tensor_equal(logsumexp(tensor({kInf, 1.0}, on()), {0}), tensor(kInf)));
  EXPECT_TRUE(tensor_equal(logsumexp(tensor({kInf, -kInf}, on()), {0}), tensor(kInf)));
}

// --- empty and 0-dim inputs

TEST_P(ReduceTest, EmptyInputs) {
  Tensor e = zeros({0}, on()), e2 = zeros({0, 3}, on());
  // The sum of nothing is 0, the product 1, the mean 0 / 0.
  EXPECT_TRUE(tensor_equal(sum(e), tensor(0.0)));
  EXPECT_TRUE(tensor_equal(sum(e2, {0}), tensor({0.0, 0.0, 0.0})));
  EXPECT_EQ(sum(e2, {1}).sizes(), (Shape{0}));
  EXPECT_EQ(sum(e2, {1}, true).sizes(), (Shape{0, 1}));
  EXPECT_TRUE(tensor_equal(sum(zeros({0}, on(kInt32))), tensor(0)));
  EXPECT_TRUE(tensor_equal(prod(e), tensor(1.0)));
  EXPECT_TRUE(tensor_equal(prod(e2, 0), tensor({1.0, 1.0, 1.0})));
  EXPECT_TRUE(tensor_equal(mean(e), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(mean(e2, {0}), tensor({kNaN, kNaN, kNaN})));
  EXPECT_TRUE(tensor_equal(logsumexp(e2, {0}), tensor({-kInf, -kInf, -kInf})));
  EXPECT_EQ(softmax(e2, 0).sizes(), (Shape{0, 3}));
  EXPECT_EQ(log_softmax(e2, 1).sizes(), (Shape{0, 3}));
  // Reducing the non-empty dim of an empty tensor is fine: nothing to compute.
  auto [v, i] = max(e2, 1);
  EXPECT_EQ(v.sizes(), (Shape{0}));
  EXPECT_EQ(i.sizes(), (Shape{0}));
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(amin(e2, {1}).sizes(), (Shape{0}));
  EXPECT_EQ(argmax(e2, 1).sizes(), (Shape{0}));
}

TEST_P(ReduceTest, ExtremesOfEmptyInputsAreErrors) {
  // PyTorch: "max(): Expected reduction dim to be specified for input.numel() == 0" and
  // "Expected reduction dim 0 to have non-zero size" (IndexError).
  Tensor e = zeros({0}, on()), e2 = zeros({0, 3}, on());
  EXPECT_TRUE(throws_error([&] { max(e); }, ErrorKind::Index, {"[max]", "non-zero size", "[0]"}));
  EXPECT_TRUE(throws_error([&] { min(e); }, ErrorKind::Index, {"[min]"}));
  EXPECT_TRUE(throws_error([&] { max(e2, 0); }, ErrorKind::Index, {"[max]", "[0, 3]"}));
  EXPECT_TRUE(throws_error([&] { min(e2, 0); }, ErrorKind::Index, {"[min]"}));
  EXPECT_TRUE(throws_error([&] { amax(e2, {0}); }, ErrorKind::Index, {"[amax]"}));
  EXPECT_TRUE(throws_error([&] { amin(e2, {}); }, ErrorKind::Index, {"[amin]"}));
  EXPECT_TRUE(throws_error([&] { argmax(e); }, ErrorKind::Index, {"[argmax]"}));
  EXPECT_TRUE(throws_error([&] { argmin(e2, 0); }, ErrorKind::Index, {"[argmin]"}));
}

TEST_P(ReduceTest, ZeroDimInputs) {
  Tensor s = tensor(5.0, on());
  EXPECT_TRUE(tensor_equal(sum(s), tensor(5.0)));
  EXPECT_TRUE(tensor_equal(sum(s, {0}), tensor(5.0)));
  EXPECT_TRUE(tensor_equal(sum(s, {-1}, true), tensor(5.0)));
  EXPECT_TRUE(tensor_equal(mean(s), tensor(5.0)));
  EXPECT_TRUE(tensor_equal(prod(s, 0), tensor(5.0)));
  EXPECT_TRUE(tensor_equal(max(s), tensor(5.0)));
  auto [v, i] = max(s, 0);
  EXPECT_TRUE(tensor_equal(v, tensor(5.0)));
  EXPECT_TRUE(tensor_equal(i, tensor(0)));
  EXPECT_TRUE(tensor_equal(amin(s, {}), tensor(5.0)));
  EXPECT_TRUE(tensor_equal(softmax(s, 0), tensor(1.0)));
  EXPECT_TRUE(tensor_equal(logsumexp(s, {0}), tensor(5.0)));
}

// --- non-contiguous and large inputs

TEST_P(ReduceTest, NonContiguousInputs) {
  Tensor x = arange(6, on(kFloat32)).reshape({2, 3});
  Tensor xt = x.t();  // [[0, 3], [1, 4], [2, 5]]
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_TRUE(tensor_equal(sum(xt, {0}), tensor({3.0, 12.0})));
  EXPECT_TRUE(tensor_equal(sum(xt, {1}), tensor({3.0, 5.0, 7.0})));
  EXPECT_TRUE(tensor_equal(mean(xt), tensor(2.5)));
  EXPECT_TRUE(tensor_equal(prod(xt, 1), tensor({0.0, 4.0, 10.0})));
  auto [v, i] = max(xt, 0);
  EXPECT_TRUE(tensor_equal(v, tensor({2.0, 5.0})));
  EXPECT_TRUE(tensor_equal(i, tensor({2, 2})));
  EXPECT_TRUE(tensor_equal(argmin(xt, 1), tensor({0, 0, 0})));
  EXPECT_TRUE(tensor_equal(argmax(xt), tensor(5)));  // flattened in xt's own order
  EXPECT_TRUE(tensor_equal(var(xt, Shape{0}), tensor({1.0, 1.0})));
  EXPECT_TRUE(tensor_close(softmax(xt, 0), softmax(xt.contiguous(), 0)));
  EXPECT_TRUE(tensor_close(logsumexp(xt, {0}), logsumexp(xt.contiguous(), {0})));
  // Every other column of a (4, 5) matrix: y[r] = [5 r, 5 r + 2, 5 r + 4].
  Tensor y = arange(20, on(kFloat32)).reshape({4, 5}).slice(1, 0, 5, 2);
  EXPECT_TRUE(tensor_equal(sum(y, {0}), tensor({30.0, 38.0, 46.0})));
  EXPECT_TRUE(tensor_equal(sum(y, {1}), tensor({6.0, 21.0, 36.0, 51.0})));
  EXPECT_TRUE(tensor_equal(amax(y, {0}), tensor({15.0, 17.0, 19.0})));
  EXPECT_TRUE(tensor_equal(sum(y), tensor(114.0)));
  // A permuted 3-D tensor reduced over several dims.
  Tensor p = cube().permute({2, 0, 1});  // (4, 2, 3)
  EXPECT_TRUE(tensor_equal(sum(p, {1, 2}), sum(cube(), {0, 1})));
  EXPECT_TRUE(tensor_equal(amax(p, {0, 2}), amax(cube(), {1, 2})));
}

TEST_P(ReduceTest, LargeInputs) {
  // One million float32 ones sum to exactly 1e6.
  Tensor ones_1m = ones({1000000}, on());
  EXPECT_EQ(sum(ones_1m).item<double>(), 1e6);
  EXPECT_EQ(mean(ones_1m).item<double>(), 1.0);
  EXPECT_TRUE(tensor_equal(sum(ones({1000, 1000}, on()), {0}), full({1000}, 1000.0)));
  EXPECT_TRUE(tensor_equal(sum(ones({1000, 1000}, on()), {1}), full({1000}, 1000.0)));
  // Integers sum exactly: 0 + 1 + ... + 999999.
  EXPECT_EQ(sum(arange(1000000, on())).item<int64_t>(), 499999500000);
  // A (1000, 300) random matrix against the float64 reference, over either dim.
  Generator gen(42);
  Tensor x = randn({1000, 300}, on(), &gen);
  Tensor x64 = x.to(kFloat64);
  EXPECT_TRUE(tensor_close(sum(x, {0}), sum(x64, {0}).to(kFloat32), 1e-5, 1e-5));
  EXPECT_TRUE(tensor_close(sum(x, {1}), sum(x64, {1}).to(kFloat32), 1e-5, 1e-5));
  EXPECT_TRUE(tensor_close(sum(x), sum(x64).to(kFloat32), 1e-5, 1e-4));
  EXPECT_TRUE(tensor_close(mean(x, {0}), mean(x64, {0}).to(kFloat32), 1e-5, 1e-6));
  EXPECT_TRUE(tensor_close(var(x, Shape{0}), var(x64, Shape{0}).to(kFloat32), 1e-5, 1e-6));
  EXPECT_TRUE(tensor_close(logsumexp(x, {1}), logsumexp(x64, {1}).to(kFloat32), 1e-5, 1e-6));
  EXPECT_TRUE(tensor_close(softmax(x, 0), softmax(x64, 0).to(kFloat32), 1e-5, 1e-7));
  EXPECT_TRUE(tensor_equal(amax(x, {0}), amax(x64, {0}).to(kFloat32)));
  EXPECT_TRUE(tensor_equal(argmin(x, 1), argmin(x64, 1)));
  // The transposed matrix reduces to the same values.
  EXPECT_TRUE(tensor_close(sum(x.t(), {1}), sum(x64, {0}).to(kFloat32), 1e-5, 1e-5));
  // Extremes planted in a long row (reduced in blocks) are found, the first one for argmax.
  Tensor r = zeros({200000}, on());
  r.narrow(0, 150001, 1).fill_(3.0);
  r.narrow(0, 170000, 1).fill_(3.0);
  r.narrow(0, 190000, 1).fill_(-2.0);
  EXPECT_EQ(max(r).item<double>(), 3.0);
  EXPECT_EQ(min(r).item<double>(), -2.0);
  EXPECT_TRUE(tensor_equal(argmax(r), tensor(150001)));
  EXPECT_TRUE(tensor_equal(argmin(r), tensor(190000)));
  EXPECT_EQ(sum(r).item<double>(), 4.0);
}

// Reduced elements contiguous in memory take 16-byte vector loads with an unaligned head and a
// short tail, and few outputs split over several blocks merged in a second pass: every dtype,
// views at each 4-byte offset, against the same reduction on the CPU (small integer values, so
// every floating sum is exact before its final rounding).
TEST_P(ReduceTest, ContiguousReductionsOfEveryDtype) {
  auto values = [](int64_t n) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i * 7919 % 5);
    v[1] = 7.0;      // in the unaligned head of most views
    v[n - 2] = 9.0;  // in the tail
    return v;
  };
  auto check = [&](const Tensor& host, const Tensor& dev, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(tensor_equal(sum(dev), sum(host)));
    EXPECT_TRUE(tensor_equal(amax(dev, {-1}), amax(host, {-1})));
    EXPECT_TRUE(tensor_equal(amin(dev, {-1}), amin(host, {-1})));
    EXPECT_TRUE(tensor_equal(sum(dev, {-1}), sum(host, {-1})));
    EXPECT_TRUE(tensor_equal(prod(dev, {-1}), prod(host, {-1})));
  };
  for (DType dt : {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
    const int64_t n = 40003;
    Tensor host = f64(values(n + 4)).to(dt);
    Tensor dev = host.to(device());
    for (int64_t off = 0; off < 4; ++off) {
      std::string what = std::string(dtype_name(dt)) + " at offset " + std::to_string(off);
      check(host.narrow(0, off, n), dev.narrow(0, off, n), what);
      // 3 rows of 13333: each starts at another alignment, each split over blocks.
      check(host.narrow(0, off, 39999).reshape({3, 13333}),
            dev.narrow(0, off, 39999).reshape({3, 13333}), what + ", 3 rows");
      // 281 rows of 141: one block per row.
      check(host.narrow(0, off, 39621).reshape({281, 141}),
            dev.narrow(0, off, 39621).reshape({281, 141}), what + ", 281 rows");
    }
  }
  // More vectors than the grid's threads take four at a time: the grid-stride loop wraps.
  const int64_t big = 2200007;
  Tensor host = f64(values(big + 1)).to(kFloat32);
  Tensor dev = host.to(device());
  check(host.narrow(0, 1, big), dev.narrow(0, 1, big), "float32, 2200007");
  // The same reduction twice gives the same bits.
  Generator gen(7);
  Tensor r = randn({big}, on(), &gen);
  EXPECT_EQ(sum(r).item<float>(), sum(r).item<float>());
}

// --- NaN

TEST_P(ReduceTest, NaNPropagates) {
  // torch.max/min/amax/amin propagate NaN; argmax/argmin treat NaN as the extreme and return its
  // (first) index.
  Tensor x = tensor({1.0, kNaN, 3.0, kNaN}, on());
  EXPECT_TRUE(tensor_equal(max(x), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(min(x), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(amax(x, {0}), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(argmax(x), tensor(1)));
  EXPECT_TRUE(tensor_equal(argmin(x), tensor(1)));
  EXPECT_TRUE(tensor_equal(sum(x), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(max(tensor({kNaN, 5.0}, on())), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(argmax(tensor({kNaN, 5.0}, on())), tensor(0)));
  Tensor m2 = tensor({{1.0, kNaN, 3.0}, {4.0, 5.0, 6.0}, {kNaN, 0.0, kNaN}}, on());
  auto [v, i] = max(m2, 1);
  EXPECT_TRUE(tensor_equal(v, tensor({kNaN, 6.0, kNaN})));
  EXPECT_TRUE(tensor_equal(i, tensor({1, 2, 0})));
  auto [w, j] = min(m2, 0);
  EXPECT_TRUE(tensor_equal(w, tensor({kNaN, kNaN, kNaN})));
  EXPECT_TRUE(tensor_equal(j, tensor({2, 0, 2})));
  EXPECT_TRUE(tensor_equal(amin(m2, {1}), tensor({kNaN, 4.0, kNaN})));
  EXPECT_TRUE(tensor_equal(argmin(m2, 1), tensor({1, 0, 0})));
  // In a long row, split into blocks, one NaN still wins.
  Tensor big = ones({300000}, on());
  big.narrow(0, 123457, 1).fill_(kNaN);
  EXPECT_TRUE(tensor_equal(max(big), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(min(big), tensor(kNaN)));
  EXPECT_TRUE(tensor_equal(argmax(big), tensor(123457)));
}

EMBER_INSTANTIATE_DEVICE_TESTS(ReduceTest);

}  // namespace
}  // namespace ember

namespace ember {
namespace {

class FusedSoftmaxTest : public testing::DeviceTest {};

// softmax and log_softmax run as one fused kernel; they must agree with the op-by-op formulas
// exp(x - max) / sum(exp(x - max)) and (x - max) - log(sum(exp(x - max))) along every dim.
TEST_P(FusedSoftmaxTest, MatchesTheCompositeFormulas) {
  manual_seed(3);
  for (const Shape& shape : {Shape{7}, Shape{4, 9}, Shape{3, 5, 6}, Shape{2, 3, 4, 5}}) {
    Tensor x = (randn(shape) * 4).to(device());
    for (int64_t d = 0; d < x.dim(); ++d) {
      Tensor m = amax(x, {d}, true);
      Tensor e = exp(x - m);
      Tensor s = sum(e, {d}, true);
      EXPECT_TRUE(testing::tensor_close(softmax(x, d), e / s, 1e-5, 1e-7))
          << shape_str(shape) << " dim " << d;
      EXPECT_TRUE(testing::tensor_close(log_softmax(x, d), (x - m) - log(s), 1e-5, 1e-6))
          << shape_str(shape) << " dim " << d;
      EXPECT_TRUE(testing::tensor_close(softmax(x.transpose(0, x.dim() - 1), d),
                                        softmax(x.transpose(0, x.dim() - 1).contiguous(), d), 1e-6,
                                        0));
    }
  }
}

// float32 softmax computes its exponentials with a vectorized approximation; against float64
// (std::exp) it must stay within a few float32 ulps over rows wide enough to take the vector
// path (>= 16) and narrow ones, over a range of scales that reaches exp's underflow.
TEST_P(FusedSoftmaxTest, Float32IsWithinAFewUlpsOfFloat64) {
  manual_seed(11);
  for (int64_t n : {5, 16, 37, 1000}) {
    for (double scale : {0.1, 3.0, 30.0}) {
      Tensor x = (randn({6, n}) * scale).to(device());
      Tensor want = softmax(x.to(kFloat64), 1), want_log = log_softmax(x.to(kFloat64), 1);
      Tensor got = softmax(x, 1).to(kFloat64), got_log = log_softmax(x, 1).to(kFloat64);
      // A few ulps for exp and the division, float32 rounding in a sum of n terms, and the
      // rounding of x - max (|x - max| <= 8 scale) carried into the exponential.
      double rel = 1e-6 + static_cast<double>(n) * 6e-9 + 8 * scale * 6e-8;
      EXPECT_TRUE(testing::tensor_close(got, want, rel, 1e-37)) << n << " " << scale;
      EXPECT_TRUE(testing::tensor_close(got_log, want_log, rel, 1e-5)) << n << " " << scale;
    }
  }
  // -inf entries give exact zeros, a NaN anywhere makes its row NaN, a row of -inf is NaN.
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> row(20, 1.0f);
  row[3] = -inf;
  Tensor special = from_vector(row, Shape{1, 20}).to(device());
  std::vector<double> sm = testing::values_of(softmax(special, 1));
  EXPECT_EQ(sm[3], 0.0);
  EXPECT_NEAR(sm[0], 1.0 / 19, 1e-7);
  row[5] = nan;
  std::vector<double> with_nan = testing::values_of(softmax(from_vector(row).to(device()), 0));
  EXPECT_TRUE(
      std::all_of(with_nan.begin(), with_nan.end(), [](double v) { return std::isnan(v); }));
  Tensor all_minus_inf = full({17}, -inf, {.device = device()});
  std::vector<double> none = testing::values_of(softmax(all_minus_inf, 0));
  EXPECT_TRUE(std::all_of(none.begin(), none.end(), [](double v) { return std::isnan(v); }));
}

// Last-dim rows: up to 8 vectors per thread are held in registers (16-byte loads when every row
// is aligned, scalar loads otherwise), longer rows take three passes. Widths on either side of
// each limit, float32 and float64, aligned and misaligned rows, against the CPU.
TEST_P(FusedSoftmaxTest, LastDimRowsOnEitherSideOfTheRegisterLimits) {
  manual_seed(5);
  for (DType dt : {kFloat32, kFloat64}) {
    for (int64_t n : {64, 67, 1024, 2048, 2049, 4096, 4100, 8192, 8193}) {
      for (int64_t off : {0, 1}) {
        Tensor x = (randn({3 * n + 1}) * 5).to(dt).to(device());
        x = x.narrow(0, off, 3 * n).reshape({3, n});
        Tensor host = x.cpu();
        std::string what = std::string(dtype_name(dt)) + " n " + std::to_string(n) + " offset " +
                           std::to_string(off);
        EXPECT_TRUE(testing::tensor_close(softmax(x, 1), softmax(host, 1), 1e-5, 1e-12)) << what;
        EXPECT_TRUE(testing::tensor_close(log_softmax(x, 1), log_softmax(host, 1), 1e-5, 1e-5))
            << what;
      }
    }
  }
  // A NaN makes its row NaN and a row of -inf is NaN in the register path too; -inf gives 0.
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = zeros({3, 4096});
  x.narrow(0, 0, 1).narrow(1, 4000, 1).fill_(nan);
  x.narrow(0, 1, 1).fill_(-inf);
  x.narrow(0, 2, 1).narrow(1, 17, 1).fill_(-inf);
  std::vector<double> got = testing::values_of(softmax(x.to(device()), 1));
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[4095]));
  EXPECT_TRUE(std::isnan(got[4096]) && std::isnan(got[2 * 4096 - 1]));
  EXPECT_EQ(got[2 * 4096 + 17], 0.0);
  EXPECT_NEAR(got[2 * 4096], 1.0 / 4095, 1e-9);
}

EMBER_INSTANTIATE_DEVICE_TESTS(FusedSoftmaxTest);

}  // namespace
}  // namespace ember
