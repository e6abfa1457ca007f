// tests/test_index_update.cpp: what the op table and fixtures leave out of the index updates,
// diagonal, pad and the padding layers -- in-place forms, bool-mask index_put, the diagonal as a
// view that writes through, negative indices, and the errors.
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;
namespace F = nn::functional;

class IndexUpdateTest : public testing::DeviceTest {};

TEST_P(IndexUpdateTest, InPlaceFormsAndMasks) {
  Tensor x = zeros({2, 3}, on());
  Tensor& r = x.index_add_(1, tensor({0, -1}, on()).to(kInt64), ones({2, 2}, on()), 3);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(tensor_equal(x, tensor({{3.0f, 0.0f, 3.0f}, {3.0f, 0.0f, 3.0f}}, on())));
  x.index_fill_(0, tensor({1}, on()).to(kInt64), 7);
  EXPECT_TRUE(tensor_equal(x.select(0, 1), full({3}, 7.0, on())));
  x.index_copy_(1, tensor({1}, on()).to(kInt64), tensor({{5.0f}, {6.0f}}, on()));
  EXPECT_TRUE(tensor_equal(x, tensor({{3.0f, 5.0f, 3.0f}, {7.0f, 6.0f, 7.0f}}, on())));
  Tensor m = tensor({{1, 0, 1}, {0, 0, 1}}, on()).to(kBool);
  x.index_put_({m}, tensor({-1.0f}, on()));
  EXPECT_TRUE(tensor_equal(x, tensor({{-1.0f, 5.0f, -1.0f}, {7.0f, 6.0f, -1.0f}}, on())));
}

// A position named twice takes its last copy (PyTorch's CPU order), never the sum of both; the
// same for index_put without accumulate.
TEST_P(IndexUpdateTest, DuplicateIndicesCopyTheLastSlice) {
  Tensor x = zeros({4}, on());
  Tensor at = tensor({2, 0, 2, 2}, on()).to(kInt64);
  EXPECT_TRUE(tensor_equal(index_copy(x, 0, at, tensor({1.0f, 2.0f, 3.0f, 4.0f}, on())),
                           tensor({2.0f, 0.0f, 4.0f, 0.0f}, on())));
  EXPECT_TRUE(tensor_equal(index_put(x, {at}, tensor({1.0f, 2.0f, 3.0f, 4.0f}, on())),
                           tensor({2.0f, 0.0f, 4.0f, 0.0f}, on())));
  EXPECT_TRUE(tensor_equal(index_put(x, {at}, tensor({1.0f, 2.0f, 3.0f, 4.0f}, on()), true),
                           tensor({2.0f, 0.0f, 8.0f, 0.0f}, on())));
}

// index_add large enough to be split across threads (by destination rows along dim 0, by outer
// blocks along dim 1) equals scatter_add with the index written out, which runs the general
// loop; repeated indices add up.
TEST_P(IndexUpdateTest, LargeIndexAddMatchesScatterAdd) {
  Tensor x = randn({300, 200}, on());
  Tensor rows = randint(0, 300, {5000}, on()), cols = randint(0, 200, {700}, on());
  Tensor by_rows = randn({5000, 200}, on()), by_cols = randn({300, 700}, on());
  EXPECT_TRUE(testing::tensor_close(
      index_add(x, 0, rows, by_rows),
      scatter_add(x, 0, rows.view({-1, 1}).expand({5000, 200}).contiguous(), by_rows), 1e-5, 1e-5));
  EXPECT_TRUE(testing::tensor_close(
      index_add(x, 1, cols, by_cols),
      scatter_add(x, 1, cols.view({1, -1}).expand({300, 700}).contiguous(), by_cols), 1e-5, 1e-5));
}

