// backend/cpu/cpu_gemm_kernel.h: the GEMM micro-kernel and packing of cpu_gemm.h, written once
// over a vector type and compiled per instruction set.
//
// Included only by cpu_gemm_avx512.cpp, cpu_gemm_avx2.cpp and cpu_gemm_baseline.cpp, each after
// defining EMBER_GEMM_TARGET (the target attribute of its level, or nothing) and EMBER_GEMM_NS (a
// namespace of its own, so that no function here is shared between levels). A vector type V, which
// the including file defines, gives, all always inlined and compiled for its level:
//   T, R (a register), kLanes, zero(), load(p), store(p, r), broadcast(x), fmadd(a, b, c) (a * b +
//   c), add(a, b), load_partial(p, n) (lanes >= n zero, no memory past p + n read),
//   store_partial(p, r, n) (lanes < n only), and kTranspose with transpose(r[kLanes]) (on return
//   r[j] holds element j of every input r[i]) where the level has a fast one. A float32 V also
//   gives load_src(p) and load_src_partial(p, n) for p a BFloat16 or Half pointer (kLanes
//   16-bit elements, or the first n with the other lanes zero, widened to float32), which the
//   packers of 16-bit operands use.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "backend/cpu/cpu_gemm.h"

#if !defined(EMBER_GEMM_TARGET) || !defined(EMBER_GEMM_NS)
#error "define EMBER_GEMM_TARGET and EMBER_GEMM_NS before including cpu_gemm_kernel.h"
#endif

namespace ember::cpu::EMBER_GEMM_NS {

// c tile (ROWS, nr <= NV * kLanes) = (or +=, when accumulate) ap (kc x MR, k-major) @ bp (kc x NR,
// k-major). The tile's ROWS x NV accumulators stay in registers: one broadcast of a and NV FMAs per
// row and k. ROWS < MR serves the last rows of a block, reading the same MR-wide panels.
template <class V, int MR, int NV, int ROWS>
EMBER_GEMM_TARGET void gemm_micro(int64_t kc, const typename V::T* ap, const typename V::T* bp,
                                  typename V::T* c, int64_t ldc, int nr, bool accumulate) {
  using R = typename V::R;
  constexpr int L = V::kLanes, NR = NV * L;
  R acc[ROWS][NV];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
    __builtin_prefetch(c + i * ldc, 1, 3);
    if (nr * sizeof(*c) > 64) __builtin_prefetch(c + i * ldc + 64 / sizeof(*c), 1, 3);
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    R b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = V::load(bp + v * L);
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      R a = V::broadcast(ap[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fmadd(a, b[v], acc[i][v]);
    }
    ap += MR;
    bp += NR;
  }
  if (nr == NR) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      typename V::T* row = c + i * ldc;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        R x = accumulate ? V::add(acc[i][v], V::load(row + v * L)) : acc[i][v];
        V::store(row + v * L, x);
      }
    }
    return;
  }
  // A partial tile: partial loads and stores, none past the tile's last column.
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i) {
    typename V::T* row = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      int n = nr - v * L;
      if (n <= 0) break;
      if (n >= L) {
        R x = accumulate ? V::add(acc[i][v], V::load(row + v * L)) : acc[i][v];
        V::store(row + v * L, x);
      } else {
        R x = accumulate ? V::add(acc[i][v], V::load_partial(row + v * L, n)) : acc[i][v];
        V::store_partial(row + v * L, x, n);
      }
    }
  }
}

// kLanes elements of S at p (all, or the first n with the other lanes zero) as a register of T.
template <class V, class S>
EMBER_GEMM_TARGET [[gnu::always_inline]] inline typename V::R gemm_load(const S* p) {
  if constexpr (std::is_same_v<S, typename V::T>)
    return V::load(p);
  else
    return V::load_src(p);
}
template <class V, class S>
EMBER_GEMM_TARGET [[gnu::always_inline]] inline typename V::R gemm_load_partial(const S* p, int n) {
  if constexpr (std::is_same_v<S, typename V::T>)
    return V::load_partial(p, n);
  else
    return V::load_src_partial(p, n);
}
// One element of S as T.
template <class T, class S>
EMBER_GEMM_TARGET [[gnu::always_inline]] inline T gemm_elem(S x) {
  if constexpr (std::is_same_v<S, T>)
    return x;
  else
    return static_cast<T>(static_cast<float>(x));
}

// How far ahead (in bytes) the transposing packer prefetches each line: four cache lines, enough
// for the strided streams it reads to arrive from memory in time.
constexpr int64_t kGemmPrefetchBytes = 256;

// out (kc x width, row stride ld, width <= kLanes) = the transpose of `lines` (width x kc): line i
// has its kc elements contiguous at src + i * line_stride; lines past `valid` read as zero.
template <class V, class S>
EMBER_GEMM_TARGET void gemm_pack_transposed(const S* src, int64_t line_stride, int valid, int width,
                                            int64_t kc, typename V::T* out, int64_t ld) {
  using R = typename V::R;
  using T = typename V::T;
  constexpr int L = V::kLanes;
  constexpr int64_t kAhead = kGemmPrefetchBytes / sizeof(S);
  int64_t q = 0;
  for (; q + L <= kc; q += L) {
    R r[L];
#pragma GCC unroll 16
    for (int i = 0; i < L; ++i) {
      if (i < valid) {
        const S* line = src + i * line_stride + q;
        if (q + L + kAhead <= kc) __builtin_prefetch(line + kAhead, 0, 3);
        r[i] = gemm_load<V>(line);
      } else {
        r[i] = V::zero();
      }
    }
    V::transpose(r);
#pragma GCC unroll 16
    for (int j = 0; j < L; ++j) {
      if (width == L)
        V::store(out + (q + j) * ld, r[j]);
      else
        V::store_partial(out + (q + j) * ld, r[j], width);
    }
  }
  for (; q < kc; ++q)
    for (int i = 0; i < width; ++i)
      out[q * ld + i] = i < valid ? gemm_elem<T>(src[i * line_stride + q]) : T(0);
}

