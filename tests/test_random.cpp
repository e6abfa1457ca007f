// tests/test_random.cpp: random tensors -- manual_seed and Generator reproducibility, the
// distributions of rand/randn/randint/randperm (loose statistical bounds), in-place uniform_ and
// normal_ (also on strided views), dtype and range errors, and independence from thread count.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_equal;
using testing::throws_error;
using testing::values_of;

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double variance_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

class RandomTest : public testing::DeviceTest {};

TEST_P(RandomTest, ManualSeedReproducesEveryFactory) {
  auto draw = [&] {
    return std::vector<Tensor>{rand({100}, on()), randn({7, 9}, on()), randint(0, 1000, {50}, on()),
                               randperm(64, on()), rand({5}, on(kFloat64))};
  };
  manual_seed(123);
  std::vector<Tensor> first = draw();
  manual_seed(123);
  std::vector<Tensor> again = draw();
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(tensor_equal(again[i], first[i])) << i;
  manual_seed(124);
  std::vector<Tensor> other = draw();
  for (size_t i = 0; i < first.size(); ++i) EXPECT_FALSE(tensor_equal(other[i], first[i])) << i;
  // Successive draws continue the stream rather than repeat it.
  manual_seed(123);
  Tensor a = rand({100}, on()), b = rand({100}, on());
  EXPECT_FALSE(tensor_equal(a, b));
  EXPECT_TRUE(tensor_equal(a, first[0]));
}

TEST_P(RandomTest, GeneratorObjects) {
  Generator g1(7), g2(7), g3(8);
  EXPECT_EQ(g1.seed(), 7u);
  EXPECT_EQ(g1.offset(), 0u);
  Tensor a = rand({33}, on(), &g1);
  EXPECT_GT(g1.offset(), 0u);
  EXPECT_TRUE(tensor_equal(rand({33}, on(), &g2), a));
  EXPECT_FALSE(tensor_equal(rand({33}, on(), &g3), a));
  EXPECT_TRUE(tensor_equal(randn({4}, on(), &g1), randn({4}, on(), &g2)));
  // Replaying from a saved offset, and reseeding, repeat the stream.
  uint64_t saved = g1.offset();
  Tensor b = randint(0, 100, {20}, on(), &g1);
  g1.set_offset(saved);
  EXPECT_TRUE(tensor_equal(randint(0, 100, {20}, on(), &g1), b));
  g1.manual_seed(7);
  EXPECT_EQ(g1.offset(), 0u);
  EXPECT_TRUE(tensor_equal(rand({33}, on(), &g1), a));
  // An explicit generator leaves the default one alone.
  manual_seed(5);
  Tensor x = rand({10}, on());
  manual_seed(5);
  Generator g(99);
  rand({1000}, on(), &g);
  randperm(10, on(), &g);
  EXPECT_TRUE(tensor_equal(rand({10}, on()), x));
  // The default generator of this device is the one the factories use.
  Generator& def = default_generator(device());
  manual_seed(11);
  Tensor y = rand({10}, on());
  EXPECT_EQ(def.seed(), 11u);
  def.manual_seed(11);
  EXPECT_TRUE(tensor_equal(rand({10}, on()), y));
}

TEST_P(RandomTest, RandIsUniformOnZeroOne) {
  manual_seed(2024);
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor t = rand({100000}, on(dt));
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(t.device(), resolve_device(device()));
    std::vector<double> v = values_of(t);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0);
    // Mean 1/2 and variance 1/12; the standard error of the mean is ~0.0009 here.
    EXPECT_NEAR(mean_of(v), 0.5, 0.01) << dt;
    EXPECT_NEAR(variance_of(v), 1.0 / 12.0, 0.005) << dt;
    // Each tenth of [0, 1) holds about a tenth of the samples.
    std::vector<int> bins(10, 0);
    for (double x : v) ++bins[static_cast<int>(x * 10)];
    for (int c : bins) EXPECT_NEAR(c, 10000, 600) << dt;
  }
}