// scatter writes src's leading corner when src is larger than index, in place too; the value
// form; a repeated position takes the last write; the errors name the rule.
TEST_P(IndexUpdateTest, ScatterFormsAndErrors) {
  Tensor x = zeros({2, 3}, on());
  Tensor index = tensor({{2, 0}}, on()).to(kInt64);  // (1, 2) along dim 1
  Tensor src = tensor({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}}, on());
  EXPECT_TRUE(tensor_equal(scatter(x, 1, index, src),
                           tensor({{2.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 0.0f}}, on())));
  EXPECT_TRUE(tensor_equal(scatter(x, 1, index, Scalar(7.0)),
                           tensor({{7.0f, 0.0f, 7.0f}, {0.0f, 0.0f, 0.0f}}, on())));
  Tensor twice = tensor({{1, 1}}, on()).to(kInt64);
  EXPECT_TRUE(tensor_equal(scatter(x, 1, twice, src),
                           tensor({{0.0f, 2.0f, 0.0f}, {0.0f, 0.0f, 0.0f}}, on())));
  Tensor& r = x.scatter_reduce_(1, twice, src, "sum", false);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(tensor_equal(x, tensor({{0.0f, 3.0f, 0.0f}, {0.0f, 0.0f, 0.0f}}, on())));
  x.scatter_(1, twice, src, "multiply");  // 3 * 1 * 2
  EXPECT_TRUE(tensor_equal(x, tensor({{0.0f, 6.0f, 0.0f}, {0.0f, 0.0f, 0.0f}}, on())));
  EXPECT_TRUE(throws_error([&] { (void)scatter(x, 1, tensor({{3}}, on()).to(kInt64), src); },
                           ErrorKind::Index, {"[scatter]", "index 3 is out of bounds"}));
  EXPECT_TRUE(throws_error([&] { (void)scatter(x, 1, index, src.to(kFloat64)); }, ErrorKind::DType,
                           {"[scatter]", "self.dtype to be equal to src.dtype"}));
  EXPECT_TRUE(throws_error([&] { (void)scatter(x, 1, index.view({2}), src); }, ErrorKind::Shape,
                           {"[scatter]", "same number of dimensions"}));
  EXPECT_TRUE(throws_error([&] { (void)scatter_reduce(x, 1, index, src, "max"); }, ErrorKind::Value,
                           {"[scatter_reduce]", "sum, prod, mean, amax or amin"}));
  EXPECT_TRUE(throws_error([&] { (void)scatter(x, 1, index, src, "sum"); }, ErrorKind::Value,
                           {"[scatter]", "add or multiply"}));
}

TEST_P(IndexUpdateTest, DiagonalIsAViewAndPadLayersPad) {
  Tensor a = zeros({3, 3}, on());
  diagonal(a).fill_(1);
  EXPECT_TRUE(tensor_equal(a, eye(3, std::nullopt, on())));
  EXPECT_EQ(diagonal(zeros({2, 5}, on()), 7).sizes(), (Shape{0}));
  Tensor img = arange(6, on()).to(kFloat32).reshape({1, 2, 3});
  EXPECT_EQ(nn::ZeroPad2d(std::vector<int64_t>{1})->forward(img).sizes(), (Shape{1, 4, 5}));
  Tensor reflected = nn::ReflectionPad1d(std::vector<int64_t>{2, 1})->forward(img);
  EXPECT_TRUE(
      tensor_equal(reflected.select(1, 0), tensor({{2.0f, 1.0f, 0.0f, 1.0f, 2.0f, 1.0f}}, on())));
  EXPECT_EQ(nn::ConstantPad2d(std::vector<int64_t>{1, 0, 0, 1}, 2.5)->extra_repr(),
            "(1, 0, 0, 1), value=2.5");
}

TEST_P(IndexUpdateTest, BadInputIsAClearError) {
  Tensor x = zeros({2, 3}, on());
  Tensor idx = tensor({0, 3}, on()).to(kInt64);
  EXPECT_TRUE(throws_error(
      [&] {
        index_add(x, 1, idx, ones({2, 2}, on()));
      },
      ErrorKind::Index, {"[index_add] index 3 is out of bounds", "size 3"}));
  EXPECT_TRUE(throws_error(
      [&] {
        index_copy(x, 1, tensor({0}, on()).to(kInt64), ones({2, 2}, on()));
      },
      ErrorKind::Shape, {"[index_copy] source of shape [2, 2] must be [2, 1]"}));
  EXPECT_TRUE(throws_error([&] { index_fill(x, 0, tensor({0.0f}, on()), 1); }, ErrorKind::DType,
                           {"index must be int64"}));
  EXPECT_TRUE(throws_error([&] { index_put(x, {tensor({5}, on()).to(kInt64)}, ones({3}, on())); },
                           ErrorKind::Index, {"[index_put] index 5"}));
  EXPECT_TRUE(
      throws_error([&] { diagonal(x, 0, 1, 1); }, ErrorKind::Index, {"cannot be the same"}));
  EXPECT_TRUE(throws_error([&] { F::pad(x, {1}); }, ErrorKind::Shape, {"must be even"}));
  EXPECT_TRUE(throws_error(
      [&] {
        F::pad(x, {3, 0}, "reflect");
      },
      ErrorKind::Value, {"reflect padding (3, 0) must be smaller"}));
  EXPECT_TRUE(throws_error([&] { F::pad(x, {1, 1}, "wrap"); }, ErrorKind::Value, {"unknown mode"}));
  EXPECT_TRUE(throws_error([&] { cross(x.t(), x.t()); }, ErrorKind::Shape, {"must have length 3"}));
  EXPECT_TRUE(throws_error([&] { cdist(x, zeros({2, 2}, on())); }, ErrorKind::Shape, {"[cdist]"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(IndexUpdateTest);

}  // namespace
}  // namespace ember
