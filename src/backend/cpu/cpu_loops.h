// backend/cpu/cpu_loops.h: the CPU's strided iteration, OpenMP parallel_for and a branch-free
// select.
// An element-wise kernel supplies an inner loop over one row; this file walks the rows.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "core/backend.h"
#include "kernels/strided_iter.h"

namespace ember::cpu {

inline constexpr int kMaxDims = kMaxKernelDims;

// c ? x : y through a bit mask instead of a branch: the loops over it vectorize, and random
// conditions (relu's backward) cost no mispredictions.
template <class T>
inline T select(bool c, T x, T y) {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(U) == sizeof(T));
  const U m = U(0) - U(c);
  return std::bit_cast<T>(static_cast<U>((std::bit_cast<U>(x) & m) | (std::bit_cast<U>(y) & ~m)));
}
// Below this many elements an op stays on one thread.
inline constexpr int64_t kGrainSize = 32768;

// Runs f(begin, end) over [0, n) split across threads when n exceeds grain.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (n <= grain || omp_in_parallel() || omp_get_max_threads() == 1) {
    f(int64_t{0}, n);
    return;
  }
  int64_t max_chunks = (n + grain - 1) / grain;
#pragma omp parallel num_threads( \
    static_cast <int>(std::min <int64_t>(omp_get_max_threads(), max_chunks)))
  {
    int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e) f(b, e);
  }
}

// N operands of one shape, strides in bytes, with dims merged where memory allows
// (kernels/strided_iter.h).
template <int N>
struct StridedOperands {
  std::array<char*, N> data{};
  kernels::StridedIter<N> dims;

  explicit StridedOperands(const std::array<const View*, N>& views)
      : dims(kernels::make_strided_iter<N, kernels::StrideUnit::Bytes>(views, "[cpu]")) {
    for (int k = 0; k < N; ++k) data[k] = static_cast<char*>(views[k]->data);
  }

  // Calls inner(ptrs, inner_strides, n) for the rows covering linear elements [begin, end).
  template <class F>
  void for_each_row(int64_t begin, int64_t end, F&& inner) const {
    if (begin >= end) return;
    if (dims.ndim == 0) {
      int64_t zero[N]{};
      std::array<char*, N> p = data;
      inner(p.data(), zero, int64_t{1});
      return;
    }
    int64_t idx[kMaxDims];
    int64_t rem = begin;
    for (int d = dims.ndim - 1; d >= 0; --d) {
      idx[d] = rem % dims.sizes[d];
      rem /= dims.sizes[d];
    }
    int64_t inner_strides[N];
    for (int k = 0; k < N; ++k) inner_strides[k] = dims.strides[k][dims.ndim - 1];
    while (begin < end) {
      std::array<char*, N> p = data;
      for (int d = 0; d < dims.ndim; ++d)
        for (int k = 0; k < N; ++k) p[k] += idx[d] * dims.strides[k][d];
      int64_t n = std::min(dims.sizes[dims.ndim - 1] - idx[dims.ndim - 1], end - begin);
      inner(p.data(), inner_strides, n);
      begin += n;
      idx[dims.ndim - 1] += n;
      for (int d = dims.ndim - 1; d > 0 && idx[d] == dims.sizes[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  }

  // Runs the rows in parallel.
  template <class F>
  void run(F&& inner) const {
    parallel_for(dims.numel, kGrainSize, [&](int64_t b, int64_t e) { for_each_row(b, e, inner); });
  }
};

}  // namespace ember::cpu
