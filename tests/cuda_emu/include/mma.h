// mma.h of the emulated CUDA device (tests/cuda_emu): nvcuda::wmma's 16x16x16 fragments, loads,
// stores and mma_sync. Each lane holds the whole tile (the hardware spreads it over the warp), and
// every call is a warp operation: all 32 lanes must reach it with the same pointer and leading
// dimension, the pointer 256-bit aligned and the leading dimension a multiple of 16 bytes, as the
// toolkit requires. Products accumulate in float, in k order.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>

#include "ember_cuda_emu/device.h"
#include "ember_cuda_emu/half_types.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K>
struct fragment_shape;
template <int M, int N, int K>
struct fragment_shape<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct fragment_shape<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct fragment_shape<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulated device has 16x16x16 fragments");
  static constexpr int rows = fragment_shape<Use, M, N, K>::rows;
  static constexpr int cols = fragment_shape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  T x[num_elements];
};

namespace detail {

// The warp-wide check of a fragment operation: every lane with the same pointer and ld.
inline std::shared_ptr<const ember_cuda_emu::WarpValues> warp_op(
    const char* name, const void* ptr, unsigned ldm, size_t elem_bytes,
    const std::source_location& where) {
  struct Args {
    const void* ptr;
    unsigned ldm;
  } args{ptr, ldm};
  auto v = ember_cuda_emu::warp_collective(ember_cuda_emu::WarpOp::Wmma, 0xffffffffu, &args,
                                           sizeof(args), where);
  for (int l = 0; l < 32; ++l) {
    Args other = ember_cuda_emu::warp_read<Args>(*v, l);
    if (other.ptr != ptr || other.ldm != ldm)
      ember_cuda_emu::kernel_fault(std::string("wmma::") + name +
                                       ": the lanes of the warp pass different pointers or "
                                       "leading dimensions",
                                   where);
  }
  if (ptr && reinterpret_cast<uintptr_t>(ptr) % 32 != 0)
    ember_cuda_emu::kernel_fault(
        std::string("wmma::") + name + ": the pointer is not 256-bit aligned", where);
  if (ptr && (ldm * elem_bytes) % 16 != 0)
    ember_cuda_emu::kernel_fault(std::string("wmma::") + name + ": the leading dimension " +
                                     std::to_string(ldm) + " is not a multiple of 16 bytes",
                                 where);
  return v;
}

template <class T>
void load_tile(T* dst, int rows, int cols, const T* src, unsigned ldm, bool row_layout) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      dst[r * cols + c] = row_layout ? src[r * ldm + c] : src[c * ldm + r];
}

}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const T* p, unsigned ldm,
                      std::source_location where = std::source_location::current()) {
  static_assert(!std::is_void_v<Layout>, "a matrix_a / matrix_b fragment names its layout");
  detail::warp_op("load_matrix_sync", p, ldm, sizeof(T), where);
  detail::load_tile(f.x, f.rows, f.cols, p, ldm, std::is_same_v<Layout, row_major>);
}

template <int M, int N, int K>
void load_matrix_sync(fragment<accumulator, M, N, K, float>& f, const float* p, unsigned ldm,
                      layout_t layout,
                      std::source_location where = std::source_location::current()) {
  detail::warp_op("load_matrix_sync", p, ldm, sizeof(float), where);
  detail::load_tile(f.x, f.rows, f.cols, p, ldm, layout == mem_row_major);
}

template <int M, int N, int K>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm,
                       layout_t layout,
                       std::source_location where = std::source_location::current()) {
  detail::warp_op("store_matrix_sync", p, ldm, sizeof(float), where);
  for (int r = 0; r < f.rows; ++r)
    for (int c = 0; c < f.cols; ++c)
      (layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[r * f.cols + c];
}

template <class Use, int M, int N, int K, class T, class Layout, class V>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, V value,
                   std::source_location where = std::source_location::current()) {
  detail::warp_op("fill_fragment", nullptr, 0, sizeof(T), where);
  for (auto& x : f.x) x = static_cast<T>(value);
}

template <int M, int N, int K, class T, class LA, class LB>
void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LA>& a,
              const fragment<matrix_b, M, N, K, T, LB>& b,
              const fragment<accumulator, M, N, K, float>& c,
              std::source_location where = std::source_location::current()) {
  // The lanes' fragments are equal (each was loaded or filled by a checked warp operation), so
  // the first lane computes the product for all: out[i][j] += a[i][k] b[k][j] in k order.
  auto v = detail::warp_op("mma_sync", nullptr, 0, sizeof(T), where);
  if (v->shared_result.empty()) {
    float fa[M * K], fb[K * N], out[M * N];
    for (int e = 0; e < M * K; ++e) fa[e] = static_cast<float>(a.x[e]);
    for (int e = 0; e < K * N; ++e) fb[e] = static_cast<float>(b.x[e]);
    for (int e = 0; e < M * N; ++e) out[e] = c.x[e];
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) out[i * N + j] += fa[i * K + k] * fb[k * N + j];
    v->shared_result.assign(out, out + M * N);
  }
  for (int e = 0; e < M * N; ++e) d.x[e] = v->shared_result[e];
}

}  // namespace nvcuda::wmma
