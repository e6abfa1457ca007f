// tests/internal/test_gemm_bf16.cpp: the bfloat16 GEMM kernels of cpu_gemm_bf16.h (AMX tiles,
// AVX512-BF16), each at its own level, whichever one cpu_isa() picks, on every level this CPU
// runs -- results against a float64 reference of the same bfloat16 operands within the rounding
// bound of a float32 k-term sum, on shapes at and around the tiles (32 x 32 for AMX, 14 x 32),
// the 32-k groups and the blocks, decode shapes (M of 1 to 64), K = 1, every operand layout, c's
// padding untouched, and 1 vs 2 threads giving the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_gemm_bf16.h"
#include "gemm_test_operands.h"

namespace ember::cpu {
namespace {

using namespace gemm_test;
using Bf16Operand = Operand<BFloat16>;

// c (ldc = n + 3, the padding NaN) = a @ b on `threads` threads.
std::vector<float> product(const GemmKernelBF16& kernel, const Shape3& s, const Bf16Operand& a,
                           const Bf16Operand& b, int threads) {
  int64_t ldc = s.n + 3;
  std::vector<float> c(s.m * ldc, std::numeric_limits<float>::quiet_NaN());
  gemm(kernel, args(s, a, b, c.data(), ldc), threads);
  return c;
}

// Each element within 2 k float32 eps of the sum of |a_ip b_pj| of the float64 product of the
// same bfloat16 values (float32 accumulation; the products are exact), the padding untouched.
void check_product(const GemmKernelBF16& kernel, const Shape3& s, Layout la, Layout lb,
                   std::mt19937& rng, int threads) {
  Bf16Operand a(s.m, s.k, la, rng), b(s.k, s.n, lb, rng);
  std::vector<float> c = product(kernel, s, a, b, threads);
  check_against_reference(c, s.n + 3, a, b, s, std::numeric_limits<float>::epsilon(),
                          describe(s, la, lb, kernel.name));
}

// The kernels of the levels this CPU runs, each checked at its own level whatever EMBER_CPU_ISA
// says (CI's native run on an AMX machine so covers both).
std::vector<const GemmKernelBF16*> runnable_kernels() {
  std::vector<const GemmKernelBF16*> kernels;
  for (CpuIsa isa : kAllCpuIsas)
    if (isa <= detected_isa() && gemm_kernel_bf16(isa)) kernels.push_back(gemm_kernel_bf16(isa));
  return kernels;
}

TEST(GemmBF16, KernelsExistAtTheLevelsWithBFloat16DotProducts) {
  for (CpuIsa isa : kAllCpuIsas)
    EXPECT_EQ(gemm_kernel_bf16(isa) != nullptr, isa >= CpuIsa::kAvx512Bf16) << isa_name(isa);
  if (detected_isa() < CpuIsa::kAvx512Bf16) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
}

TEST(GemmBF16, EveryKernelMatchesTheReference) {
  std::mt19937 rng(7);
  for (const GemmKernelBF16* kernel : runnable_kernels()) {
    const int64_t mr = kernel->mr, nr = kernel->nr, kc = kernel->kc;
    std::vector<Shape3> shapes;
    for (int64_t m : {int64_t{1}, mr - 1, mr, mr + 1, 2 * mr + 1, int64_t{17}})
      shapes.push_back({m, 37, 2 * nr + 3});
    for (int64_t n : {int64_t{1}, nr - 1, nr, nr + 1, 3 * nr + 5, int64_t{17}})
      shapes.push_back({2 * mr + 1, 29, n});
    for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{31}, int64_t{32}, int64_t{33}, kc - 1, kc,
                      kc + 1, 2 * kc + 3})
      shapes.push_back({mr + 3, k, nr + 5});
    shapes.push_back({mr, 19, kernel->nb + 1});
    shapes.push_back({kernel->mc + 1, 7, nr - 1});
    for (const Shape3& s : shapes)
      check_product(*kernel, s, Layout::kRowMajor, Layout::kRowMajor, rng, 1);
    // Decode shapes: a few rows against a wide b, b as a Linear weight (transposed).
    for (int64_t m : {1, 2, 3, 8, 15, 16, 33, 64})
      check_product(*kernel, {m, 96, 80}, Layout::kRowMajor, Layout::kTransposed, rng, 1);
    const Layout layouts[] = {Layout::kRowMajor, Layout::kTransposed, Layout::kStrided};
    for (Layout la : layouts)
      for (Layout lb : layouts)
        for (Shape3 s :
             {Shape3{mr + 2, kc + 17, nr + 3}, Shape3{3 * mr, 40, 2 * nr}, Shape3{5, 63, 49}})
          check_product(*kernel, s, la, lb, rng, 1);
    for (Shape3 s : {Shape3{90, 300, 400}, Shape3{700, 64, 20}, Shape3{65, 2 * kc + 1, 97}})
      check_product(*kernel, s, Layout::kRowMajor, Layout::kTransposed, rng, 2);
  }
}

