// backend/cuda/cuda_loops.cuh: what the element-wise kernels share -- offsets of N strided
// operands (dims merged where memory allows), launch sizes, the current stream, dtype casts.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_launch.cuh"
#include "core/backend.h"
#include "kernels/strided_iter.h"

namespace ember::cuda_detail {

inline constexpr int kMaxDims = kMaxKernelDims;
inline constexpr int kThreads = 256;
// Every lane of a warp, for the __*_sync warp operations.
inline constexpr unsigned kFullMask = 0xffffffffu;

// Blocks for a grid-stride loop over n items (kernels loop, so the grid is capped).
inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65536));
}

// Element offsets of N operands of one shape (kernels/strided_iter.h: dims merged when
// contiguous in every operand, size-1 dims dropped), handed to kernels by value.
template <int N>
using OffsetCalc = kernels::StridedIter<N>;

template <int N>
OffsetCalc<N> make_offset_calc(const std::array<const View*, N>& views) {
  return kernels::make_strided_iter<N>(views, "[cuda]");
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