TEST_P(RandomTest, RandnIsStandardNormal) {
  manual_seed(77);
  for (DType dt : {kFloat32, kFloat64}) {
    std::vector<double> v = values_of(randn({100000}, on(dt)));
    EXPECT_NEAR(mean_of(v), 0.0, 0.02) << dt;
    EXPECT_NEAR(std::sqrt(variance_of(v)), 1.0, 0.02) << dt;
    // About 68.3% within one standard deviation, 95.4% within two.
    double one = 0, two = 0;
    for (double x : v) {
      one += std::abs(x) < 1;
      two += std::abs(x) < 2;
    }
    EXPECT_NEAR(one / 1e5, 0.6827, 0.01) << dt;
    EXPECT_NEAR(two / 1e5, 0.9545, 0.01) << dt;
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST_P(RandomTest, RandintCoversItsRange) {
  manual_seed(3);
  Tensor t = randint(-3, 4, {10000}, on());
  EXPECT_EQ(t.dtype(), kInt64);
  std::vector<double> v = values_of(t);
  std::set<double> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3}));
  for (double x : seen) EXPECT_NEAR(std::count(v.begin(), v.end(), x), 10000.0 / 7, 200) << x;
  Tensor u = randint(5, {200}, on(kInt32));
  EXPECT_EQ(u.dtype(), kInt32);
  std::vector<double> w = values_of(u);
  EXPECT_EQ(std::set<double>(w.begin(), w.end()), (std::set<double>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(tensor_equal(randint(7, 8, {5}, on()), full({5}, 7, on(kInt64))));
  // A range wider than 32 bits.
  std::vector<double> big = values_of(randint(0, int64_t{1} << 40, {1000}, on()));
  EXPECT_GT(*std::max_element(big.begin(), big.end()), std::ldexp(1.0, 38));
}

TEST_P(RandomTest, RandpermIsAPermutation) {
  manual_seed(8);
  Tensor p = randperm(1000, on());
  EXPECT_EQ(p.dtype(), kInt64);
  EXPECT_EQ(p.sizes(), (Shape{1000}));
  EXPECT_EQ(p.device(), resolve_device(device()));
  std::vector<double> v = values_of(p), sorted = v, identity(1000);
  std::sort(sorted.begin(), sorted.end());
  std::iota(identity.begin(), identity.end(), 0.0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(v, identity);  // 1 chance in 1000! of failing
  EXPECT_EQ(randperm(0, on()).numel(), 0);
  EXPECT_TRUE(tensor_equal(randperm(1, on()), tensor({0}, on())));
  EXPECT_EQ(randperm(10, on(kInt32)).dtype(), kInt32);
  EXPECT_TRUE(throws_error([&] { randperm(-1, on()); }, ErrorKind::Value, {"non-negative"}));
}

TEST_P(RandomTest, UniformAndNormalInPlace) {
  manual_seed(10);
  Tensor t = empty({20000}, on());
  Tensor& r = uniform_(t, -2, 3);
  EXPECT_TRUE(&r == &t);
  std::vector<double> v = values_of(t);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -2.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 3.0);
  EXPECT_NEAR(mean_of(v), 0.5, 0.05);
  EXPECT_NEAR(variance_of(v), 25.0 / 12.0, 0.1);
  Tensor n = empty({20000}, on(kFloat64));
  normal_(n, 10, 0.5);
  std::vector<double> w = values_of(n);
  EXPECT_NEAR(mean_of(w), 10.0, 0.02);
  EXPECT_NEAR(std::sqrt(variance_of(w)), 0.5, 0.02);
  // Same seed, same numbers, whether made by rand or by uniform_.
  manual_seed(4);
  Tensor a = rand({50}, on());
  manual_seed(4);
  Tensor b = empty({50}, on());
  uniform_(b);
  EXPECT_TRUE(tensor_equal(b, a));
}

TEST_P(RandomTest, InPlaceOnANonContiguousView) {
  manual_seed(12);
  Tensor base = zeros({100, 4}, on());
  Tensor col = base.select(1, 2);  // stride 4
  uniform_(col, 1, 2);
  std::vector<double> v = values_of(base);
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 4; ++j) {
      double x = v[i * 4 + j];
      if (j == 2)
        EXPECT_TRUE(x >= 1 && x < 2) << i;
      else
        EXPECT_EQ(x, 0.0) << i << "," << j;
    }
  std::set<double> distinct(v.begin(), v.end());
  EXPECT_GT(distinct.size(), 90u);  // the column got many different numbers, not one repeated
  Tensor t = base.t();              // (4, 100), strides (1, 4)
  normal_(t, -5, 1);
  std::vector<double> w = values_of(base);
  EXPECT_NEAR(mean_of(w), -5.0, 0.25);
  EXPECT_EQ(std::count(w.begin(), w.end(), 0.0), 0);
}

TEST_P(RandomTest, DTypeAndRangeErrors) {
  EXPECT_TRUE(throws_error([&] { rand({3}, on(kInt64)); }, ErrorKind::DType,
                           {"[rand]", "floating point", "int64"}));
  EXPECT_TRUE(throws_error([&] { randn({3}, on(kInt32)); }, ErrorKind::DType, {"[randn]"}));
  EXPECT_TRUE(throws_error([&] { rand({3}, on(kBool)); }, ErrorKind::DType, {"bool"}));
  Tensor i = zeros({3}, on(kInt64));
  EXPECT_TRUE(throws_error([&] { uniform_(i); }, ErrorKind::DType, {"[uniform_]"}));
  EXPECT_TRUE(throws_error([&] { normal_(i); }, ErrorKind::DType, {"[normal_]"}));
  EXPECT_TRUE(
      throws_error([&] { randint(5, 5, {3}, on()); }, ErrorKind::Value, {"from=5 >= to=5"}));
  EXPECT_TRUE(throws_error([&] { randint(6, 2, {3}, on()); }, ErrorKind::Value, {"from=6"}));
  EXPECT_TRUE(throws_error([&] { randint(0, {3}, on()); }, ErrorKind::Value, {"to=0"}));
  Tensor f = zeros({3}, on());
  EXPECT_TRUE(throws_error([&] { normal_(f, 0, -1); }, ErrorKind::Value, {"std >= 0.0"}));
  EXPECT_TRUE(throws_error([&] { uniform_(f, 2, 1); }, ErrorKind::Value, {"from <= to"}));
}

TEST_P(RandomTest, ResultsDoNotDependOnTheNumberOfThreads) {
  int before = get_num_threads();
  auto draw = [&](int threads) {
    set_num_threads(threads);
    manual_seed(31337);
    std::vector<Tensor> out{rand({1000000}, on()), randn({300001}, on(kFloat64)),
                            randint(0, 1 << 20, {200000}, on())};
    return out;
  };
  std::vector<Tensor> one = draw(1), two = draw(2);
  set_num_threads(before);
  EXPECT_EQ(get_num_threads(), before);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(tensor_equal(two[i], one[i])) << i;
  EXPECT_TRUE(throws_error([] { set_num_threads(0); }, ErrorKind::Value, {"positive"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(RandomTest);

}  // namespace
}  // namespace ember
