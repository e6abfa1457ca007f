// backend/cpu/cpu_qgemv.h: products of a few float32 rows with a weight matrix stored quantized
// (kernels/quant_blocks.h: int8 rows with a float32 scale, ggml's Q8_0, Q4_0 or Q4_1 blocks) --
// c (m x n) = x (m x k) @ W^T for a Linear's decoding step, W read once where it lies and
// widened to float32 in registers, never dequantized to memory. A weight byte costs a quarter of
// a float32 one, so a bandwidth-bound decoding step reads 3.6-7x fewer bytes.
//
// Each element of c sums its k products in vector lanes (16 at AVX-512, 8 at AVX2; one at a time
// at the baseline level), Q8_0 and Q4_0 blocks first into a block sum that is then multiplied by
// the block's scale (plus, for Q4_1, the block's minimum times its sum of x); an int8 row's sum is
// multiplied by its scale at the end. The lanes are added in a fixed order, so results depend on
// the shape and the level, never on the thread count.
#pragma once

#include <cstdint>

#include "backend/cpu/cpu_isa.h"
#include "kernels/quant_blocks.h"

namespace ember::cpu {

// The most rows of x the direct path takes; taller products dequantize W in chunks for the
// packed GEMM.
inline constexpr int64_t kQuantGemvMaxRows = 4;
// The longest Q8_0 / Q4_0 rows it takes, in blocks (k up to 65536).
inline constexpr int64_t kQuantGemvMaxBlocks = 2048;

// Whether quantized_gemv takes m rows of k elements.
inline bool quantized_gemv_takes(kernels::QuantKind kind, int64_t m, int64_t k) {
  return m >= 1 && m <= kQuantGemvMaxRows &&
         (kind == kernels::QuantKind::Int8 || k / kernels::kQuantBlock <= kQuantGemvMaxBlocks);
}

// c (row stride ldc) = x (m rows of k floats, row stride ldx) @ W^T, W: n rows of
// quant_row_bytes(kind, k) bytes, on up to `threads` OpenMP threads at level `isa`; returns false,
// doing nothing, unless quantized_gemv_takes(kind, m, k).
bool quantized_gemv(CpuIsa isa, kernels::QuantKind kind, int64_t m, int64_t n, int64_t k,
                    const float* x, int64_t ldx, const unsigned char* w, float* c, int64_t ldc,
                    int threads);

}  // namespace ember::cpu
