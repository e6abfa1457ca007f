// backend/cuda/cuda_reduce.cu: sum, prod, max, min, argmax and argmin over any set of dims.
// Deterministic: every thread reduces a fixed set of elements and blocks combine in a fixed tree
// order, so results never vary between runs. Small reductions use one thread per output. Reduced
// dims that are contiguous in memory (a full reduction of a dense tensor, a last-dim reduction)
// take the bandwidth path: 16-byte vector loads in a grid-stride loop, warp-shuffle trees, and
// when there are few outputs a fixed number of blocks per output whose partial results a second
// small kernel merges in order. Other large reductions take one block per output, split into
// chunks (then merged in order) when there are few outputs. Floating sums and products
// accumulate in float64, as on the CPU.
#include <limits>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/reduce_common.h"
#include "kernels/scalar_math.h"

namespace ember::cuda_detail {

namespace {

using reduce_detail::DimGroup;
using reduce_detail::is_nan;
using reduce_detail::Reducer;

// Tree reduction of one value per thread (blockDim.x == kThreads); the result is in thread 0.
template <class Acc, class Merge>
__device__ Acc block_reduce(Acc v, Acc* shared, Merge merge) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s)
      shared[threadIdx.x] = merge(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  Acc r = shared[0];
  __syncthreads();  // the buffer is reused by the next output
  return r;
}

template <ReduceOp op, class T>
__global__ void reduce_per_thread(const T* x, T* y, DimGroup kept, DimGroup red, DimGroup out,
                                  int64_t n_out, int64_t n_red) {
  using R = Reducer<op, T>;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < n_out;
       o += stride) {
    const T* base = x + kept.offset(o);
    auto acc = R::identity();
    for (int64_t r = 0; r < n_red; ++r) acc = R::step(acc, base[red.offset(r)]);
    y[out.offset(o)] = static_cast<T>(acc);
  }
}

// Block (o, c) reduces elements [c * chunk, (c + 1) * chunk) of output o; with one chunk it
// writes y, else partial[o * gridDim.y + c].
template <ReduceOp op, class T>
__global__ void reduce_per_block(const T* x, T* y, typename Reducer<op, T>::Acc* partial,
                                 DimGroup kept, DimGroup red, DimGroup out, int64_t n_out,
                                 int64_t n_red, int64_t chunk) {
  using R = Reducer<op, T>;
  using Acc = typename R::Acc;
  __shared__ Acc shared[kThreads];
  int64_t begin = blockIdx.y * chunk, end = min(n_red, begin + chunk);
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const T* base = x + kept.offset(o);
    Acc acc = R::identity();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x)
      acc = R::step(acc, base[red.offset(r)]);
    acc = block_reduce(acc, shared, [](Acc a, Acc b) { return R::merge(a, b); });
    if (threadIdx.x == 0) {
      if (gridDim.y == 1)
        y[out.offset(o)] = static_cast<T>(acc);
      else
        partial[o * gridDim.y + blockIdx.y] = acc;
    }
  }
}

template <ReduceOp op, class T>
__global__ void reduce_merge_chunks(T* y, const typename Reducer<op, T>::Acc* partial, DimGroup out,
                                    int64_t n_out, int64_t nchunks) {
  using R = Reducer<op, T>;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < n_out;
       o += stride) {
    auto acc = partial[o * nchunks];
    for (int64_t c = 1; c < nchunks; ++c) acc = R::merge(acc, partial[o * nchunks + c]);
    y[out.offset(o)] = static_cast<T>(acc);
  }
}

// The first index of the extreme value, NaN counting as the extreme: whether (v, i) beats (b, j).
template <bool is_max, class T>
__device__ bool beats(T v, int64_t i, T b, int64_t j) {
  bool vn = is_nan(v), bn = is_nan(b);
  if (vn || bn) return vn && bn ? i < j : vn;
  if (v == b) return i < j;
  return is_max ? v > b : v < b;
}

template <class T>
struct ValueIndex {
  T value;
  int64_t index;
};

template <bool is_max, class T>
__global__ void arg_reduce_per_thread(const T* x, int64_t* y, DimGroup kept, DimGroup out,
                                      int64_t n_out, int64_t len, int64_t s) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < n_out;
       o += stride) {
    const T* row = x + kept.offset(o);
    int64_t best = 0;
    T bv = row[0];
    for (int64_t i = 1; i < len; ++i)
      if (beats<is_max>(row[i * s], i, bv, best)) {
        bv = row[i * s];
        best = i;
      }
    y[out.offset(o)] = best;
  }
}

