// tests/test_sort.cpp: what the op table and the PyTorch fixtures leave out of sort, topk and
// the medians -- long rows of every key width against std::stable_sort (the radix passes, NaNs
// and signed zeros mixed in, many ties), topk's heap against a full sort, 0-dim inputs,
// gradients through a dim other than the last, and the errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "test_util.h"

namespace ember {
namespace {

class SortTest : public testing::DeviceTest {};

// The stable order of v under "a before b" = less(a, b), NaN after every number.
std::vector<int64_t> reference_order(const std::vector<double>& v, bool descending) {
  std::vector<int64_t> at(v.size());
  std::iota(at.begin(), at.end(), int64_t{0});
  auto rank = [](double x) { return std::isnan(x) ? std::numeric_limits<double>::infinity() : x; };
  std::stable_sort(at.begin(), at.end(), [&](int64_t a, int64_t b) {
    const double x = v[static_cast<size_t>(a)], y = v[static_cast<size_t>(b)];
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return descending ? (xn && !yn) : (!xn && yn);
    return descending ? rank(x) > rank(y) : rank(x) < rank(y);
  });
  return at;
}

// n values with ties, NaNs, infinities and both zeros.
std::vector<double> awkward_values(int64_t n) {
  std::vector<double> v;
  uint64_t s = 12345;
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -0.0, 0.0,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto r = static_cast<int64_t>(s >> 33);
    v.push_back(r % 17 == 0 ? specials[r % 5] : static_cast<double>(r % 2001 - 1000) / 8);
  }
  return v;
}

TEST_P(SortTest, LongRowsOfEveryKeyWidthMatchAStableSort) {
  const std::vector<double> v = awkward_values(5000);
  for (DType dtype : {kFloat32, kFloat64, kBFloat16, kFloat16, kInt32, kInt64, kUInt8}) {
    Tensor x = from_vector<double>(v, Shape{5000}).to(dtype);
    // The dtype's own values (rounded; integers lose NaN and infinities) are what is ordered.
    const std::vector<double> xv = testing::values_of(x);
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + (descending ? " descending" : ""));
      auto [values, indices] = sort(x.to(device()), -1, descending);
      const std::vector<int64_t> want = reference_order(xv, descending);
      EXPECT_EQ(indices.cpu().to_vector<int64_t>(), want);
      std::vector<double> got = testing::values_of(values);
      for (size_t i = 0; i < want.size(); ++i) {
        const double e = xv[static_cast<size_t>(want[i])];
        ASSERT_TRUE(std::isnan(e) ? std::isnan(got[i]) : got[i] == e) << "at " << i;
      }
    }
  }
}

TEST_P(SortTest, TopkHeapAgreesWithTheFullSort) {
  Tensor x = from_vector<double>(awkward_values(20000), Shape{4, 5000}).to(kFloat32).to(device());
  for (bool largest : {true, false}) {
    for (int64_t k : {1, 7, 100, 2000}) {  // the heap up to n / 8, a sort beyond
      auto [v, i] = topk(x, k, 1, largest);
      auto [sv, si] = sort(x, 1, largest);
      EXPECT_TRUE(testing::tensor_equal(i, si.narrow(1, 0, k))) << k << " " << largest;
      EXPECT_TRUE(testing::tensor_equal(v.isnan(), sv.narrow(1, 0, k).isnan()));
    }
  }
}

TEST_P(SortTest, ZeroDimAndEmptyInputs) {
  Tensor s = full({}, 2.5, on(kFloat32));
  auto [v, i] = sort(s);
  EXPECT_EQ(v.dim(), 0);
  EXPECT_EQ(v.item<float>(), 2.5f);
  EXPECT_EQ(i.item<int64_t>(), 0);
  EXPECT_EQ(std::get<1>(topk(s, 1)).item<int64_t>(), 0);
  EXPECT_EQ(median(s).item<float>(), 2.5f);
  auto [ev, ei] = sort(zeros({3, 0}, on()), 1);
  EXPECT_EQ(ev.sizes(), (Shape{3, 0}));
  EXPECT_EQ(std::get<0>(topk(zeros({3, 4}, on()), 0)).sizes(), (Shape{3, 0}));
  EXPECT_TRUE(std::isnan(median(zeros({0}, on())).item<float>()));
}

TEST_P(SortTest, GradientsReachThePickedElementsAlongAnyDim) {
  Tensor x = tensor({{0.5, -1.0, 2.0}, {3.0, 0.25, -2.0}}, on(kFloat64)).requires_grad_(true);
  Tensor w = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on(kFloat64));
  (std::get<0>(sort(x, 0, true)) * w).sum().backward();
  EXPECT_TRUE(
      testing::tensor_equal(x.grad(), tensor({{4.0, 5.0, 3.0}, {1.0, 2.0, 6.0}}, on(kFloat64))));
  Tensor y = x.detach().requires_grad_(true);
  std::get<0>(median(y, 1, true)).sum().backward();
  EXPECT_TRUE(
      testing::tensor_equal(y.grad(), tensor({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}, on(kFloat64))));
  Tensor z = x.detach().requires_grad_(true);
  std::get<0>(kthvalue(z, 3, 1)).sum().backward();
  EXPECT_TRUE(
      testing::tensor_equal(z.grad(), tensor({{0.0, 0.0, 1.0}, {1.0, 0.0, 0.0}}, on(kFloat64))));
}

TEST_P(SortTest, BadArgumentsAreClearErrors) {
  Tensor x = zeros({3, 4}, on());
  EXPECT_TRUE(testing::throws_error([&] { topk(x, 5); }, ErrorKind::Index,
                                    {"[topk] k (5) is out of range"}));
  EXPECT_TRUE(
      testing::throws_error([&] { topk(x, -1, 0); }, ErrorKind::Index, {"k must be in [0, 3]"}));
  EXPECT_TRUE(
      testing::throws_error([&] { kthvalue(x, 0); }, ErrorKind::Index, {"k must be in [1, 4]"}));
  EXPECT_TRUE(testing::throws_error([&] { sort(x, 2); }, ErrorKind::Index, {"sort"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        median(zeros({2, 0}, on()), 1);
      },
      ErrorKind::Index, {"[median] cannot take the median of an empty dimension"}));
  EXPECT_TRUE(
      testing::throws_error([&] { median(zeros({0}, on(kInt64))); }, ErrorKind::DType, {"NaN"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(SortTest);

}  // namespace
}  // namespace ember
