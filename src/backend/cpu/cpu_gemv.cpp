// backend/cpu/cpu_gemv.cpp: the weight-direct products of cpu_gemv.h -- dot products of a few rows
// of a with the rows of W, at AVX-512 (float32, bfloat16 and float16 weights widened to float32;
// bfloat16 pairs with vdpbf16ps at AVX512-BF16) and AVX2 + FMA (F16C), through target attributes
// as the other kernels of this folder (no file-wide -m flags).
#include "backend/cpu/cpu_gemv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(EMBER_HAVE_ISA_CLONES)
#include <immintrin.h>
#endif

namespace ember::cpu {

#if defined(EMBER_HAVE_ISA_CLONES)

namespace {

#define EMBER_GEMV_AVX512 [[gnu::target("arch=x86-64-v4")]]
#define EMBER_GEMV_BF16 [[gnu::target("arch=x86-64-v4,avx512bf16")]]
#define EMBER_GEMV_AVX2 [[gnu::target("arch=x86-64-v3")]]

// a's rows are copied into rows of kPad-multiple length, zero past k, so that every load of them
// is whole.
constexpr int64_t kPad = 32;

// The sum of 8 or 16 float32 lanes, halves added pairwise. The AVX-512 code uses the zero-masked
// forms of the intrinsics with all lanes set: GCC 12's plain forms (and _mm512_reduce_add_ps)
// start from an undefined vector and warn -Wmaybe-uninitialized.
EMBER_GEMV_AVX2 [[gnu::always_inline]] inline float reduce8(__m256 a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
EMBER_GEMV_AVX512 [[gnu::always_inline]] inline float reduce16(__m512 a) {
  return reduce8(_mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, a, 0),
                               _mm512_maskz_extractf32x8_ps(0xFF, a, 1)));
}

// The element loops of each level: Acc accumulates float32 lanes, madd adds the products of
// kStep elements of x (X: float32, or bfloat16 for vdpbf16ps) and of a weight row (S), reduce
// adds the lanes in a fixed order.
struct Avx512F32 {
  using S = float;
  using X = float;
  using Acc = __m512;
  static constexpr int kStep = 16;
  EMBER_GEMV_AVX512 [[gnu::always_inline]] static Acc zero() { return _mm512_setzero_ps(); }
  EMBER_GEMV_AVX512 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    return _mm512_fmadd_ps(_mm512_loadu_ps(x), _mm512_loadu_ps(w), acc);
  }
  EMBER_GEMV_AVX512 [[gnu::always_inline]] static float reduce(Acc a) { return reduce16(a); }
};

struct Avx512BF16Widen : Avx512F32 {
  using S = BFloat16;
  EMBER_GEMV_AVX512 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    const __m512i bits = _mm512_maskz_cvtepu16_epi32(
        0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm512_fmadd_ps(_mm512_loadu_ps(x),
                           _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, bits, 16)), acc);
  }
};

struct Avx512F16 : Avx512F32 {
  using S = Half;
  EMBER_GEMV_AVX512 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    const __m512 wf =
        _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm512_fmadd_ps(_mm512_loadu_ps(x), wf, acc);
  }
};

struct Avx512BF16Native {
  using S = BFloat16;
  using X = BFloat16;
  using Acc = __m512;
  static constexpr int kStep = 32;
  EMBER_GEMV_BF16 [[gnu::always_inline]] static Acc zero() { return _mm512_setzero_ps(); }
  EMBER_GEMV_BF16 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(_mm512_loadu_si512(x)),
                            reinterpret_cast<__m512bh>(_mm512_loadu_si512(w)));
  }
  EMBER_GEMV_BF16 [[gnu::always_inline]] static float reduce(Acc a) { return reduce16(a); }
};

struct Avx2F32 {
  using S = float;
  using X = float;
  using Acc = __m256;
  static constexpr int kStep = 8;
  EMBER_GEMV_AVX2 [[gnu::always_inline]] static Acc zero() { return _mm256_setzero_ps(); }
  EMBER_GEMV_AVX2 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    return _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(w), acc);
  }
  EMBER_GEMV_AVX2 [[gnu::always_inline]] static float reduce(Acc a) { return reduce8(a); }
};

