// backend/cuda/cuda_softmax.cu: fused softmax and log-softmax along one dim, with the CPU's
// semantics (a NaN in a slice makes it NaN; log-softmax shifts by 0 where the maximum is
// infinite). Slices along the last dim (inner == 1) take one block each with block reductions;
// other dims one thread per (outer, inner) column, three passes over the slice.
#include <cmath>
#include <limits>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

template <class T>
__device__ T max_step(T m, T v) {
  if (v > m || v != v) return v != v || m != m ? std::numeric_limits<T>::quiet_NaN() : v;
  return m;
}

template <class T>
__device__ T shift_of(T mx, bool log) {
  return log && std::isinf(mx) ? T(0) : mx;
}

template <class T>
__global__ void softmax_rows(T* y, const T* x, int64_t rows, int64_t n, bool log) {
  __shared__ T shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xs = x + r * n;
    T* ys = y + r * n;
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = max_step(mx, xs[i]);
    shared[threadIdx.x] = mx;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s)
        shared[threadIdx.x] = max_step(shared[threadIdx.x], shared[threadIdx.x + s]);
      __syncthreads();
    }
    mx = shift_of(shared[0], log);
    __syncthreads();
    T total = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) total += std::exp(xs[i] - mx);
    shared[threadIdx.x] = total;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s) shared[threadIdx.x] += shared[threadIdx.x + s];
      __syncthreads();
    }
    total = shared[0];
    __syncthreads();
    if (log) {
      T lt = std::log(total);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ys[i] = (xs[i] - mx) - lt;
    } else {
      T inv = T(1) / total;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ys[i] = std::exp(xs[i] - mx) * inv;
    }
  }
}

template <class T>
__global__ void softmax_columns(T* y, const T* x, int64_t outer, int64_t n, int64_t inner,
                                bool log) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < outer * inner;
       c += stride) {
    int64_t o = c / inner, j = c - o * inner;
    const T* xs = x + o * n * inner + j;
    T* ys = y + o * n * inner + j;
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = max_step(mx, xs[i * inner]);
    mx = shift_of(mx, log);
    T total = 0;
    for (int64_t i = 0; i < n; ++i) total += std::exp(xs[i * inner] - mx);
    if (log) {
      T lt = std::log(total);
      for (int64_t i = 0; i < n; ++i) ys[i * inner] = (xs[i * inner] - mx) - lt;
    } else {
      T inv = T(1) / total;
      for (int64_t i = 0; i < n; ++i) ys[i * inner] = std::exp(xs[i * inner] - mx) * inv;
    }
  }
}

template <class T>
void softmax_typed(const View& dst, const View& src, int64_t dim, bool log) {
  int64_t outer = 1, inner = 1, n = src.sizes.empty() ? 1 : src.sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  if (outer * inner * n == 0) return;
  T* y = static_cast<T*>(dst.data);
  const T* x = static_cast<const T*>(src.data);
  cudaStream_t stream = current_stream();
  if (inner == 1 && n >= 64)
    EMBER_CUDA_LAUNCH(static_cast<unsigned>(std::min<int64_t>(outer, 65536)), kThreads, 0, stream,
                      softmax_rows<T>)
    (y, x, outer, n, log);
  else
    EMBER_CUDA_LAUNCH(blocks_for(outer * inner), kThreads, 0, stream, softmax_columns<T>)
    (y, x, outer, n, inner, log);
  EMBER_CUDA_CHECK_LAUNCH("softmax kernel");
}

}  // namespace

void launch_softmax(const View& dst, const View& src, int64_t dim, bool log) {
  check_float32_or_64(src.dtype, "softmax");
  if (src.dtype == kFloat32)
    softmax_typed<float>(dst, src, dim, log);
  else
    softmax_typed<double>(dst, src, dim, log);
}

}  // namespace ember::cuda_detail
