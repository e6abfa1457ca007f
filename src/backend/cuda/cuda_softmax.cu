// backend/cuda/cuda_softmax.cu: fused softmax and log-softmax along one dim, with the CPU's
// semantics (a NaN in a slice makes it NaN; log-softmax shifts by 0 where the maximum is
// infinite). Slices along the last dim (inner == 1) take one block each: slices of up to
// kRowVecs vectors per thread are read once into registers (16-byte loads where every row is
// aligned) and reduced with warp shuffles; longer ones take three passes with block reductions.
// Other dims take one thread per (outer, inner) column, three passes over the slice.
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

// A block-wide reduction of one value per thread (blockDim.x a multiple of 32) through warp
// shuffles and `shared` (32 values); every thread gets the result.
template <class T, class Merge>
__device__ T block_all_reduce(T v, T* shared, Merge merge) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int nwarps = static_cast<int>(blockDim.x) / 32;
  for (int d = 16; d > 0; d /= 2) v = merge(v, __shfl_xor_sync(kFullMask, v, d));
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  T r = shared[0];
  for (int w = 1; w < nwarps; ++w) r = merge(r, shared[w]);
  __syncthreads();  // shared is reused by the next reduction
  return r;
}

// Vectors of W elements each thread of a row's block holds in registers.
constexpr int kRowVecs = 8;

// One block per row (grid-strided) with the row in registers: thread i holds vectors
// i + k * blockDim.x (k < kRowVecs) of W elements (W == 1: scalar loads, for rows that are not
// all 16-byte aligned), so x is read once: max, sum of exponentials, then the write.
template <class T, int W>
__global__ void softmax_rows_cached(T* y, const T* x, int64_t rows, int64_t n, bool log) {
  using V = Vec<T, W>;
  __shared__ T shared[32];
  const int64_t nvec = n / W;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const V* xs = reinterpret_cast<const V*>(x + r * n);
    V* ys = reinterpret_cast<V*>(y + r * n);
    T v[kRowVecs][W];
    T mx = -std::numeric_limits<T>::infinity();
#pragma unroll
    for (int k = 0; k < kRowVecs; ++k) {
      const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (j < nvec) {
        V a = xs[j];
#pragma unroll
        for (int e = 0; e < W; ++e) {
          v[k][e] = a.v[e];
          mx = max_step(mx, v[k][e]);
        }
      }
    }
    mx = shift_of(block_all_reduce(mx, shared, [](T a, T b) { return max_step(a, b); }), log);
    T total = 0;
#pragma unroll
    for (int k = 0; k < kRowVecs; ++k) {
      if (threadIdx.x + static_cast<int64_t>(k) * blockDim.x < nvec) {
#pragma unroll
        for (int e = 0; e < W; ++e) {
          const T ex = std::exp(v[k][e] - mx);
          total += ex;
          if (!log) v[k][e] = ex;
        }
      }
    }
    total = block_all_reduce(total, shared, [](T a, T b) { return a + b; });
    const T lt = log ? std::log(total) : T(0), inv = T(1) / total;
#pragma unroll
    for (int k = 0; k < kRowVecs; ++k) {
      const int64_t j = threadIdx.x + static_cast<int64_t>(k) * blockDim.x;
      if (j < nvec) {
        V out;
#pragma unroll
        for (int e = 0; e < W; ++e) out.v[e] = log ? (v[k][e] - mx) - lt : v[k][e] * inv;
        ys[j] = out;
      }
    }
  }
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
  const unsigned row_blocks = static_cast<unsigned>(std::min<int64_t>(outer, 65536));
  constexpr int W = 16 / static_cast<int>(sizeof(T));
  // Every row 16-byte aligned: the base pointers and the row length in whole vectors.
  const bool vec = n % W == 0 && aligned_to(x, 16) && aligned_to(y, 16);
  if (inner == 1 && n >= 64 && vec && n <= int64_t{kThreads} * kRowVecs * W) {
    EMBER_CUDA_LAUNCH(row_blocks, kThreads, 0, stream, softmax_rows_cached<T, W>)
    (y, x, outer, n, log);
  } else if (inner == 1 && n >= 64 && n <= int64_t{kThreads} * kRowVecs) {
    EMBER_CUDA_LAUNCH(row_blocks, kThreads, 0, stream, softmax_rows_cached<T, 1>)
    (y, x, outer, n, log);
  } else if (inner == 1 && n >= 64) {
    EMBER_CUDA_LAUNCH(row_blocks, kThreads, 0, stream, softmax_rows<T>)(y, x, outer, n, log);
  } else {
    EMBER_CUDA_LAUNCH(blocks_for(outer * inner), kThreads, 0, stream, softmax_columns<T>)
    (y, x, outer, n, inner, log);
  }
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
