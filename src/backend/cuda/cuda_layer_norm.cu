// backend/cuda/cuda_layer_norm.cu: fused layer normalization over the rows of a (rows, cols)
// matrix, with the CPU kernel's formulas: a block per row for the forward (mean, then the
// variance about it, then the output) and for dx; the weight's and bias's gradients by column
// tiles, each block summing a tile's columns over all rows in a fixed order (deterministic).
#include <cmath>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

// The block's sum of v, in every thread (kThreads threads; `shared` holds kThreads values).
template <class T>
__device__ T block_sum(T v, T* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  T total = shared[0];
  __syncthreads();
  return total;
}

template <class T>
__global__ void layer_norm_rows(T* y, T* mean, T* rstd, const T* x, const T* w, const T* b,
                                int64_t rows, int64_t n, double eps) {
  __shared__ T shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
    const T mu = block_sum(s, shared) / static_cast<T>(n);
    T sq = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sq += (xr[i] - mu) * (xr[i] - mu);
    const T var = block_sum(sq, shared) / static_cast<T>(n);
    const T rs = static_cast<T>(1.0 / sqrt(static_cast<double>(var) + eps));
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      T v = (xr[i] - mu) * rs;
      if (w) v = v * w[i];
      if (b) v = v + b[i];
      yr[i] = v;
    }
    if (threadIdx.x == 0) {
      mean[r] = mu;
      rstd[r] = rs;
    }
  }
}

// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = dy * w, xhat = (x - mean) * rstd.
template <class T>
__global__ void layer_norm_input_grad(T* dx, const T* g, const T* x, const T* mean, const T* rstd,
                                      const T* w, int64_t rows, int64_t n) {
  __shared__ T shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    const T mu = mean[r], rs = rstd[r];
    T dot = 0, sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      T gw = w ? gr[i] * w[i] : gr[i];
      dot += gw * ((xr[i] - mu) * rs);
      sum += gw;
    }
    const T c_dot = block_sum(dot, shared) / static_cast<T>(n);
    const T c_sum = block_sum(sum, shared) / static_cast<T>(n);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      T gw = w ? gr[i] * w[i] : gr[i];
      dx[r * n + i] = rs * (gw - c_sum - (xr[i] - mu) * rs * c_dot);
    }
  }
}

constexpr int kTileCols = 32, kTileRows = kThreads / kTileCols;

// Blocks of (kTileCols, kTileRows) threads: thread (c, t) sums rows t, t + kTileRows, ... of
// column c, then the block adds its kTileRows partial sums.
template <class T>
__global__ void layer_norm_param_grads(T* dw, T* db, const T* g, const T* x, const T* mean,
                                       const T* rstd, int64_t rows, int64_t n) {
  __shared__ T sw[kTileRows][kTileCols];
  __shared__ T sb[kTileRows][kTileCols];
  const int tc = threadIdx.x % kTileCols, tr = threadIdx.x / kTileCols;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTileCols + tc;
  T aw = 0, ab = 0;
  if (c < n)
    for (int64_t r = tr; r < rows; r += kTileRows) {
      T gv = g[r * n + c];
      aw += gv * ((x[r * n + c] - mean[r]) * rstd[r]);
      ab += gv;
    }
  sw[tr][tc] = aw;
  sb[tr][tc] = ab;
  __syncthreads();
  if (tr == 0 && c < n) {
    T tw = 0, tb = 0;
    for (int k = 0; k < kTileRows; ++k) {
      tw += sw[k][tc];
      tb += sb[k][tc];
    }
    if (dw) dw[c] = tw;
    if (db) db[c] = tb;
  }
}

template <class T>
void layer_norm_typed(const View& y, const View& mean, const View& rstd, const View& x,
                      const View& weight, const View& bias, double eps) {
  const int64_t rows = x.sizes[0], n = x.sizes[1];
  if (rows == 0 || n == 0) return;
  EMBER_CUDA_LAUNCH(static_cast<unsigned>(std::min<int64_t>(rows, 65536)), kThreads, 0,
                    current_stream(), layer_norm_rows<T>)
  (static_cast<T*>(y.data), static_cast<T*>(mean.data), static_cast<T*>(rstd.data),
   static_cast<const T*>(x.data), static_cast<const T*>(weight.data),
   static_cast<const T*>(bias.data), rows, n, eps);
  EMBER_CUDA_CHECK_LAUNCH("layer_norm kernel");
}

template <class T>
void layer_norm_backward_typed(const View& dx, const View& dweight, const View& dbias,
                               const View& dy, const View& x, const View& mean, const View& rstd,
                               const View& weight) {
  const int64_t rows = dy.sizes[0], n = dy.sizes[1];
  if (n == 0) return;
  const T* g = static_cast<const T*>(dy.data);
  const T* xd = static_cast<const T*>(x.data);
  const T* md = static_cast<const T*>(mean.data);
  const T* rd = static_cast<const T*>(rstd.data);
  cudaStream_t stream = current_stream();
  if (dx.data && rows > 0) {
    EMBER_CUDA_LAUNCH(static_cast<unsigned>(std::min<int64_t>(rows, 65536)), kThreads, 0, stream,
                      layer_norm_input_grad<T>)
    (static_cast<T*>(dx.data), g, xd, md, rd, static_cast<const T*>(weight.data), rows, n);
    EMBER_CUDA_CHECK_LAUNCH("layer_norm_backward kernel");
  }
  if (dweight.data || dbias.data) {
    EMBER_CUDA_LAUNCH(static_cast<unsigned>((n + kTileCols - 1) / kTileCols), kThreads, 0, stream,
                      layer_norm_param_grads<T>)
    (static_cast<T*>(dweight.data), static_cast<T*>(dbias.data), g, xd, md, rd, rows, n);
    EMBER_CUDA_CHECK_LAUNCH("layer_norm_backward kernel");
  }
}

}  // namespace

void launch_layer_norm(const View& y, const View& mean, const View& rstd, const View& x,
                       const View& weight, const View& bias, double eps) {
  check_float32_or_64(x.dtype, "layer_norm");
  if (x.dtype == kFloat32)
    layer_norm_typed<float>(y, mean, rstd, x, weight, bias, eps);
  else
    layer_norm_typed<double>(y, mean, rstd, x, weight, bias, eps);
}

void launch_layer_norm_backward(const View& dx, const View& dweight, const View& dbias,
                                const View& dy, const View& x, const View& mean, const View& rstd,
                                const View& weight) {
  check_float32_or_64(dy.dtype, "layer_norm_backward");
  if (dy.dtype == kFloat32)
    layer_norm_backward_typed<float>(dx, dweight, dbias, dy, x, mean, rstd, weight);
  else
    layer_norm_backward_typed<double>(dx, dweight, dbias, dy, x, mean, rstd, weight);
}

}  // namespace ember::cuda_detail
