// backend/cpu/cpu_gemm.h: ember's own float32 and float64 GEMM for x86 CPUs -- one BLIS-style
// driver (cache blocking, packed panels read from any strides, threads splitting M or N, never K)
// over register-blocked kernels for AVX-512, AVX2 + FMA and the x86-64 baseline (SSE2). Operands
// in bfloat16 or float16 are converted to float32 while they are packed (F16C for float16 at the
// AVX2 and AVX-512 levels), so a 16-bit product costs no more passes over memory than a float32 one
// and accumulates in float32. The levels with bfloat16 dot-product instructions (AVX512-BF16, AMX)
// also have kernels that keep bfloat16 operands as they are (cpu_gemm_bf16.h).
#pragma once

#include <cstdint>

#include "backend/cpu/cpu_isa.h"
#include "ember/half.h"

namespace ember::cpu {

// One product c = a @ b, any element strides for a and b, c dense row-major; a and b hold S (T, or
// a 16-bit type when T is float), c the compute type T.
template <class T, class S = T>
struct GemmArgs {
  int64_t m, n, k;
  const S* a;  // a: (m, k), element (i, p) at a[i * a_rs + p * a_cs]
  int64_t a_rs, a_cs;
  const S* b;  // b: (k, n), element (p, j) at b[p * b_rs + j * b_cs]
  int64_t b_rs, b_cs;
  T* c;  // c: (m, n), element (i, j) at c[i * ldc + j]
  int64_t ldc;
};

inline constexpr int kMaxGemmMr = 16;

// A register-blocked kernel and its packing, with the block sizes chosen for the caches of the
// CPUs it targets. The driver packs a's block (rows x kc) into micro-panels of mr rows, k-major
// (zero past the last row), and b's block (kc x cols) into micro-panels of nr columns, k-major
// (zero past the last column); micro[r - 1] then computes an r-row tile of c from an a micro-panel
// and a b micro-panel. The packers read S and write P (T, or bfloat16 for the kernels of
// cpu_gemm_bf16.h, whose panels interleave k as their instructions read it). A micro-panel holds
// kc rounded up to kgroup (zero past kc); K blocks other than the last are multiples of kgroup.
// A kernel with `block` set runs a whole packed block with it instead of micro.
template <class T, class S = T, class P = T>
struct GemmKernel {
  // c tile (rows, cols <= nr) = (or +=, when accumulate) ap (kc x mr) @ bp (kc x nr).
  using Micro = void (*)(int64_t kc, const P* ap, const P* bp, T* c, int64_t ldc, int cols,
                         bool accumulate);
  // c block at (row0, col0), rows x cols, = (or +=) the packed blocks apack @ bpack.
  using Block = void (*)(const GemmArgs<T, S>& g, const P* apack, int64_t row0, int64_t rows,
                         const P* bpack, int64_t col0, int64_t cols, int64_t kc, bool accumulate);
  // dst = a's block at (row0, col0), rows x kc, as micro-panels.
  using PackA = void (*)(const GemmArgs<T, S>& g, int64_t row0, int64_t rows, int64_t col0,
                         int64_t kc, P* dst);
  // dst = b's block at (row0, col0), kc x cols, as micro-panels.
  using PackB = void (*)(const GemmArgs<T, S>& g, int64_t row0, int64_t kc, int64_t col0,
                         int64_t cols, P* dst);
  const char* name;
  int mr, nr;
  // K blocks of at most kc, column chunks of at most nb (the packed b block, kept in L2), row
  // blocks of at most mc (the packed a block).
  int64_t kc, nb, mc;
  Micro micro[kMaxGemmMr];
  PackA pack_a;
  PackB pack_b;
  int kgroup = 1;
  Block block = nullptr;
};

// The kernel of a level, for T float or double (S = T) and for T float with S BFloat16 or Half;
// each runs only on a CPU at that level or above.
template <class T, class S = T>
const GemmKernel<T, S>& gemm_kernel(CpuIsa isa);
template <>
const GemmKernel<float>& gemm_kernel<float>(CpuIsa isa);
template <>
const GemmKernel<double>& gemm_kernel<double>(CpuIsa isa);
template <>
const GemmKernel<float, BFloat16>& gemm_kernel<float, BFloat16>(CpuIsa isa);
template <>
const GemmKernel<float, Half>& gemm_kernel<float, Half>(CpuIsa isa);

// c = a @ b (c's old contents are ignored) with `kernel`, using up to `threads` OpenMP threads.
// Every element of c sums over k in the same order whatever the thread count, so results do not
// depend on it.
template <class T, class S, class P>
void gemm(const GemmKernel<T, S, P>& kernel, const GemmArgs<T, S>& g, int threads);

// The kernels of each level (defined, constant-initialized, in cpu_gemm_avx512.cpp,
// cpu_gemm_avx2.cpp and cpu_gemm_baseline.cpp).
extern const GemmKernel<float> kGemmAvx512F32, kGemmAvx2F32, kGemmBaselineF32;
extern const GemmKernel<double> kGemmAvx512F64, kGemmAvx2F64, kGemmBaselineF64;
extern const GemmKernel<float, BFloat16> kGemmAvx512BF16, kGemmAvx2BF16, kGemmBaselineBF16;
extern const GemmKernel<float, Half> kGemmAvx512F16, kGemmAvx2F16, kGemmBaselineF16;

}  // namespace ember::cpu
