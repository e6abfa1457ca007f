// tests/internal/test_vec_math.cpp: the float32 exp, log, sigmoid, tanh and GELU of
// cpu_vec_math.h -- error against double-precision references over a sweep of all float bit
// patterns (in ulps; GELU's relative, by region of its lower tail), the vectorized loops giving the
// scalar functions' bits, and the special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_vec_math.h"

namespace ember::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// |got - want| in units of the last place of the float nearest `want` (subnormals: 2^-149).
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::abs(want) > std::numeric_limits<float>::max())
    return got == static_cast<float>(want) ? 0 : 1e9;
  double a = std::abs(want), ulp = std::ldexp(1.0, -149);
  if (a >= std::numeric_limits<float>::min()) {
    int e = 0;
    std::frexp(a, &e);
    ulp = std::ldexp(1.0, e - 24);
  }
  return std::abs(static_cast<double>(got) - want) / ulp;
}

double exp_ref(double x) {
  return std::exp(x);
}
double log_ref(double x) {
  return std::log(x);
}
double sigmoid_ref(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double tanh_ref(double x) {
  return std::tanh(x);
}

struct Case {
  const char* name;
  float (*scalar)(float);
  void (*span)(float*, const float*, int64_t);
  double (*ref)(double);
  double max_ulp;
};

// The bound each function's comment promises; an exhaustive run over all 2^32 floats measured
// 0.99, 0.83, 2.83 and 1.33 ulp.
const Case kCases[] = {{"exp", exp_f32, exp_f32, exp_ref, 1.0},
                       {"log", log_f32, log_f32, log_ref, 1.0},
                       {"sigmoid", sigmoid_f32, sigmoid_f32, sigmoid_ref, 3.0},
                       {"tanh", tanh_f32, tanh_f32, tanh_ref, 2.0}};

// Every 509th bit pattern (about 8.4 million floats of every sign, exponent and class), in chunks
// through the vectorized loop; each result must be within the bound and equal, bit for bit, to
// the scalar function's.
TEST(VecMath, SweepOfAllFloatsWithinUlpBoundsAndLoopsMatchScalar) {
  constexpr uint64_t kStride = 509;
  constexpr int64_t kChunk = 1 << 16;
  std::vector<float> in(kChunk), out(kChunk);
  for (const Case& c : kCases) {
    double worst = 0;
    float worst_x = 0;
    int64_t mismatches = 0;
    uint64_t u = 0;
    while (u < (uint64_t{1} << 32)) {
      int64_t n = 0;
      for (; n < kChunk && u < (uint64_t{1} << 32); ++n, u += kStride) {
        auto bits = static_cast<uint32_t>(u);
        std::memcpy(&in[n], &bits, sizeof bits);
      }
      c.span(out.data(), in.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        float s = c.scalar(in[i]);
        if (std::memcmp(&s, &out[i], sizeof s) != 0) ++mismatches;
        double e = ulp_error(out[i], c.ref(in[i]));
        if (e > worst) {
          worst = e;
          worst_x = in[i];
        }
      }
    }
    EXPECT_LE(worst, c.max_ulp) << c.name << " at x = " << worst_x;
    EXPECT_EQ(mismatches, 0) << c.name;
  }
}

TEST(VecMath, SpecialValues) {
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(-0.0f), 1.0f);
  EXPECT_EQ(exp_f32(kInf), kInf);
  EXPECT_EQ(exp_f32(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(exp_f32(kNaN)));
  // The largest finite result and the first overflow; the smallest subnormal result and 0.
  EXPECT_TRUE(std::isfinite(exp_f32(88.72283f)));
  EXPECT_EQ(exp_f32(88.72284f), kInf);
  EXPECT_EQ(exp_f32(-103.5f), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(exp_f32(-104.0f), 0.0f);
  EXPECT_GT(exp_f32(-100.0f), 0.0f);  // subnormal, not flushed

  EXPECT_EQ(log_f32(1.0f), 0.0f);
  EXPECT_EQ(log_f32(0.0f), -kInf);
  EXPECT_EQ(log_f32(-0.0f), -kInf);
  EXPECT_EQ(log_f32(kInf), kInf);
  EXPECT_TRUE(std::isnan(log_f32(-1.0f)));
  EXPECT_TRUE(std::isnan(log_f32(-kInf)));
  EXPECT_TRUE(std::isnan(log_f32(kNaN)));
  EXPECT_NEAR(log_f32(std::numeric_limits<float>::denorm_min()), -103.27893f, 1e-5);

  EXPECT_EQ(sigmoid_f32(0.0f), 0.5f);
  EXPECT_EQ(sigmoid_f32(kInf), 1.0f);
  EXPECT_EQ(sigmoid_f32(-kInf), 0.0f);
  EXPECT_EQ(sigmoid_f32(100.0f), 1.0f);
  EXPECT_GT(sigmoid_f32(-100.0f), 0.0f);  // e^-100, a subnormal float
  EXPECT_TRUE(std::isnan(sigmoid_f32(kNaN)));

  EXPECT_EQ(tanh_f32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(tanh_f32(-0.0f)));
  EXPECT_EQ(tanh_f32(kInf), 1.0f);
  EXPECT_EQ(tanh_f32(-kInf), -1.0f);
  EXPECT_EQ(tanh_f32(20.0f), 1.0f);
  EXPECT_EQ(tanh_f32(-1e-30f), -1e-30f);
  EXPECT_TRUE(std::isnan(tanh_f32(kNaN)));
}

// Loops of every length up to four full AVX-512 vectors and then some, so that the blocked body,
// the vector remainder and the scalar tail all run (log's negative inputs give NaN: bits compared).
TEST(VecMath, LoopsOfEveryLengthMatchScalar) {
  std::vector<float> in(140), out(140);
  for (size_t i = 0; i < in.size(); ++i) in[i] = -40.0f + 0.59f * static_cast<float>(i);
  for (const Case& c : kCases)
    for (int64_t n = 0; n <= 140; ++n) {
      std::fill(out.begin(), out.end(), -1.0f);
      c.span(out.data(), in.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        float want = c.scalar(in[i]);
        EXPECT_EQ(std::memcmp(&out[i], &want, sizeof want), 0) << c.name << " " << n << " " << i;
      }
      for (int64_t i = n; i < 140; ++i) EXPECT_EQ(out[i], -1.0f) << c.name << " wrote past " << n;
    }
}

// GELU and its gradient over every 509th float: relative error against double precision within
// the bounds normal_cdf_f32's comment gives (a swept run measured 1.4e-6 down to x = -3, 2.9e-6 to
// -5.6, 6.9e-6 to -8.5, 1.8e-5 below, where results near the subnormals count against 1e-37); the
// gradient's error relative to the size of its two terms, as the gradient crosses 0 near
// x = -0.75. The dense loops give the scalar functions' bits, in place too.
TEST(VecMath, GeluWithinRelativeBoundsAndLoopsMatchScalar) {
  constexpr uint64_t kStride = 509;
  constexpr int64_t kChunk = 1 << 16;
  const double inv_sqrt2 = 1 / std::sqrt(2.0), inv_sqrt2pi = 1 / std::sqrt(2 * std::acos(-1.0));
  const double lower[] = {-3, -5.6, -8.5, -1e39}, bound[] = {2e-6, 4e-6, 1e-5, 3e-5};
  double worst[4] = {0, 0, 0, 0}, worst_grad = 0;
  int64_t mismatches = 0;
  std::vector<float> x(kChunk), g(kChunk), y(kChunk), dx(kChunk), in_place(kChunk);
  uint64_t u = 0;
  while (u < (uint64_t{1} << 32)) {
    int64_t n = 0;
    for (; n < kChunk && u < (uint64_t{1} << 32); u += kStride) {
      auto bits = static_cast<uint32_t>(u);
      float v;
      std::memcpy(&v, &bits, sizeof v);
      if (!std::isfinite(v)) continue;
      x[n] = v;
      g[n] = 1.0f + static_cast<float>(n % 7) * 0.25f;
      ++n;
    }
    gelu_f32(y.data(), x.data(), n);
    gelu_backward_f32(dx.data(), x.data(), g.data(), n);
    std::copy(g.begin(), g.begin() + n, in_place.begin());
    gelu_backward_f32(in_place.data(), x.data(), in_place.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float s = gelu_f32(x[i]), sg = gelu_backward_f32(x[i], g[i]);
      if (std::memcmp(&s, &y[i], sizeof s) != 0 || std::memcmp(&sg, &dx[i], sizeof sg) != 0 ||
          std::memcmp(&sg, &in_place[i], sizeof sg) != 0)
        ++mismatches;
      const double xd = x[i], cdf = 0.5 * std::erfc(-xd * inv_sqrt2);
      const double want = xd * cdf;
      const double e = std::abs(y[i] - want) / std::max(std::abs(want), 1e-37);
      int r = 0;
      while (xd < lower[r]) ++r;
      worst[r] = std::max(worst[r], e);
      const double term = xd * std::exp(-0.5 * xd * xd) * inv_sqrt2pi;
      const double want_grad = g[i] * (cdf + term);
      const double scale = std::max(g[i] * (cdf + std::abs(term)), 1e-37);
      worst_grad = std::max(worst_grad, std::abs(dx[i] - want_grad) / scale);
    }
  }
  for (int r = 0; r < 4; ++r) EXPECT_LE(worst[r], bound[r]) << "region " << r;
  EXPECT_LE(worst_grad, 5e-6);
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(gelu_f32(0.0f), 0.0f);
  EXPECT_EQ(gelu_f32(kInf), kInf);
  EXPECT_TRUE(std::isnan(gelu_f32(kNaN)));
  EXPECT_EQ(gelu_backward_f32(0.0f, 2.0f), 1.0f);
  EXPECT_EQ(gelu_backward_f32(30.0f, 2.0f), 2.0f);
  EXPECT_EQ(gelu_backward_f32(-30.0f, 2.0f), 0.0f);
  EXPECT_TRUE(std::isnan(gelu_backward_f32(kNaN, 1.0f)));
}

}  // namespace
}  // namespace ember::cpu
