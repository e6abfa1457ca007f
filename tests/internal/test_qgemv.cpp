// tests/internal/test_qgemv.cpp: the quantized weight-direct products of cpu_qgemv.h at every level
// this CPU runs (baseline, AVX2, AVX-512, whichever one cpu_isa() picks) -- int8 rows, Q8_0, Q4_0
// and Q4_1 blocks of random bytes against a float64 reference over the same dequantized elements
// (kernels/quant_blocks.h) for 1 to 4 rows, k on and off the 32-element blocks (int8), n on and
// off the column blocks; c's padding untouched; 1 vs 2 threads bit for bit; taller products
// refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_qgemv.h"
#include "ember/half.h"

namespace ember::cpu {
namespace {

using kernels::QuantKind;

std::vector<CpuIsa> levels() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : kAllCpuIsas)
    if (isa <= detected_isa()) out.push_back(isa);
  return out;
}

const char* kind_name(QuantKind kind) {
  const char* names[] = {"int8", "Q8_0", "Q4_0", "Q4_1"};
  return names[static_cast<int>(kind)];
}

// n random rows of k elements: random bytes with scales of a realistic size (finite float16 or
// float32 around 0.01).
std::vector<unsigned char> random_rows(QuantKind kind, int64_t n, int64_t k, std::mt19937& rng) {
  const int64_t rb = kernels::quant_row_bytes(kind, k);
  std::vector<unsigned char> w(static_cast<size_t>(n * rb));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  for (auto& b : w) b = static_cast<unsigned char>(byte(rng));
  for (int64_t r = 0; r < n; ++r) {
    unsigned char* row = w.data() + r * rb;
    if (kind == QuantKind::Int8) {
      const float s = scale(rng);
      std::memcpy(row, &s, 4);
      continue;
    }
    const int64_t bb = kernels::quant_block_bytes(kind);
    for (int64_t b = 0; b < k / 32; ++b) {
      // d, and Q4_1's minimum (negative, as a block's usually is)
      for (int f = 0; f < (kind == QuantKind::Q4_1 ? 2 : 1); ++f) {
        const uint16_t h = half_detail::half_from_float(f == 0 ? scale(rng) : -8 * scale(rng));
        row[b * bb + 2 * f] = static_cast<unsigned char>(h & 0xff);
        row[b * bb + 2 * f + 1] = static_cast<unsigned char>(h >> 8);
      }
    }
  }
  return w;
}

struct Case {
  QuantKind kind;
  int64_t m, k, n;
};

// Runs the case at `isa` on `threads` and checks c against the reference, within float32
// rounding of a k-term sum of |x| |w|; returns c (row stride n + 3).
std::vector<float> run_and_check(CpuIsa isa, const Case& s, int threads, std::mt19937& rng,
                                 std::vector<float>* x_in = nullptr,
                                 std::vector<unsigned char>* w_in = nullptr) {
  std::vector<float> x;
  std::vector<unsigned char> w;
  if (x_in && !x_in->empty()) {
    x = *x_in;
    w = *w_in;
  } else {
    std::normal_distribution<float> normal;
    x.resize(static_cast<size_t>(s.m * (s.k + 5)));
    for (float& v : x) v = normal(rng);
    w = random_rows(s.kind, s.n, s.k, rng);
    if (x_in) {
      *x_in = x;
      *w_in = w;
    }
  }
  const int64_t ldx = s.k + 5, ldc = s.n + 3, rb = kernels::quant_row_bytes(s.kind, s.k);
  std::vector<float> c(static_cast<size_t>(s.m * ldc), std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(
      quantized_gemv(isa, s.kind, s.m, s.n, s.k, x.data(), ldx, w.data(), c.data(), ldc, threads));
  const std::string what = std::string(isa_name(isa)) + " " + kind_name(s.kind) +
                           " m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) +
                           " n=" + std::to_string(s.n);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        const double e = kernels::dequantize_element(s.kind, w.data() + j * rb, p);
        ref += x[i * ldx + p] * e;
        mag += std::fabs(x[i * ldx + p] * e);
      }
      const double tol = 4 * std::numeric_limits<float>::epsilon() * mag + 1e-30;
      EXPECT_NEAR(c[i * ldc + j], ref, tol) << what << " at (" << i << ", " << j << ")";
    }
    for (int64_t j = s.n; j < ldc; ++j)
      EXPECT_TRUE(std::isnan(c[i * ldc + j])) << what << ": padding written";
  }
  return c;
}

TEST(QuantizedGemv, EveryKindAndLevelMatchesTheReference) {
  std::mt19937 rng(21);
  for (CpuIsa isa : levels())
    for (QuantKind kind : {QuantKind::Int8, QuantKind::Q8_0, QuantKind::Q4_0, QuantKind::Q4_1})
      for (int64_t m = 1; m <= kQuantGemvMaxRows; ++m)
        for (int64_t k : {1, 7, 31, 32, 33, 64, 100, 576}) {
          if (kind != QuantKind::Int8 && k % 32 != 0) continue;
          for (int64_t n : {1, 3, 4, 5, 9}) run_and_check(isa, {kind, m, k, n}, 1, rng);
        }
}

// Weights over 64 KiB are split over the threads: the same bits on 1 and 2.
TEST(QuantizedGemv, ResultsDoNotDependOnThreadCount) {
  std::mt19937 rng(22);
  for (CpuIsa isa : levels())
    for (QuantKind kind : {QuantKind::Int8, QuantKind::Q8_0, QuantKind::Q4_0, QuantKind::Q4_1}) {
      const Case s{kind, 2, 576, 700};
      std::vector<float> x;
      std::vector<unsigned char> w;
      const std::vector<float> one = run_and_check(isa, s, 1, rng, &x, &w);
      const std::vector<float> two = run_and_check(isa, s, 2, rng, &x, &w);
      EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0)
          << isa_name(isa) << " " << kind_name(kind);
    }
}

TEST(QuantizedGemv, RefusesMoreRowsThanItTakes) {
  std::vector<float> x(5 * 32, 1.0f), c(5 * 4, -1.0f);
  std::vector<unsigned char> w(4 * 36, 0);
  EXPECT_FALSE(quantized_gemv(detected_isa(), QuantKind::Int8, kQuantGemvMaxRows + 1, 4, 32,
                              x.data(), 32, w.data(), c.data(), 4, 1));
  EXPECT_FALSE(quantized_gemv(detected_isa(), QuantKind::Int8, 0, 4, 32, x.data(), 32, w.data(),
                              c.data(), 4, 1));
  for (float v : c) EXPECT_EQ(v, -1.0f);
}

}  // namespace
}  // namespace ember::cpu