struct Avx2BF16Widen : Avx2F32 {
  using S = BFloat16;
  EMBER_GEMV_AVX2 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    const __m256i bits =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    return _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_castsi256_ps(_mm256_slli_epi32(bits, 16)),
                           acc);
  }
};

struct Avx2F16 : Avx2F32 {
  using S = Half;
  EMBER_GEMV_AVX2 [[gnu::always_inline]] static Acc madd(Acc acc, const X* x, const S* w) {
    const __m256 wf = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    return _mm256_fmadd_ps(_mm256_loadu_ps(x), wf, acc);
  }
};

// c's (MR x NJ) block at columns j.. = MR packed rows of x (row stride kp) against NJ weight rows
// (row stride ldw) over k; the last partial step reads the weight rows' tails from a zeroed copy.
// `columns` runs the blocks of columns j0..j1 (NJ at a time, the rest one by one: an element's
// sum is the same either way). The same bodies at each level's target.
#define EMBER_GEMV_KERNELS(TARGET, SUFFIX)                                                        \
  template <class V, int MR, int NJ>                                                              \
  TARGET [[gnu::always_inline]] inline void block_##SUFFIX(const typename V::X* x, int64_t kp,    \
                                                           const typename V::S* w, int64_t ldw,   \
                                                           int64_t k, float* c, int64_t ldc) {    \
    using S = typename V::S;                                                                      \
    typename V::Acc acc[MR][NJ];                                                                  \
    for (int i = 0; i < MR; ++i)                                                                  \
      for (int j = 0; j < NJ; ++j) acc[i][j] = V::zero();                                         \
    const int64_t full = k / V::kStep * V::kStep;                                                 \
    for (int64_t p = 0; p < full; p += V::kStep)                                                  \
      for (int j = 0; j < NJ; ++j)                                                                \
        for (int i = 0; i < MR; ++i)                                                              \
          acc[i][j] = V::madd(acc[i][j], x + i * kp + p, w + j * ldw + p);                        \
    if (full < k) {                                                                               \
      alignas(64) unsigned char tail[NJ][V::kStep * sizeof(S)] = {};                              \
      for (int j = 0; j < NJ; ++j)                                                                \
        std::memcpy(tail[j], w + j * ldw + full, static_cast<size_t>(k - full) * sizeof(S));      \
      for (int j = 0; j < NJ; ++j)                                                                \
        for (int i = 0; i < MR; ++i)                                                              \
          acc[i][j] = V::madd(acc[i][j], x + i * kp + full, reinterpret_cast<const S*>(tail[j])); \
    }                                                                                             \
    for (int i = 0; i < MR; ++i)                                                                  \
      for (int j = 0; j < NJ; ++j) c[i * ldc + j] = V::reduce(acc[i][j]);                         \
  }                                                                                               \
  template <class V, int MR>                                                                      \
  TARGET void columns_##SUFFIX(const typename V::X* x, int64_t kp,                                \
                               const GemmArgs<float, typename V::S>& g, int64_t j0, int64_t j1) { \
    constexpr int NJ = MR <= 2 ? 4 : 2;                                                           \
    int64_t j = j0;                                                                               \
    for (; j + NJ <= j1; j += NJ)                                                                 \
      block_##SUFFIX<V, MR, NJ>(x, kp, g.b + j * g.b_cs, g.b_cs, g.k, g.c + j, g.ldc);            \
    for (; j < j1; ++j)                                                                           \
      block_##SUFFIX<V, MR, 1>(x, kp, g.b + j * g.b_cs, g.b_cs, g.k, g.c + j, g.ldc);             \
  }

EMBER_GEMV_KERNELS(EMBER_GEMV_AVX512, avx512)
EMBER_GEMV_KERNELS(EMBER_GEMV_BF16, bf16)
EMBER_GEMV_KERNELS(EMBER_GEMV_AVX2, avx2)
#undef EMBER_GEMV_KERNELS