TEST(GemmBF16, ResultsDoNotDependOnThreadCount) {
  std::mt19937 rng(9);
  for (const GemmKernelBF16* kernel : runnable_kernels()) {
    for (Shape3 s : {Shape3{200, 800, 300}, Shape3{1000, 64, 20}, Shape3{129, 1000, 65},
                     Shape3{31, 2000, 33}, Shape3{4, 1024, 512}}) {
      Bf16Operand a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kTransposed, rng);
      std::vector<float> one = product(*kernel, s, a, b, 1), two = product(*kernel, s, a, b, 2);
      EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0)
          << describe(s, Layout::kRowMajor, Layout::kTransposed, kernel->name);
    }
  }
}

// Infinities and NaNs pass through; subnormal operands read as zero (a documented difference
// from the widening path, where 1e-39 * 1e30 is 1e-9).
TEST(GemmBF16, SpecialValues) {
  for (const GemmKernelBF16* kernel : runnable_kernels()) {
    std::mt19937 rng(3);
    Shape3 s{3, 40, 33};
    Bf16Operand a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kRowMajor, rng);
    for (BFloat16& x : a.data) x = BFloat16(0.0f);
    for (BFloat16& x : b.data) x = BFloat16(1.0f);
    a.data[0] = BFloat16(std::numeric_limits<float>::infinity());         // row 0
    a.data[s.k + 1] = BFloat16(std::numeric_limits<float>::quiet_NaN());  // row 1
    a.data[2 * s.k + 5] = BFloat16(1e-39f);                               // row 2, subnormal
    b.data[5 * s.n + 3] = BFloat16(1e30f);
    std::vector<float> c = product(*kernel, s, a, b, 1);
    const int64_t ldc = s.n + 3;
    EXPECT_TRUE(std::isinf(c[0]) && c[0] > 0) << kernel->name << " " << c[0];
    EXPECT_TRUE(std::isnan(c[ldc + 1])) << kernel->name << " " << c[ldc + 1];
    EXPECT_EQ(c[2 * ldc + 3], 0.0f) << kernel->name;
  }
}

// The AMX path for few rows against a transposed weight (no packing of b): every row count up to
// its limit of 64 around the 16- and 32-wide tiles, k and n on and off the tile edges, x in every
// layout, against the reference and 1 vs 2 threads bit for bit; other shapes are refused.
TEST(GemmBF16, AmxWeightDirectMatchesTheReference) {
  if (detected_isa() < CpuIsa::kAmx) GTEST_SKIP() << "no AMX on this CPU";
  std::mt19937 rng(5);
  auto direct = [](const Shape3& s, const Bf16Operand& a, const Bf16Operand& b, int threads) {
    std::vector<float> c(s.m * (s.n + 3), std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(gemm_amx_weight_direct(args(s, a, b, c.data(), s.n + 3), threads));
    return c;
  };
  std::vector<Shape3> shapes;
  for (int64_t m : {1, 2, 15, 16, 17, 31, 32, 33, 48, 64})
    for (int64_t k : {1, 31, 32, 33, 100}) shapes.push_back({m, k, m % 2 ? 49 : 32});
  for (int64_t n : {1, 15, 16, 17, 33, 64, 97}) shapes.push_back({5, 64, n});
  for (const Shape3& s : shapes) {
    Bf16Operand a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kTransposed, rng);
    check_against_reference(direct(s, a, b, 1), s.n + 3, a, b, s,
                            std::numeric_limits<float>::epsilon(),
                            describe(s, Layout::kRowMajor, Layout::kTransposed, "amx direct"));
  }
  for (Layout la : {Layout::kTransposed, Layout::kStrided}) {
    Shape3 s{19, 70, 45};
    Bf16Operand a(s.m, s.k, la, rng), b(s.k, s.n, Layout::kTransposed, rng);
    check_against_reference(direct(s, a, b, 1), s.n + 3, a, b, s,
                            std::numeric_limits<float>::epsilon(),
                            describe(s, la, Layout::kTransposed, "amx direct"));
  }
  Shape3 big{64, 1000, 700};
  Bf16Operand a(big.m, big.k, Layout::kRowMajor, rng), b(big.k, big.n, Layout::kTransposed, rng);
  std::vector<float> one = direct(big, a, b, 1), two = direct(big, a, b, 2);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  check_against_reference(two, big.n + 3, a, b, big, std::numeric_limits<float>::epsilon(),
                          "amx direct, 2 threads");
  Shape3 tall{65, 8, 8};
  Bf16Operand ta(tall.m, tall.k, Layout::kRowMajor, rng),
      tb(tall.k, tall.n, Layout::kRowMajor, rng);
  std::vector<float> c(tall.m * tall.n);
  EXPECT_FALSE(gemm_amx_weight_direct(args(tall, ta, tb, c.data(), tall.n), 1));
  tall.m = 64;
  EXPECT_FALSE(gemm_amx_weight_direct(args(tall, ta, tb, c.data(), tall.n), 1));
}

}  // namespace
}  // namespace ember::cpu