template <bool is_max, class T>
__global__ void arg_reduce_per_block(const T* x, int64_t* y, DimGroup kept, DimGroup out,
                                     int64_t n_out, int64_t len, int64_t s) {
  __shared__ T values[kThreads];
  __shared__ int64_t indices[kThreads];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const T* row = x + kept.offset(o);
    int64_t best = 0;
    T bv = row[0];
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      if (beats<is_max>(row[i * s], i, bv, best)) {
        bv = row[i * s];
        best = i;
      }
    values[threadIdx.x] = bv;
    indices[threadIdx.x] = best;
    __syncthreads();
    for (int k = kThreads / 2; k > 0; k >>= 1) {
      int t = threadIdx.x;
      if (t < k && beats<is_max>(values[t + k], indices[t + k], values[t], indices[t])) {
        values[t] = values[t + k];
        indices[t] = indices[t + k];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[out.offset(o)] = indices[0];
    __syncthreads();
  }
}

// A warp shuffle of an accumulator; types narrower than 32 bits travel as int.
template <class Acc>
__device__ Acc shfl_down(Acc v, int delta) {
  if constexpr (sizeof(Acc) < 4)
    return static_cast<Acc>(__shfl_down_sync(kFullMask, static_cast<int>(v), delta));
  else
    return __shfl_down_sync(kFullMask, v, delta);
}

// Tree reduction of one value per thread over the block (a multiple of 32 threads, at most 1024)
// with warp shuffles, then the warps' results in warp 0; the result is in thread 0. `shared`
// holds 32 values and is free again when this returns.
template <ReduceOp op, class T>
__device__ typename Reducer<op, T>::Acc block_reduce_shfl(typename Reducer<op, T>::Acc v,
                                                          typename Reducer<op, T>::Acc* shared) {
  using R = Reducer<op, T>;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int d = 16; d > 0; d /= 2) v = R::merge(v, shfl_down(v, d));
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int nwarps = static_cast<int>(blockDim.x) / 32;
    v = lane < nwarps ? shared[lane] : R::identity();
    for (int d = 16; d > 0; d /= 2) v = R::merge(v, shfl_down(v, d));
  }
  __syncthreads();
  return v;
}

// Elements per 16-byte load.
template <class T>
inline constexpr int kVecWidth = 16 / static_cast<int>(sizeof(T));

// Outputs whose reduced elements are contiguous (row o starts at kept.offset(o), n_red long).
// gridDim.x blocks share a row: thread i of block b takes 16-byte vectors b * blockDim.x + i,
// then every gridDim.x * blockDim.x-th, four loads in flight at a time; the unaligned head and
// the tail shorter than a vector go to block 0. With one block per row it writes y, else
// partial[o * gridDim.x + b]. Rows are grid-strided over gridDim.y.
template <ReduceOp op, class T>
__global__ void reduce_contiguous(const T* x, T* y, typename Reducer<op, T>::Acc* partial,
                                  DimGroup kept, DimGroup out, int64_t n_out, int64_t n_red) {
  using R = Reducer<op, T>;
  using Acc = typename R::Acc;
  constexpr int W = kVecWidth<T>;
  using V = Vec<T, W>;
  __shared__ Acc shared[32];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = blockIdx.y; o < n_out; o += gridDim.y) {
    const T* row = x + kept.offset(o);
    const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(row) % 16);
    const int64_t head =
        min(n_red, misaligned ? (16 - misaligned) / static_cast<int64_t>(sizeof(T)) : 0);
    const int64_t nvec = (n_red - head) / W, tail = head + nvec * W;
    Acc acc = R::identity();
    if (blockIdx.x == 0) {
      for (int64_t i = threadIdx.x; i < head; i += blockDim.x) acc = R::step(acc, row[i]);
      for (int64_t i = tail + threadIdx.x; i < n_red; i += blockDim.x) acc = R::step(acc, row[i]);
    }
    const V* vec = reinterpret_cast<const V*>(row + head);
    int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; v + 3 * stride < nvec; v += 4 * stride) {
      V a = vec[v], b = vec[v + stride], c = vec[v + 2 * stride], d = vec[v + 3 * stride];
#pragma unroll
      for (int k = 0; k < W; ++k) acc = R::step(acc, a.v[k]);
#pragma unroll
      for (int k = 0; k < W; ++k) acc = R::step(acc, b.v[k]);
#pragma unroll
      for (int k = 0; k < W; ++k) acc = R::step(acc, c.v[k]);
#pragma unroll
      for (int k = 0; k < W; ++k) acc = R::step(acc, d.v[k]);
    }
    for (; v < nvec; v += stride) {
      V a = vec[v];
#pragma unroll
      for (int k = 0; k < W; ++k) acc = R::step(acc, a.v[k]);
    }
    acc = block_reduce_shfl<op, T>(acc, shared);
    if (threadIdx.x == 0) {
      if (gridDim.x == 1)
        y[out.offset(o)] = static_cast<T>(acc);
      else
        partial[o * gridDim.x + blockIdx.x] = acc;
    }
  }
}

