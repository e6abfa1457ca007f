// backend/cpu/cpu_qgemv.cpp: the quantized weight-direct products of cpu_qgemv.h -- int8, Q8_0,
// Q4_0 and Q4_1 rows widened to float32 in registers at AVX-512 and AVX2 (target attributes, as the
// other kernels of this folder), and one element at a time at the baseline level.
#include "backend/cpu/cpu_qgemv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(EMBER_HAVE_ISA_CLONES)
#include <immintrin.h>
#endif

namespace ember::cpu {

namespace {

using kernels::kQuantBlock;
using kernels::QuantKind;

// x's rows are copied into rows of a multiple of kQuantBlock floats, zero past k, so that every
// block's loads are whole.
constexpr int64_t kPad = kQuantBlock;

using kernels::quant_block_bytes;

// Runs c's columns j0..j1 of one product: x packed (row stride kp), W's rows of rb bytes.
using Columns = void (*)(const float* x, int64_t kp, int64_t m, const unsigned char* w, int64_t rb,
                         int64_t k, float* c, int64_t ldc, int64_t j0, int64_t j1);

// One element at a time: the baseline level, and CPUs without the x86 clones.
template <QuantKind K>
void columns_scalar(const float* x, int64_t kp, int64_t m, const unsigned char* w, int64_t rb,
                    int64_t k, float* c, int64_t ldc, int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) {
    const unsigned char* row = w + j * rb;
    for (int64_t i = 0; i < m; ++i) {
      const float* xi = x + i * kp;
      float sum = 0;
      if constexpr (K == QuantKind::Int8) {
        for (int64_t p = 0; p < k; ++p)
          sum += xi[p] * static_cast<float>(static_cast<int8_t>(row[4 + p]));
        sum *= kernels::quant_f32_at(row);
      } else {
        for (int64_t b = 0; b < k / kQuantBlock; ++b) {
          const unsigned char* blk = row + b * quant_block_bytes(K);
          const unsigned char* qs = blk + (K == QuantKind::Q4_1 ? 4 : 2);
          float block_sum = 0, x_sum = 0;
          for (int64_t e = 0; e < kQuantBlock; ++e) {
            int q;
            if constexpr (K == QuantKind::Q8_0)
              q = static_cast<int8_t>(qs[e]);
            else
              q = (e < 16 ? (qs[e] & 0x0f) : (qs[e - 16] >> 4)) - (K == QuantKind::Q4_0 ? 8 : 0);
            block_sum += xi[b * kQuantBlock + e] * static_cast<float>(q);
            x_sum += xi[b * kQuantBlock + e];
          }
          sum += block_sum * kernels::quant_f16_at(blk);
          if constexpr (K == QuantKind::Q4_1) sum += x_sum * kernels::quant_f16_at(blk + 2);
        }
      }
      c[i * ldc + j] = sum;
    }
  }
}

Columns scalar_columns(QuantKind kind) {
  switch (kind) {
    case QuantKind::Int8:
      return columns_scalar<QuantKind::Int8>;
    case QuantKind::Q8_0:
      return columns_scalar<QuantKind::Q8_0>;
    case QuantKind::Q4_0:
      return columns_scalar<QuantKind::Q4_0>;
    default:
      return columns_scalar<QuantKind::Q4_1>;
  }
}

#if defined(EMBER_HAVE_ISA_CLONES)

#define EMBER_QGEMV_AVX512 [[gnu::target("arch=x86-64-v4")]]
#define EMBER_QGEMV_AVX2 [[gnu::target("arch=x86-64-v3")]]

uint16_t u16_at(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

// A level's vectors: a block of 32 elements is kVecs vectors; int8 widens 32 signed bytes, q4 the
// 16 bytes of a Q4_0 / Q4_1 block (low nibbles first, then high; minus 8 for Q4_0).
struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16, kVecs = 2;
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec zero() { return _mm512_setzero_ps(); }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec load(const float* p) {
    return _mm512_loadu_ps(p);
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec fma(Vec a, Vec b, Vec c) {
    return _mm512_fmadd_ps(a, b, c);
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec mul(Vec a, Vec b) {
    return _mm512_mul_ps(a, b);
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec set1(float v) { return _mm512_set1_ps(v); }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec add(Vec a, Vec b) {
    return _mm512_add_ps(a, b);
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static Vec widen(__m128i bytes) {
    return _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, bytes));
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static void int8(const unsigned char* q, Vec* out) {
    out[0] = widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    out[1] = widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)));
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static void q4(const unsigned char* qs, Vec* out,
                                                           bool minus8) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m128i mask = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(minus8 ? 8 : 0);
    out[0] = widen(_mm_sub_epi8(_mm_and_si128(bytes, mask), eight));
    out[1] = widen(_mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), mask), eight));
  }
  EMBER_QGEMV_AVX512 [[gnu::always_inline]] static float reduce(Vec a) {
    const __m256 h = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, a, 0),
                                   _mm512_maskz_extractf32x8_ps(0xFF, a, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
};

