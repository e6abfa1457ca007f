// backend/cpu/cpu_quantized.cpp: the quantized-weight backend ops -- dequantize (each element as
// kernels/quant_blocks.h defines it) and quantized_matmul: up to 16 rows by the direct kernels of
// cpu_qgemv.h, taller products by the packed float32 GEMM over W dequantized a chunk of rows at a
// time (a prompt's rows share each chunk; W never exists whole in float32).
#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_gemm.h"
#include "backend/cpu/cpu_loops.h"
#include "backend/cpu/cpu_qgemv.h"

namespace ember {

namespace {

// One stored row into `cols` floats: kernels/quant_blocks.h's dequantize_element, a block at a
// time in loops the compiler vectorizes.
void dequantize_row(kernels::QuantKind kind, const unsigned char* row, int64_t cols, float* out) {
  using kernels::QuantKind;
  if (kind == QuantKind::Int8) {
    const float s = kernels::quant_f32_at(row);
    const auto* q = reinterpret_cast<const int8_t*>(row + 4);
    for (int64_t c = 0; c < cols; ++c) out[c] = s * static_cast<float>(q[c]);
    return;
  }
  for (int64_t b = 0; b < cols / kernels::kQuantBlock; ++b, out += kernels::kQuantBlock) {
    const unsigned char* blk = row + b * kernels::quant_block_bytes(kind);
    const float d = kernels::quant_f16_at(blk);
    if (kind == QuantKind::Q8_0) {
      const auto* q = reinterpret_cast<const int8_t*>(blk + 2);
      for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(q[j]) * d;
    } else if (kind == QuantKind::Q4_0) {
      for (int j = 0; j < 16; ++j) {
        out[j] = static_cast<float>((blk[2 + j] & 0x0f) - 8) * d;
        out[j + 16] = static_cast<float>((blk[2 + j] >> 4) - 8) * d;
      }
    } else {
      const float m = kernels::quant_f16_at(blk + 2);
      for (int j = 0; j < 16; ++j) {
        out[j] = static_cast<float>(blk[4 + j] & 0x0f) * d + m;
        out[j + 16] = static_cast<float>(blk[4 + j] >> 4) * d + m;
      }
    }
  }
}

// rows [r0, r1) of W, each `cols` elements, into dst (row stride cols).
template <class T>
void dequantize_rows(kernels::QuantKind kind, const unsigned char* w, int64_t r0, int64_t r1,
                     int64_t cols, T* dst) {
  const int64_t rb = kernels::quant_row_bytes(kind, cols);
  cpu::parallel_for(r1 - r0, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(cols, 1)),
                    [&](int64_t b, int64_t e) {
                      std::vector<float> row(std::is_same_v<T, float> ? 0 : cols);
                      for (int64_t r = b; r < e; ++r) {
                        const unsigned char* src = w + (r0 + r) * rb;
                        if constexpr (std::is_same_v<T, float>) {
                          dequantize_row(kind, src, cols, dst + r * cols);
                        } else {
                          dequantize_row(kind, src, cols, row.data());
                          for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = T(row[c]);
                        }
                      }
                    });
}

// Up to this many rows of x run through the direct kernels, kQuantGemvMaxRows at a time (each
// group reads W once); taller products dequantize W in chunks for the packed GEMM.
constexpr int64_t kDirectRows = 16;

}  // namespace

void CpuBackend::dequantize(kernels::QuantKind kind, const View& dst, const View& w) {
  const int64_t rows = dst.sizes[0], cols = dst.sizes[1];
  const auto* bytes = static_cast<const unsigned char*>(w.data);
  visit_dtype(dst.dtype, [&]<class T>() {
    if constexpr (is_float_v<T> && !std::is_same_v<T, double>)
      dequantize_rows<T>(kind, bytes, 0, rows, cols, static_cast<T*>(dst.data));
    else
      EMBER_THROW(DType, "[dequantize] writes float32, bfloat16 or float16, not ",
                  dtype_name(dst.dtype));
  });
}

void CpuBackend::quantized_matmul(kernels::QuantKind kind, const View& dst, const View& x,
                                  const View& w) {
  const int64_t m = x.sizes[0], k = x.sizes[1], n = dst.sizes[1];
  const auto* a = static_cast<const float*>(x.data);
  const auto* bytes = static_cast<const unsigned char*>(w.data);
  auto* c = static_cast<float*>(dst.data);
  const int threads = omp_get_max_threads();
  if (m == 0 || n == 0) return;
  if (m <= kDirectRows && cpu::quantized_gemv_takes(kind, 1, k)) {
    for (int64_t i = 0; i < m; i += cpu::kQuantGemvMaxRows)
      cpu::quantized_gemv(cpu::cpu_isa(), kind, std::min(cpu::kQuantGemvMaxRows, m - i), n, k,
                          a + i * k, k, bytes, c + i * n, n, threads);
    return;
  }
  // Chunks of about 4 MiB of float32 rows: the GEMM's packed panels are cut from them as from W.
  const int64_t chunk = std::clamp<int64_t>((int64_t{1} << 20) / std::max<int64_t>(k, 1), 16, n);
  std::vector<float> rows(static_cast<size_t>(chunk * k));
  const cpu::GemmKernel<float>& kernel = cpu::gemm_kernel<float>(cpu::cpu_isa());
  for (int64_t j0 = 0; j0 < n; j0 += chunk) {
    const int64_t j1 = std::min(n, j0 + chunk);
    dequantize_rows<float>(kind, bytes, j0, j1, k, rows.data());
    cpu::gemm(kernel,
              cpu::GemmArgs<float>{.m = m,
                                   .n = j1 - j0,
                                   .k = k,
                                   .a = a,
                                   .a_rs = k,
                                   .a_cs = 1,
                                   .b = rows.data(),
                                   .b_rs = 1,
                                   .b_cs = k,
                                   .c = c + j0,
                                   .ldc = n},
              threads);
  }
}

}  // namespace ember