// Block o merges output o's nparts partial results in a fixed order.
template <ReduceOp op, class T>
__global__ void reduce_merge_partials(T* y, const typename Reducer<op, T>::Acc* partial,
                                      DimGroup out, int64_t n_out, int64_t nparts) {
  using R = Reducer<op, T>;
  using Acc = typename R::Acc;
  __shared__ Acc shared[32];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    Acc acc = R::identity();
    for (int64_t p = threadIdx.x; p < nparts; p += blockDim.x)
      acc = R::merge(acc, partial[o * nparts + p]);
    acc = block_reduce_shfl<op, T>(acc, shared);
    if (threadIdx.x == 0) y[out.offset(o)] = static_cast<T>(acc);
  }
}

// Blocks the bandwidth path aims for across all outputs: four 256-thread blocks for each of a
// 132-SM GPU's multiprocessors, so one wave streams with 64 bytes in flight per thread. A fixed
// number rather than the device's, so the summation order is the same on every GPU.
constexpr int64_t kStreamBlocks = 528;

template <ReduceOp op, class T>
void reduce_contiguous_typed(const T* x, T* y, const DimGroup& kept, const DimGroup& out,
                             int64_t n_out, int64_t n_red, cudaStream_t stream) {
  using Acc = typename Reducer<op, T>::Acc;
  // Enough work per block that each thread makes at least one round of four vector loads.
  const int64_t per_block = int64_t{kThreads} * kVecWidth<T> * 4;
  int64_t per_row = 1;
  if (n_out < kStreamBlocks)
    per_row = std::clamp<int64_t>((n_red + per_block - 1) / per_block, 1, kStreamBlocks / n_out);
  dim3 grid(static_cast<unsigned>(per_row), static_cast<unsigned>(std::min<int64_t>(n_out, 65535)));
  // With one block per row the kernel writes y itself and no partial results exist.
  Scratch partial(per_row > 1 ? sizeof(Acc) * n_out * per_row : 0);
  Acc* p = static_cast<Acc*>(partial.get());
  EMBER_CUDA_LAUNCH(grid, kThreads, 0, stream, reduce_contiguous<op, T>)
  (x, y, p, kept, out, n_out, n_red);
  EMBER_CUDA_CHECK_LAUNCH("reduce kernel");
  if (per_row == 1) return;
  EMBER_CUDA_LAUNCH(static_cast<unsigned>(std::min<int64_t>(n_out, 65536)), kThreads, 0, stream,
                    reduce_merge_partials<op, T>)
  (y, p, out, n_out, per_row);
  EMBER_CUDA_CHECK_LAUNCH("reduce merge kernel");
}

constexpr int64_t kPerThreadLimit = 128;  // reductions this short run one thread per output
constexpr int64_t kChunk = 32768;         // elements per block when one output is split

