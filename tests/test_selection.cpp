// tests/test_selection.cpp: what the op table and the fixtures leave out of searchsorted,
// bucketize and the data-sized ops -- sorter and side, where(condition), masked_scatter_ in place
// with its gradient, masked_select's gradient, and the errors.
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;

class SelectionTest : public testing::DeviceTest {};

TEST_P(SelectionTest, SearchsortedSorterSideAndScalars) {
  Tensor seq = tensor({3.0, 1.0, 2.0}, on());
  Tensor sorter = tensor({1, 2, 0}, on()).to(kInt64);
  Tensor v = tensor({2.0, 0.5, 3.5}, on());
  EXPECT_TRUE(tensor_equal(searchsorted(seq, v, false, false, "", sorter),
                           tensor({1, 0, 3}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(searchsorted(seq, v, false, false, "right", sorter),
                           tensor({2, 0, 3}, on()).to(kInt64)));
  Tensor s = searchsorted(tensor({1.0, 2.0, 3.0}, on()), Scalar(2.5), true);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), kInt32);
  EXPECT_EQ(s.item<int32_t>(), 2);
  EXPECT_EQ(bucketize(Scalar(2), tensor({1, 2, 5}, on()).to(kInt64), false, true).item<int64_t>(),
            2);
}

TEST_P(SelectionTest, WhereOfAConditionGivesCoordinatesPerDim) {
  Tensor c = tensor({{0, 1, 1}, {1, 0, 0}}, on()).to(kBool);
  std::vector<Tensor> w = where(c);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(tensor_equal(w[0], tensor({0, 0, 1}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(w[1], tensor({1, 2, 0}, on()).to(kInt64)));
  EXPECT_EQ(nonzero(full({}, 3.0, on())).sizes(), (Shape{1, 0}));
  EXPECT_EQ(nonzero(zeros({2, 3}, on())).sizes(), (Shape{0, 2}));
}

TEST_P(SelectionTest, MaskedOpsInPlaceAndTheirGradients) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, on(kFloat64)).requires_grad_(true);
  Tensor m = tensor({1, 0, 1, 0}, on()).to(kBool);
  Tensor src = tensor({10.0, 20.0, 30.0}, on(kFloat64)).requires_grad_(true);
  Tensor y = masked_scatter(x, m, src);
  EXPECT_TRUE(tensor_equal(y, tensor({10.0, 2.0, 20.0, 4.0}, on(kFloat64))));
  (y * tensor({1.0, 2.0, 3.0, 4.0}, on(kFloat64))).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), tensor({0.0, 2.0, 0.0, 4.0}, on(kFloat64))));
  EXPECT_TRUE(tensor_equal(src.grad(), tensor({1.0, 3.0, 0.0}, on(kFloat64))));
  Tensor z = zeros({4}, on());
  Tensor& r = z.masked_scatter_(m, tensor({5.0f, 6.0f}, on()));
  EXPECT_TRUE(r.is_same(z));
  EXPECT_TRUE(tensor_equal(z, tensor({5.0f, 0.0f, 6.0f, 0.0f}, on())));
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, on(kFloat64)).requires_grad_(true);
  masked_select(a, m).sum().backward();
  EXPECT_TRUE(tensor_equal(a.grad(), tensor({1.0, 0.0, 1.0, 0.0}, on(kFloat64))));
}

TEST_P(SelectionTest, BadInputIsAClearError) {
  Tensor f = tensor({1.0f, 2.0f}, on());
  EXPECT_TRUE(throws_error([&] { searchsorted(f, f, false, true, "left"); }, ErrorKind::Value,
                           {"disagree"}));
  EXPECT_TRUE(throws_error([&] { searchsorted(f, f, false, false, "middle"); }, ErrorKind::Value,
                           {"side must be"}));
  EXPECT_TRUE(throws_error(
      [&] {
        searchsorted(zeros({2, 3}, on()), zeros({3, 2}, on()));
      },
      ErrorKind::Shape, {"same leading dims"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bucketize(f, zeros({2, 2}, on()));
      },
      ErrorKind::Shape, {"boundaries must be 1-D"}));
  EXPECT_TRUE(throws_error([&] { bincount(f); }, ErrorKind::DType, {"non-negative integers"}));
  EXPECT_TRUE(throws_error(
      [&] {
        bincount(tensor({1, -1}, on()).to(kInt64));
      },
      ErrorKind::Value, {"non-negative", "-1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        histc(tensor({1, 2}, on()).to(kInt64));
      },
      ErrorKind::DType, {"[histc]"}));
  EXPECT_TRUE(throws_error([&] { masked_select(f, f); }, ErrorKind::DType, {"boolean masks"}));
  Tensor all = tensor({1, 1}, on()).to(kBool);
  EXPECT_TRUE(throws_error([&] { masked_scatter(f, all, tensor({1.0f}, on())); }, ErrorKind::Shape,
                           {"selects 2", "has only 1"}));
  EXPECT_TRUE(throws_error([&] { unique(f, true, false, false, 0); }, ErrorKind::NotImplemented,
                           {"[unique] over a dim"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(SelectionTest);

}  // namespace
}  // namespace ember
