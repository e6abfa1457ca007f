// tests/internal/test_gemv.cpp: the weight-direct products of cpu_gemv.h at every level this CPU
// runs (AVX2, AVX-512, AVX512-BF16 with vdpbf16ps), whichever one cpu_isa() picks -- float32,
// bfloat16 (native and widened) and float16 weights against a float64 reference for 1 to 4 rows,
// k on and off the vector and 32-element edges (and below one vector), n on and off the column
// blocks, x in every layout; c's padding untouched; 1 vs 2 threads bit for bit; the widened
// 16-bit paths bit for bit equal to the float32 path on the widened operands; the shapes and
// levels the path leaves to the packed GEMM refused.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_gemv.h"
#include "gemm_test_operands.h"

namespace ember::cpu {
namespace {

using namespace gemm_test;

// The levels with a direct path that this CPU runs.
std::vector<CpuIsa> direct_levels() {
  std::vector<CpuIsa> levels;
  for (CpuIsa isa : kAllCpuIsas)
    if (isa >= CpuIsa::kAvx2 && isa <= detected_isa()) levels.push_back(isa);
  return levels;
}

// c (ldc = n + 3, the padding NaN) = a @ b by the direct path; fails the test if it refuses.
template <class S>
std::vector<float> direct(CpuIsa isa, const Shape3& s, const Operand<S>& a, const Operand<S>& b,
                          int threads, bool native = false) {
  std::vector<float> c(s.m * (s.n + 3), std::numeric_limits<float>::quiet_NaN());
  bool ran;
  if constexpr (std::is_same_v<S, BFloat16>)
    ran = gemv_weight_direct(isa, args(s, a, b, c.data(), s.n + 3), threads, native);
  else
    ran = gemv_weight_direct(isa, args(s, a, b, c.data(), s.n + 3), threads);
  EXPECT_TRUE(ran) << isa_name(isa);
  return c;
}

std::vector<Shape3> shapes() {
  std::vector<Shape3> out;
  for (int64_t m = 1; m <= kGemvMaxRows; ++m)
    for (int64_t k : {1, 7, 8, 9, 16, 17, 31, 32, 33, 100, 576})
      for (int64_t n : {1, 3, 4, 5, 9}) out.push_back({m, k, n});
  out.push_back({1, 300, 130});
  out.push_back({3, 65, 67});
  return out;
}

template <class S>
void check_every_level(bool native) {
  std::mt19937 rng(11);
  for (CpuIsa isa : direct_levels()) {
    if (native && isa < CpuIsa::kAvx512Bf16) continue;
    for (const Shape3& s : shapes()) {
      Operand<S> a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kTransposed, rng);
      check_against_reference(
          direct(isa, s, a, b, 1, native), s.n + 3, a, b, s, std::numeric_limits<float>::epsilon(),
          describe(s, Layout::kRowMajor, Layout::kTransposed, std::string(isa_name(isa)).c_str()));
    }
    for (Layout la : {Layout::kTransposed, Layout::kStrided}) {
      const Shape3 s{3, 70, 45};
      Operand<S> a(s.m, s.k, la, rng), b(s.k, s.n, Layout::kTransposed, rng);
      check_against_reference(
          direct(isa, s, a, b, 1, native), s.n + 3, a, b, s, std::numeric_limits<float>::epsilon(),
          describe(s, la, Layout::kTransposed, std::string(isa_name(isa)).c_str()));
    }
  }
}

TEST(Gemm, WeightDirectFloat32MatchesTheReference) {
  check_every_level<float>(false);
}
TEST(Gemm, WeightDirectBFloat16MatchesTheReference) {
  check_every_level<BFloat16>(false);
}
TEST(Gemm, WeightDirectBFloat16DotProductsMatchTheReference) {
  if (detected_isa() < CpuIsa::kAvx512Bf16) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  check_every_level<BFloat16>(true);
}
TEST(Gemm, WeightDirectFloat16MatchesTheReference) {
  check_every_level<Half>(false);
}

// Widening a 16-bit weight is exact, so its products are the float32 path's bit for bit.
template <class S>
void check_widened_equals_float32() {
  std::mt19937 rng(12);
  for (CpuIsa isa : direct_levels()) {
    const Shape3 s{2, 203, 37};
    Operand<S> a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kTransposed, rng);
    std::vector<float> narrow = direct(isa, s, a, b, 1),
                       wide = direct(isa, s, a.widened(), b.widened(), 1);
    EXPECT_EQ(std::memcmp(narrow.data(), wide.data(), narrow.size() * sizeof(float)), 0)
        << isa_name(isa);
  }
}

TEST(Gemm, WeightDirectWidenedBFloat16IsTheFloat32Path) {
  check_widened_equals_float32<BFloat16>();
}
TEST(Gemm, WeightDirectWidenedFloat16IsTheFloat32Path) {
  check_widened_equals_float32<Half>();
}

// Weights big enough to be split over the threads (more than 64 KiB): the same bits on 1 and 2.
TEST(Gemm, WeightDirectResultsDoNotDependOnThreadCount) {
  std::mt19937 rng(13);
  for (CpuIsa isa : direct_levels()) {
    const Shape3 s{1, 576, 1537};
    Operand<float> a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kTransposed, rng);
    std::vector<float> one = direct(isa, s, a, b, 1), two = direct(isa, s, a, b, 2);
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << isa_name(isa);
    check_against_reference(two, s.n + 3, a, b, s, std::numeric_limits<float>::epsilon(),
                            std::string(isa_name(isa)) + ", 2 threads");
    Operand<BFloat16> ah(s.m, s.k, Layout::kRowMajor, rng), bh(s.k, s.n, Layout::kTransposed, rng);
    for (bool native : {false, true}) {
      if (native && isa < CpuIsa::kAvx512Bf16) continue;
      std::vector<float> h1 = direct(isa, s, ah, bh, 1, native),
                         h2 = direct(isa, s, ah, bh, 2, native);
      EXPECT_EQ(std::memcmp(h1.data(), h2.data(), h1.size() * sizeof(float)), 0)
          << isa_name(isa) << (native ? " vdpbf16ps" : " widened");
    }
  }
}

// More than kGemvMaxRows rows, a weight whose rows are not contiguous, or the baseline level:
// refused, c untouched.
TEST(Gemm, WeightDirectRefusesWhatThePackedGemmDoes) {
  std::mt19937 rng(14);
  const Shape3 tall{kGemvMaxRows + 1, 16, 8};
  Operand<float> a(tall.m, tall.k, Layout::kRowMajor, rng),
      wt(tall.k, tall.n, Layout::kTransposed, rng), w(tall.k, tall.n, Layout::kRowMajor, rng);
  std::vector<float> c(tall.m * tall.n, -1.0f);
  const CpuIsa isa = detected_isa();
  EXPECT_FALSE(gemv_weight_direct(isa, args(tall, a, wt, c.data(), tall.n), 1));
  const Shape3 row{1, 16, 8};
  EXPECT_FALSE(gemv_weight_direct(isa, args(row, a, w, c.data(), row.n), 1));
  EXPECT_FALSE(gemv_weight_direct(CpuIsa::kBaseline, args(row, a, wt, c.data(), row.n), 1));
  for (float v : c) EXPECT_EQ(v, -1.0f);
}

}  // namespace
}  // namespace ember::cpu
