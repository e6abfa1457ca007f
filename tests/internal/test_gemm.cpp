// tests/internal/test_gemm.cpp: every GEMM kernel of cpu_gemm.h that this CPU can run, whichever
// one cpu_isa() picks -- results against a float64 reference on shapes at and around each kernel's
// tile and block edges, every operand layout (contiguous, transposed, no unit stride), c's padding
// left untouched, and 1 vs 2 threads giving the same bits. The bfloat16 and float16 kernels also
// give exactly the bits of the float32 kernel of their level on the widened operands.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_gemm.h"
#include "gemm_test_operands.h"

namespace ember::cpu {
namespace {

using namespace gemm_test;

// The float32 kernel of the level `kernel` (16-bit operands) runs at.
template <class T, class S>
const GemmKernel<T>* float_twin(const GemmKernel<T, S>& kernel) {
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (&gemm_kernel<T, S>(isa) == &kernel) return &gemm_kernel<T>(isa);
  return nullptr;
}

// c (with ldc = n + 3, the padding NaN) = a @ b with the kernel, checked against float64 sums:
// each element within 2 k eps of the sum of |a_ip b_pj| (the rounding bound of a k-term dot
// product), the padding untouched; for 16-bit operands, bit for bit against the float32 kernel.
template <class T, class S>
void check_product(const GemmKernel<T, S>& kernel, const Shape3& s, Layout la, Layout lb,
                   std::mt19937& rng, int threads) {
  Operand<S> a(s.m, s.k, la, rng), b(s.k, s.n, lb, rng);
  int64_t ldc = s.n + 3;
  std::vector<T> c(s.m * ldc, std::numeric_limits<T>::quiet_NaN());
  GemmArgs<T, S> g = args(s, a, b, c.data(), ldc);
  gemm(kernel, g, threads);
  if constexpr (!std::is_same_v<T, S>) {
    Operand<T> wa = a.widened(), wb = b.widened();
    std::vector<T> want(c.size(), std::numeric_limits<T>::quiet_NaN());
    const GemmKernel<T>* twin = float_twin(kernel);
    ASSERT_NE(twin, nullptr) << kernel.name;
    gemm(*twin, args(s, wa, wb, want.data(), ldc), threads);
    EXPECT_EQ(std::memcmp(c.data(), want.data(), c.size() * sizeof(T)), 0)
        << describe(s, la, lb, kernel.name) << " differs from " << twin->name;
  }
  check_against_reference(c, ldc, a, b, s, std::numeric_limits<T>::epsilon(),
                          describe(s, la, lb, kernel.name));
}

// Shapes on and around the kernel's tile (mr, nr) and block (kc, nb, mc) edges.
template <class T, class S>
std::vector<Shape3> edge_shapes(const GemmKernel<T, S>& k) {
  std::vector<Shape3> shapes;
  for (int64_t s :
       {int64_t{1}, int64_t{k.mr} - 1, int64_t{k.mr}, int64_t{k.mr} + 1, int64_t{2 * k.mr} + 1})
    if (s > 0) shapes.push_back({s, 37, 2 * k.nr + 3});
  for (int64_t s :
       {int64_t{1}, int64_t{k.nr} - 1, int64_t{k.nr}, int64_t{k.nr} + 1, int64_t{3 * k.nr} + 5})
    if (s > 0) shapes.push_back({2 * k.mr + 1, 29, s});
  for (int64_t s : {int64_t{1}, k.kc - 1, k.kc, k.kc + 1, 2 * k.kc + 3})
    shapes.push_back({k.mr + 3, s, k.nr + 5});
  shapes.push_back({k.mr, 19, k.nb + 1});
  shapes.push_back({k.mc + 1, 7, k.nr - 1});
  return shapes;
}

template <class T, class S = T>
std::vector<const GemmKernel<T, S>*> runnable_kernels() {
  std::vector<const GemmKernel<T, S>*> kernels;
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (isa <= detected_isa()) kernels.push_back(&gemm_kernel<T, S>(isa));
  return kernels;
}

template <class T, class S = T>
void check_all_kernels() {
  std::mt19937 rng(7);
  const Layout layouts[] = {Layout::kRowMajor, Layout::kTransposed, Layout::kStrided};
  for (const GemmKernel<T, S>* kernel : runnable_kernels<T, S>()) {
    for (const Shape3& s : edge_shapes(*kernel))
      check_product(*kernel, s, Layout::kRowMajor, Layout::kRowMajor, rng, 1);
    for (Layout la : layouts)
      for (Layout lb : layouts)
        for (Shape3 s : {Shape3{kernel->mr + 2, kernel->kc + 17, kernel->nr + 3},
                         Shape3{3 * kernel->mr, 40, 2 * kernel->nr}})
          check_product(*kernel, s, la, lb, rng, 1);
    // Threaded: column splits, row splits, and a multi-block K.
    for (Shape3 s : {Shape3{90, 300, 400}, Shape3{700, 64, 20}, Shape3{65, 2 * kernel->kc + 1, 97}})
      check_product(*kernel, s, Layout::kRowMajor, Layout::kTransposed, rng, 2);
  }
}

TEST(Gemm, EveryFloat32KernelMatchesTheReference) {
  check_all_kernels<float>();
}

TEST(Gemm, EveryFloat64KernelMatchesTheReference) {
  check_all_kernels<double>();
}

TEST(Gemm, EveryBFloat16KernelMatchesTheFloat32Kernel) {
  check_all_kernels<float, BFloat16>();
}

TEST(Gemm, EveryFloat16KernelMatchesTheFloat32Kernel) {
  check_all_kernels<float, Half>();
}

// [[1]] (1 x 1) @ b (1 x n) with b every bit pattern of S (then five more, for a partial panel):
// packing widens each element exactly as ember/half.h does, infinities, NaNs and subnormals
// included -- c is bit for bit the float32 kernel's product of the widened row.
template <class S>
void check_every_value_widens() {
  const int64_t n = (int64_t{1} << 16) + 5;
  Operand<S> a, b;
  a.data = {static_cast<S>(1.0f)};
  a.rs = a.cs = 1;
  for (int64_t i = 0; i < n; ++i) b.data.push_back(S::from_bits(static_cast<uint16_t>(i)));
  b.rs = n, b.cs = 1;
  Operand<float> wa = a.widened(), wb = b.widened();
  for (const GemmKernel<float, S>* kernel : runnable_kernels<float, S>()) {
    std::vector<float> c(n), want(n);
    gemm(*kernel, args(Shape3{1, 1, n}, a, b, c.data(), n), 1);
    gemm(*float_twin(*kernel), args(Shape3{1, 1, n}, wa, wb, want.data(), n), 1);
    for (int64_t i = 0; i < n; ++i) {
      uint32_t got, exp;
      std::memcpy(&got, &c[i], 4);
      std::memcpy(&exp, &want[i], 4);
      if (got != exp) {
        ADD_FAILURE() << kernel->name << ": bits 0x" << std::hex << (i & 0xffff) << " widen to 0x"
                      << got << ", want 0x" << exp;
        break;
      }
    }
  }
}

TEST(Gemm, PackingWidensEveryBFloat16Value) {
  check_every_value_widens<BFloat16>();
}

TEST(Gemm, PackingWidensEveryFloat16Value) {
  check_every_value_widens<Half>();
}

// The same product on 1 and 2 threads, compared bit for bit.
template <class T, class S = T>
void check_thread_independence() {
  std::mt19937 rng(9);
  for (const GemmKernel<T, S>* kernel : runnable_kernels<T, S>()) {
    for (Shape3 s : {Shape3{200, 800, 300}, Shape3{1000, 64, 20}, Shape3{129, 1000, 65},
                     Shape3{31, 2000, 33}}) {
      Operand<S> a(s.m, s.k, Layout::kRowMajor, rng), b(s.k, s.n, Layout::kRowMajor, rng);
      std::vector<T> one(s.m * s.n), two(s.m * s.n);
      GemmArgs<T, S> g = args(s, a, b, one.data(), s.n);
      gemm(*kernel, g, 1);
      g.c = two.data();
      gemm(*kernel, g, 2);
      EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(T)), 0)
          << describe(s, Layout::kRowMajor, Layout::kRowMajor, kernel->name);
    }
  }
}

TEST(Gemm, Float32ResultsDoNotDependOnThreadCount) {
  check_thread_independence<float>();
}

TEST(Gemm, Float64ResultsDoNotDependOnThreadCount) {
  check_thread_independence<double>();
}

TEST(Gemm, BFloat16ResultsDoNotDependOnThreadCount) {
  check_thread_independence<float, BFloat16>();
}

}  // namespace
}  // namespace ember::cpu