struct Avx2 {
  using Vec = __m256;
  static constexpr int kLanes = 8, kVecs = 4;
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec zero() { return _mm256_setzero_ps(); }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec load(const float* p) {
    return _mm256_loadu_ps(p);
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec fma(Vec a, Vec b, Vec c) {
    return _mm256_fmadd_ps(a, b, c);
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec mul(Vec a, Vec b) {
    return _mm256_mul_ps(a, b);
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec set1(float v) { return _mm256_set1_ps(v); }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec add(Vec a, Vec b) {
    return _mm256_add_ps(a, b);
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static Vec widen(__m128i bytes) {  // the low 8 bytes
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static void int8(const unsigned char* q, Vec* out) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16));
    out[0] = widen(a);
    out[1] = widen(_mm_srli_si128(a, 8));
    out[2] = widen(b);
    out[3] = widen(_mm_srli_si128(b, 8));
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static void q4(const unsigned char* qs, Vec* out,
                                                         bool minus8) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m128i mask = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(minus8 ? 8 : 0);
    const __m128i lo = _mm_sub_epi8(_mm_and_si128(bytes, mask), eight);
    const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), mask), eight);
    out[0] = widen(lo);
    out[1] = widen(_mm_srli_si128(lo, 8));
    out[2] = widen(hi);
    out[3] = widen(_mm_srli_si128(hi, 8));
  }
  EMBER_QGEMV_AVX2 [[gnu::always_inline]] static float reduce(Vec a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
};