template <class V>
using Columns = void (*)(const typename V::X*, int64_t, const GemmArgs<float, typename V::S>&,
                         int64_t, int64_t);

// The column runner of V's level for MR rows.
template <class V, int MR>
Columns<V> columns_of() {
  if constexpr (std::is_same_v<V, Avx512BF16Native>)
    return columns_bf16<V, MR>;
  else if constexpr (V::kStep == 16)
    return columns_avx512<V, MR>;
  else
    return columns_avx2<V, MR>;
}

template <class V>
Columns<V> columns_for_rows(int64_t m) {
  switch (m) {
    case 1:
      return columns_of<V, 1>();
    case 2:
      return columns_of<V, 2>();
    case 3:
      return columns_of<V, 3>();
    default:
      return columns_of<V, 4>();
  }
}

// Packs a into zero-padded rows of X, then splits c's columns over the threads: enough bytes of
// W per thread (64 KiB at least) that a thread's share outweighs starting it.
template <class V>
void run(const GemmArgs<float, typename V::S>& g, int threads) {
  using X = typename V::X;
  const int64_t kp = (g.k + kPad - 1) / kPad * kPad;
  thread_local std::vector<X> packed;
  packed.assign(static_cast<size_t>(g.m * kp), X(0.0f));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t p = 0; p < g.k; ++p)
      packed[i * kp + p] = X(static_cast<float>(g.a[i * g.a_rs + p * g.a_cs]));
  const Columns<V> columns = columns_for_rows<V>(g.m);
  const X* x = packed.data();
  const int64_t bytes = g.n * g.k * static_cast<int64_t>(sizeof(typename V::S));
  const int nt = omp_in_parallel()
                     ? 1
                     : static_cast<int>(std::clamp<int64_t>(
                           bytes >> 16, 1, std::min<int64_t>(threads, (g.n + 3) / 4)));
  if (nt == 1) {
    columns(x, kp, g, 0, g.n);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), count = omp_get_num_threads();
    columns(x, kp, g, g.n * t / count, g.n * (t + 1) / count);
  }
}

template <class S>
bool takes(CpuIsa isa, const GemmArgs<float, S>& g) {
  return gemv_takes(isa, g.m, g.b_rs) && g.n > 0 && g.k > 0;
}

}  // namespace

bool gemv_weight_direct(CpuIsa isa, const GemmArgs<float>& g, int threads) {
  if (!takes(isa, g)) return false;
  if (isa >= CpuIsa::kAvx512)
    run<Avx512F32>(g, threads);
  else
    run<Avx2F32>(g, threads);
  return true;
}

bool gemv_weight_direct(CpuIsa isa, const GemmArgs<float, BFloat16>& g, int threads,
                        bool native_bf16) {
  if (!takes(isa, g)) return false;
  if (native_bf16 && isa >= CpuIsa::kAvx512Bf16)
    run<Avx512BF16Native>(g, threads);
  else if (isa >= CpuIsa::kAvx512)
    run<Avx512BF16Widen>(g, threads);
  else
    run<Avx2BF16Widen>(g, threads);
  return true;
}

bool gemv_weight_direct(CpuIsa isa, const GemmArgs<float, Half>& g, int threads) {
  if (!takes(isa, g)) return false;
  if (isa >= CpuIsa::kAvx512)
    run<Avx512F16>(g, threads);
  else
    run<Avx2F16>(g, threads);
  return true;
}

#else  // no x86 clones: the packed GEMM runs every product

bool gemv_weight_direct(CpuIsa, const GemmArgs<float>&, int) {
  return false;
}
bool gemv_weight_direct(CpuIsa, const GemmArgs<float, BFloat16>&, int, bool) {
  return false;
}
bool gemv_weight_direct(CpuIsa, const GemmArgs<float, Half>&, int) {
  return false;
}

#endif

}  // namespace ember::cpu
