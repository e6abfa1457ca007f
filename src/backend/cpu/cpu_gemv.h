// backend/cpu/cpu_gemv.h: products with a few rows against a weight matrix read where it lies --
// c (m x n) = a (m x k) @ W^T for W (n x k) with contiguous rows, as a Linear's x @ W^T for a
// decoding step (m = 1) or a small batch of them. The packed GEMM of cpu_gemm.h would first copy
// (and transpose) all of W for a handful of rows, reading it twice and writing it once; here every
// element of c is the dot product of a row of a (copied once into a small float32 or bfloat16
// buffer) with a row of W, streamed once from memory with the widest loads of the level.
//
// Each element sums its k products in vector lanes (16 at AVX-512, 8 at AVX2; bfloat16 pairs in
// the AVX512-BF16 kernel) that are added together at the end in a fixed order, so the result
// depends on the shape and the level, never on the thread count (threads split the columns of c).
// The order differs from the packed GEMM's: the two agree to float32 rounding of a k-term sum.
#pragma once

#include "backend/cpu/cpu_gemm.h"

namespace ember::cpu {

// The most rows of a the direct path takes; taller products are the packed GEMM's.
inline constexpr int64_t kGemvMaxRows = 4;

// Whether the direct path takes a product of m rows against b with row stride b_rs at `isa`.
inline bool gemv_takes(CpuIsa isa, int64_t m, int64_t b_rs) {
  return isa >= CpuIsa::kAvx2 && b_rs == 1 && m >= 1 && m <= kGemvMaxRows;
}

// c = a @ b when g.m <= kGemvMaxRows and b is a transposed weight (g.b_rs == 1) at level `isa`
// (avx2 or above), on up to `threads` OpenMP threads; returns false, doing nothing, otherwise.
// For bfloat16, `native_bf16` multiplies with vdpbf16ps (at avx512_bf16 and above: pairs of
// products added to float32, subnormals read as zero, as cpu_gemm_bf16.h's kernels) instead of
// widening each element to float32 for one FMA.
bool gemv_weight_direct(CpuIsa isa, const GemmArgs<float>& g, int threads);
bool gemv_weight_direct(CpuIsa isa, const GemmArgs<float, BFloat16>& g, int threads,
                        bool native_bf16);
bool gemv_weight_direct(CpuIsa isa, const GemmArgs<float, Half>& g, int threads);

}  // namespace ember::cpu
