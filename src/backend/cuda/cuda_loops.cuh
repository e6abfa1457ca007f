// backend/cuda/cuda_loops.cuh: what the element-wise kernels share -- offsets of N strided
// operands (dims merged where memory allows), launch sizes, the current stream, dtype casts.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_check.h"
#include "core/backend.h"
#include "ember/error.h"

namespace ember::cuda_detail {

inline constexpr int kMaxDims = kMaxKernelDims;
inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items (kernels loop, so the grid is capped).
inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65536));
}

// Element offsets of N operands of one shape; strides in elements, dims merged when contiguous
// in every operand, size-1 dims dropped.
template <int N>
struct OffsetCalc {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];

  __device__ void get(int64_t i, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d > 0; --d) {
      int64_t q = i / sizes[d], r = i - q * sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
      i = q;
    }
    if (ndim > 0) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += i * strides[k][0];
    }
  }
};

template <int N>
OffsetCalc<N> make_offset_calc(const std::array<const View*, N>& views) {
  OffsetCalc<N> oc;
  const View& first = *views[0];
  int nd = static_cast<int>(first.sizes.size());
  EMBER_CHECK_KIND(Shape, nd <= kMaxDims, "[cuda] tensors with more than ", kMaxDims,
                   " dims are not supported");
  for (int d = 0; d < nd; ++d) {
    int64_t size = first.sizes[d];
    if (size == 1) continue;
    bool merge = oc.ndim > 0;
    for (int k = 0; k < N && merge; ++k)
      merge = oc.strides[k][oc.ndim - 1] == views[k]->strides[d] * size;
    if (merge) {
      oc.sizes[oc.ndim - 1] *= size;
      for (int k = 0; k < N; ++k) oc.strides[k][oc.ndim - 1] = views[k]->strides[d];
    } else {
      oc.sizes[oc.ndim] = size;
      for (int k = 0; k < N; ++k) oc.strides[k][oc.ndim] = views[k]->strides[d];
      ++oc.ndim;
    }
  }
  return oc;
}

// Whether every operand is contiguous (after merging: one dim of stride 1, or a single element).
template <int N>
bool all_contiguous(const OffsetCalc<N>& oc) {
  if (oc.ndim == 0) return true;
  if (oc.ndim > 1) return false;
  for (int k = 0; k < N; ++k)
    if (oc.strides[k][0] != 1) return false;
  return true;
}

// A 16-byte (or smaller, for 1-byte outputs of wide inputs) group of V elements.
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

inline bool aligned_to(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace ember::cuda_detail