template <ReduceOp op, class T>
void reduce_typed(const View& dst, const View& src, uint64_t mask) {
  using Acc = typename Reducer<op, T>::Acc;
  const reduce_detail::ReduceDims g = reduce_detail::split_reduce_dims(dst, src, mask);
  const DimGroup &kept = g.kept, &out = g.out, &red = g.reduced;
  int64_t n_out = kept.numel, n_red = red.numel;
  if (n_out == 0) return;
  const T* x = static_cast<const T*>(src.data);
  T* y = static_cast<T*>(dst.data);
  cudaStream_t stream = current_stream();
  if (n_red <= kPerThreadLimit) {
    EMBER_CUDA_LAUNCH(blocks_for(n_out), kThreads, 0, stream, reduce_per_thread<op, T>)
    (x, y, kept, red, out, n_out, n_red);
    EMBER_CUDA_CHECK_LAUNCH("reduce kernel");
    return;
  }
  if (red.ndim == 1 && red.strides[0][0] == 1)
    return reduce_contiguous_typed<op, T>(x, y, kept, out, n_out, n_red, stream);
  int64_t nchunks = 1;
  if (n_out < 512 && n_red >= 2 * kChunk)
    nchunks = std::min<int64_t>((n_red + kChunk - 1) / kChunk, std::max<int64_t>(1, 2048 / n_out));
  int64_t chunk = (n_red + nchunks - 1) / nchunks;
  nchunks = (n_red + chunk - 1) / chunk;
  dim3 grid(static_cast<unsigned>(std::min<int64_t>(n_out, 65536)), static_cast<unsigned>(nchunks));
  if (nchunks == 1) {
    EMBER_CUDA_LAUNCH(grid, kThreads, 0, stream, reduce_per_block<op, T>)
    (x, y, nullptr, kept, red, out, n_out, n_red, chunk);
    EMBER_CUDA_CHECK_LAUNCH("reduce kernel");
    return;
  }
  Scratch partial(sizeof(Acc) * n_out * nchunks);
  Acc* p = static_cast<Acc*>(partial.get());
  EMBER_CUDA_LAUNCH(grid, kThreads, 0, stream, reduce_per_block<op, T>)
  (x, y, p, kept, red, out, n_out, n_red, chunk);
  EMBER_CUDA_CHECK_LAUNCH("reduce kernel");
  EMBER_CUDA_LAUNCH(blocks_for(n_out), kThreads, 0, stream, reduce_merge_chunks<op, T>)
  (y, p, out, n_out, nchunks);
  EMBER_CUDA_CHECK_LAUNCH("reduce merge kernel");
}

template <bool is_max, class T>
void arg_reduce_typed(const View& dst, const View& src, uint64_t mask) {
  const reduce_detail::ReduceDims g = reduce_detail::split_reduce_dims(dst, src, mask);
  const DimGroup &kept = g.kept, &out = g.out;
  int64_t len = g.reduced.numel, s = g.reduced.ndim ? g.reduced.stride(0) : 1;
  int64_t n_out = kept.numel;
  EMBER_CHECK_KIND(Shape, n_out == 0 || len > 0,
                   "[cuda argmax/argmin] cannot reduce over an empty dim");
  if (n_out == 0) return;
  const T* x = static_cast<const T*>(src.data);
  int64_t* y = static_cast<int64_t*>(dst.data);
  cudaStream_t stream = current_stream();
  if (len <= kPerThreadLimit) {
    EMBER_CUDA_LAUNCH(blocks_for(n_out), kThreads, 0, stream, arg_reduce_per_thread<is_max, T>)
    (x, y, kept, out, n_out, len, s);
  } else {
    EMBER_CUDA_LAUNCH(static_cast<unsigned>(std::min<int64_t>(n_out, 65536)), kThreads, 0, stream,
                      arg_reduce_per_block<is_max, T>)
    (x, y, kept, out, n_out, len, s);
  }
  EMBER_CUDA_CHECK_LAUNCH("argmax/argmin kernel");
}

}  // namespace

void launch_reduce(ReduceOp op, const View& dst, const View& src, uint64_t mask) {
  visit_dtype(src.dtype, [&]<class T>() {
    switch (op) {
      case ReduceOp::Sum:
        return reduce_typed<ReduceOp::Sum, T>(dst, src, mask);
      case ReduceOp::Prod:
        return reduce_typed<ReduceOp::Prod, T>(dst, src, mask);
      case ReduceOp::Max:
        return reduce_typed<ReduceOp::Max, T>(dst, src, mask);
      case ReduceOp::Min:
        return reduce_typed<ReduceOp::Min, T>(dst, src, mask);
      case ReduceOp::ArgMax:
        return arg_reduce_typed<true, T>(dst, src, mask);
      case ReduceOp::ArgMin:
        return arg_reduce_typed<false, T>(dst, src, mask);
    }
  });
}

}  // namespace ember::cuda_detail
