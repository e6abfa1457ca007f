// backend/cpu/cpu_gemm_bf16.h: bfloat16 GEMM kernels that keep bfloat16 operands as they are and
// multiply them with the CPU's bfloat16 dot-product instructions, accumulating in float32: AMX
// tiles (_tile_dpbf16ps, 16 x 16 float32 accumulators per tile, a 32 x 32 block of c in four) and
// AVX512-BF16 (vdpbf16ps, 14 x 32 in 28 zmm accumulators). They run in the driver of cpu_gemm.h,
// so the K blocks, and with them every element's sum, do not depend on the thread count.
//
// Both instructions multiply pairs of bfloat16 (exact in float32) and add the pair's two products
// to the float32 accumulator, with subnormal inputs and results read and written as zero; the
// widening kernels of cpu_gemm.h add one product at a time with one FMA each. The two paths agree
// to float32 rounding of a k-term sum (about k * 2^-24 of the sum of |a_ip b_pj|), not bit for
// bit; set_bf16_matmul_reduced_precision_reduction(false) asks for the widening path.
//
// Packed layouts (K rounded up to a multiple of 32 with zeros): an a micro-panel of MR rows is
// [k / 32][MR][32] (an AMX a tile, 16 rows of 32 k, is 1 KiB contiguous); a b micro-panel of 32
// columns is two halves of 16 columns, each [k / 2][16][2] -- the pairs (b[2q][j], b[2q+1][j])
// that both instructions read as one 32-bit lane, an AMX b tile being 16 pairs of rows.
#pragma once

#include "backend/cpu/cpu_gemm.h"

namespace ember::cpu {

using GemmKernelBF16 = GemmKernel<float, BFloat16, BFloat16>;

// The kernel of a level that has one (amx, avx512_bf16), else nullptr.
const GemmKernelBF16* gemm_kernel_bf16(CpuIsa isa);

extern const GemmKernelBF16 kGemmAmxBF16, kGemmAvx512Bf16BF16;

// c = a @ b for a product with few rows (m <= 64) and b a transposed weight (b_rs == 1: a Linear's
// x @ W^T) on the AMX tiles, without packing b: it computes c^T = W x^T, W's rows loaded as a
// tiles straight from memory (through a zero-padded 16 x 32 buffer at the k and n edges) and x,
// packed once, as the b tiles; every element sums all of k in one order, whatever `threads` (the
// columns of c are split among them). Returns false, doing nothing, for other shapes and layouts.
// Only at cpu_isa() amx.
bool gemm_amx_weight_direct(const GemmArgs<float, BFloat16>& g, int threads);

namespace bf16_pack {
// The packers of the layouts above, a in micro-panels of 14 or 32 rows (AVX-512 code: only for
// CPUs at avx512_bf16 or above).
void pack_a14(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t rows, int64_t col0,
              int64_t kc, BFloat16* dst);
void pack_a32(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t rows, int64_t col0,
              int64_t kc, BFloat16* dst);
void pack_b(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t kc, int64_t col0,
            int64_t cols, BFloat16* dst);
}  // namespace bf16_pack

}  // namespace ember::cpu