// c's (MR x NJ) block at column j.. = MR packed rows of x against NJ rows of W. An int8 row's
// tail past its last whole block is read from a zeroed copy (x is zero there too). `columns`
// runs the blocks of columns j0..j1, NJ at a time and the rest one by one (an element's sum is
// the same either way). The same bodies at each level's target.
#define EMBER_QGEMV_KERNELS(TARGET, SUFFIX)                                                      \
  template <class V, QuantKind K, int MR, int NJ>                                                \
  TARGET [[gnu::always_inline]] inline void block_##SUFFIX(const float* x, int64_t kp,           \
                                                           const unsigned char* w, int64_t rb,   \
                                                           int64_t k, float* c, int64_t ldc) {   \
    using Vec = typename V::Vec;                                                                 \
    Vec acc[MR][NJ];                                                                             \
    for (int i = 0; i < MR; ++i)                                                                 \
      for (int j = 0; j < NJ; ++j) acc[i][j] = V::zero();                                        \
    const int64_t blocks = k / kQuantBlock;                                                      \
    /* The blocks' float16 scales, converted in a loop of their own ahead of the products. */    \
    float scales[K == QuantKind::Int8 ? 1 : NJ][K == QuantKind::Int8 ? 1 : kQuantGemvMaxBlocks]; \
    if constexpr (K != QuantKind::Int8)                                                          \
      for (int j = 0; j < NJ; ++j)                                                               \
        for (int64_t b = 0; b < blocks; ++b)                                                     \
          scales[j][b] = _cvtsh_ss(u16_at(w + j * rb + b * quant_block_bytes(K)));               \
    /* Q4_1: the blocks' float16 minimums, the same way. */                                      \
    float mins[K == QuantKind::Q4_1 ? NJ : 1][K == QuantKind::Q4_1 ? kQuantGemvMaxBlocks : 1];   \
    if constexpr (K == QuantKind::Q4_1)                                                          \
      for (int j = 0; j < NJ; ++j)                                                               \
        for (int64_t b = 0; b < blocks; ++b)                                                     \
          mins[j][b] = _cvtsh_ss(u16_at(w + j * rb + b * quant_block_bytes(K) + 2));             \
    for (int64_t b = 0; b < blocks; ++b) {                                                       \
      const float* xb = x + b * kQuantBlock;                                                     \
      for (int j = 0; j < NJ; ++j) {                                                             \
        Vec wv[V::kVecs];                                                                        \
        if constexpr (K == QuantKind::Int8) {                                                    \
          V::int8(w + j * rb + 4 + b * kQuantBlock, wv);                                         \
          for (int i = 0; i < MR; ++i)                                                           \
            for (int v = 0; v < V::kVecs; ++v)                                                   \
              acc[i][j] = V::fma(V::load(xb + i * kp + v * V::kLanes), wv[v], acc[i][j]);        \
        } else {                                                                                 \
          const unsigned char* blk = w + j * rb + b * quant_block_bytes(K);                      \
          if constexpr (K == QuantKind::Q8_0)                                                    \
            V::int8(blk + 2, wv);                                                                \
          else                                                                                   \
            V::q4(blk + (K == QuantKind::Q4_1 ? 4 : 2), wv, K == QuantKind::Q4_0);               \
          const Vec d = V::set1(scales[j][b]);                                                   \
          for (int i = 0; i < MR; ++i) {                                                         \
            Vec t = V::mul(V::load(xb + i * kp), wv[0]);                                         \
            for (int v = 1; v < V::kVecs; ++v)                                                   \
              t = V::fma(V::load(xb + i * kp + v * V::kLanes), wv[v], t);                        \
            acc[i][j] = V::fma(t, d, acc[i][j]);                                                 \
            if constexpr (K == QuantKind::Q4_1) { /* + m * the block's sum of x */               \
              Vec xs = V::load(xb + i * kp);                                                     \
              for (int v = 1; v < V::kVecs; ++v)                                                 \
                xs = V::add(xs, V::load(xb + i * kp + v * V::kLanes));                           \
              acc[i][j] = V::fma(xs, V::set1(mins[j][b]), acc[i][j]);                            \
            }                                                                                    \
          }                                                                                      \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    if constexpr (K == QuantKind::Int8) {                                                        \
      const int64_t full = blocks * kQuantBlock;                                                 \
      if (full < k) {                                                                            \
        for (int j = 0; j < NJ; ++j) {                                                           \
          alignas(64) unsigned char tail[kQuantBlock] = {};                                      \
          std::memcpy(tail, w + j * rb + 4 + full, static_cast<size_t>(k - full));               \
          Vec wv[V::kVecs];                                                                      \
          V::int8(tail, wv);                                                                     \
          for (int i = 0; i < MR; ++i)                                                           \
            for (int v = 0; v < V::kVecs; ++v)                                                   \
              acc[i][j] = V::fma(V::load(x + full + i * kp + v * V::kLanes), wv[v], acc[i][j]);  \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    for (int j = 0; j < NJ; ++j) {                                                               \
      const float scale = K == QuantKind::Int8 ? kernels::quant_f32_at(w + j * rb) : 1.0f;       \
      for (int i = 0; i < MR; ++i) c[i * ldc + j] = V::reduce(acc[i][j]) * scale;                \
    }                                                                                            \
  }                                                                                              \
  template <class V, QuantKind K, int MR>                                                        \
  TARGET void columns_##SUFFIX(const float* x, int64_t kp, int64_t, const unsigned char* w,      \
                               int64_t rb, int64_t k, float* c, int64_t ldc, int64_t j0,         \
                               int64_t j1) {                                                     \
    constexpr int NJ = MR <= 2 ? 4 : 2;                                                          \
    int64_t j = j0;                                                                              \
    for (; j + NJ <= j1; j += NJ)                                                                \
      block_##SUFFIX<V, K, MR, NJ>(x, kp, w + j * rb, rb, k, c + j, ldc);                        \
    for (; j < j1; ++j) block_##SUFFIX<V, K, MR, 1>(x, kp, w + j * rb, rb, k, c + j, ldc);       \
  }

EMBER_QGEMV_KERNELS(EMBER_QGEMV_AVX512, avx512)
EMBER_QGEMV_KERNELS(EMBER_QGEMV_AVX2, avx2)
#undef EMBER_QGEMV_KERNELS

template <class V, QuantKind K, int MR>
Columns columns_of() {
  if constexpr (V::kLanes == 16)
    return columns_avx512<V, K, MR>;
  else
    return columns_avx2<V, K, MR>;
}

template <class V, QuantKind K>
Columns columns_for_rows(int64_t m) {
  switch (m) {
    case 1:
      return columns_of<V, K, 1>();
    case 2:
      return columns_of<V, K, 2>();
    case 3:
      return columns_of<V, K, 3>();
    default:
      return columns_of<V, K, 4>();
  }
}

template <class V>
Columns vector_columns(QuantKind kind, int64_t m) {
  switch (kind) {
    case QuantKind::Int8:
      return columns_for_rows<V, QuantKind::Int8>(m);
    case QuantKind::Q8_0:
      return columns_for_rows<V, QuantKind::Q8_0>(m);
    case QuantKind::Q4_0:
      return columns_for_rows<V, QuantKind::Q4_0>(m);
    default:
      return columns_for_rows<V, QuantKind::Q4_1>(m);
  }
}

#endif  // EMBER_HAVE_ISA_CLONES

Columns columns_for(CpuIsa isa, QuantKind kind, int64_t m) {
#if defined(EMBER_HAVE_ISA_CLONES)
  if (isa >= CpuIsa::kAvx512) return vector_columns<Avx512>(kind, m);
  if (isa >= CpuIsa::kAvx2) return vector_columns<Avx2>(kind, m);
#else
  (void)isa;
  (void)m;
#endif
  return scalar_columns(kind);
}

}  // namespace

bool quantized_gemv(CpuIsa isa, QuantKind kind, int64_t m, int64_t n, int64_t k, const float* x,
                    int64_t ldx, const unsigned char* w, float* c, int64_t ldc, int threads) {
  if (!quantized_gemv_takes(kind, m, k)) return false;
  if (n == 0) return true;
  const int64_t kp = (k + kPad - 1) / kPad * kPad;
  thread_local std::vector<float> packed;
  packed.assign(static_cast<size_t>(m * kp), 0.0f);
  for (int64_t i = 0; i < m; ++i) std::copy_n(x + i * ldx, k, packed.data() + i * kp);
  const Columns columns = columns_for(isa, kind, m);
  const int64_t rb = kernels::quant_row_bytes(kind, k);
  const float* xp = packed.data();
  // Enough bytes of W per thread (64 KiB at least) that a thread's share outweighs starting it.
  const int nt = omp_in_parallel() ? 1
                                   : static_cast<int>(std::clamp<int64_t>(
                                         n * rb >> 16, 1, std::min<int64_t>(threads, (n + 3) / 4)));
  if (nt == 1) {
    columns(xp, kp, m, w, rb, k, c, ldc, 0, n);
    return true;
  }
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), count = omp_get_num_threads();
    columns(xp, kp, m, w, rb, k, c, ldc, n * t / count, n * (t + 1) / count);
  }
  return true;
}

}  // namespace ember::cpu