// Packs a's block at (row0, col0), rows x kc, into MR-row micro-panels: panel p holds rows
// row0 + MR p .. + MR as kc groups of MR (zero past `rows`).
template <class V, int MR, class S>
EMBER_GEMM_TARGET void gemm_pack_a(const GemmArgs<typename V::T, S>& g, int64_t row0, int64_t rows,
                                   int64_t col0, int64_t kc, typename V::T* dst) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  for (int64_t p = 0; p * MR < rows; ++p) {
    T* out = dst + p * MR * kc;
    int64_t r0 = row0 + p * MR;
    int nrow = static_cast<int>(std::min<int64_t>(MR, row0 + rows - r0));
    const S* src = g.a + r0 * g.a_rs + col0 * g.a_cs;
    if constexpr (V::kTranspose) {
      if (g.a_cs == 1) {  // rows of a are contiguous: transpose kLanes k at a time
        for (int i0 = 0; i0 < MR; i0 += L) {
          int valid = std::clamp(nrow - i0, 0, L);
          gemm_pack_transposed<V>(valid > 0 ? src + i0 * g.a_rs : src, g.a_rs, valid,
                                  std::min(L, MR - i0), kc, out + i0, MR);
        }
        continue;
      }
    }
    if (g.a_rs == 1 && nrow == MR) {  // a column holds the panel's MR values contiguously
      for (int64_t q = 0; q < kc; ++q)
        for (int i = 0; i < MR; ++i) out[q * MR + i] = gemm_elem<T>(src[q * g.a_cs + i]);
      continue;
    }
    if (nrow < MR) std::fill_n(out, MR * kc, T(0));
    for (int64_t q = 0; q < kc; ++q)
      for (int i = 0; i < nrow; ++i) out[q * MR + i] = gemm_elem<T>(src[i * g.a_rs + q * g.a_cs]);
  }
}

// Packs b's block at (row0, col0), kc x cols, into NR-column micro-panels of kc rows each (zero
// past `cols`), NR = NV * kLanes.
template <class V, int NV, class S>
EMBER_GEMM_TARGET void gemm_pack_b(const GemmArgs<typename V::T, S>& g, int64_t row0, int64_t kc,
                                   int64_t col0, int64_t cols, typename V::T* dst) {
  using T = typename V::T;
  constexpr int L = V::kLanes, NR = NV * L;
  if (g.b_cs == 1) {  // rows of b are contiguous: read each row once, left to right
    int64_t full = cols / NR * NR;
    int tail = static_cast<int>(cols - full);
    for (int64_t q = 0; q < kc; ++q) {
      const S* row = g.b + (row0 + q) * g.b_rs + col0;
      T* out = dst + q * NR;
      for (int64_t j = 0; j < full; j += NR)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) V::store(out + j * kc + v * L, gemm_load<V>(row + j + v * L));
      if (tail > 0)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          int n = tail - v * L;
          V::store(out + full * kc + v * L, n >= L  ? gemm_load<V>(row + full + v * L)
                                            : n > 0 ? gemm_load_partial<V>(row + full + v * L, n)
                                                    : V::zero());
        }
    }
    return;
  }
  for (int64_t j = 0; j < cols; j += NR) {
    T* out = dst + j * kc;
    int ncol = static_cast<int>(std::min<int64_t>(NR, cols - j));
    const S* src = g.b + row0 * g.b_rs + (col0 + j) * g.b_cs;
    if constexpr (V::kTranspose) {
      if (g.b_rs == 1) {  // columns of b are contiguous (a transposed weight): transpose
        for (int v = 0; v < NV; ++v) {
          int valid = std::clamp(ncol - v * L, 0, L);
          gemm_pack_transposed<V>(valid > 0 ? src + v * L * g.b_cs : src, g.b_cs, valid, L, kc,
                                  out + v * L, NR);
        }
        continue;
      }
    }
    if (ncol < NR) std::fill_n(out, NR * kc, T(0));
    for (int64_t q = 0; q < kc; ++q)
      for (int jj = 0; jj < ncol; ++jj)
        out[q * NR + jj] = gemm_elem<T>(src[q * g.b_rs + jj * g.b_cs]);
  }
}

// The kernel of V with MR x (NV * kLanes) tiles and the given block sizes, packing operands of S.
template <class V, int MR, int NV, class S, int... Rows>
constexpr GemmKernel<typename V::T, S> make_gemm_kernel(const char* name, int64_t kc, int64_t nb,
                                                        int64_t mc,
                                                        std::integer_sequence<int, Rows...>) {
  static_assert(MR <= kMaxGemmMr);
  return GemmKernel<typename V::T, S>{
      .name = name,
      .mr = MR,
      .nr = NV * V::kLanes,
      .kc = kc,
      .nb = nb,
      .mc = mc,
      .micro = {&gemm_micro<V, MR, NV, Rows + 1>...},
      .pack_a = &gemm_pack_a<V, MR, S>,
      .pack_b = &gemm_pack_b<V, NV, S>,
  };
}

template <class V, int MR, int NV, class S = typename V::T>
constexpr GemmKernel<typename V::T, S> make_gemm_kernel(const char* name, int64_t kc, int64_t nb,
                                                        int64_t mc) {
  return make_gemm_kernel<V, MR, NV, S>(name, kc, nb, mc, std::make_integer_sequence<int, MR>{});
}

}  // namespace ember::cpu::EMBER_GEMM_NS
