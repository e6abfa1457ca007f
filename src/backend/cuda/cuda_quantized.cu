// backend/cuda/cuda_quantized.cu: the quantized-weight ops on the GPU -- dequantize (one thread
// per element) and quantized_matmul: one warp per element of the product, its lanes reading
// consecutive elements of the weight row (kernels/quant_blocks.h dequantizes each) and summing
// them with warp shuffles. A decoding step reads W once, quantized; a tall product reads it once
// per row of x, which suits a few rows, not prefill speed.
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/quant_blocks.h"

namespace ember::cuda_detail {

namespace {

template <class T>
__global__ void dequantize_kernel(T* dst, const unsigned char* w, int64_t rows, int64_t cols,
                                  int64_t rb, kernels::QuantKind kind) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = T(kernels::dequantize_element(kind, w + (i / cols) * rb, i % cols));
}

__global__ void quantized_matmul_kernel(float* c, const float* x, const unsigned char* w, int64_t m,
                                        int64_t n, int64_t k, int64_t rb, kernels::QuantKind kind) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t e = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32; e < m * n; e += warps) {
    const int64_t i = e / n, j = e % n;
    const unsigned char* row = w + j * rb;
    float sum = 0;
    for (int64_t p = lane; p < k; p += 32)
      sum += x[i * k + p] * kernels::dequantize_element(kind, row, p);
    for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(kFullMask, sum, d);
    if (lane == 0) c[e] = sum;
  }
}

}  // namespace

void launch_dequantize(kernels::QuantKind kind, const View& dst, const View& w) {
  const int64_t rows = dst.sizes[0], cols = dst.sizes[1];
  if (rows * cols == 0) return;
  const int64_t rb = kernels::quant_row_bytes(kind, cols);
  const auto* bytes = static_cast<const unsigned char*>(w.data);
  visit_dtype(dst.dtype, [&]<class T>() {
    if constexpr (is_float_v<T> && !std::is_same_v<T, double>) {
      EMBER_CUDA_LAUNCH(blocks_for(rows * cols), kThreads, 0, current_stream(),
                        dequantize_kernel<T>)
      (static_cast<T*>(dst.data), bytes, rows, cols, rb, kind);
      EMBER_CUDA_CHECK_LAUNCH("dequantize kernel");
    } else {
      EMBER_THROW(DType, "[dequantize] writes float32, bfloat16 or float16, not ",
                  dtype_name(dst.dtype));
    }
  });
}

void launch_quantized_matmul(kernels::QuantKind kind, const View& dst, const View& x,
                             const View& w) {
  const int64_t m = x.sizes[0], k = x.sizes[1], n = dst.sizes[1];
  if (m * n == 0) return;
  EMBER_CUDA_LAUNCH(blocks_for(m * n * 32), kThreads, 0, current_stream(), quantized_matmul_kernel)
  (static_cast<float*>(dst.data), static_cast<const float*>(x.data),
   static_cast<const unsigned char*>(w.data), m, n, k, kernels::quant_row_bytes(kind, k), kind);
  EMBER_CUDA_CHECK_LAUNCH("quantized_matmul kernel");
}

}  // namespace ember::cuda_detail
