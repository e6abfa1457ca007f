// backend/cpu/cpu_gemm_avx512_bf16.cpp: the AVX512-BF16 kernel of cpu_gemm_bf16.h (Cooper Lake,
// Sapphire Rapids, Zen 4) -- 14 x 32 tiles of c in 28 zmm accumulators, each vdpbf16ps adding a
// pair of k to 16 of them -- and the packers it shares with the AMX kernel. Compiled for
// AVX512-BF16 through target attributes (no file-wide -m flags, so that no inline function of a
// header is emitted here with instructions a baseline caller would then run); the driver calls
// these functions only at cpu_isa() avx512_bf16 or amx.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/cpu_avx512_transpose.h"
#include "backend/cpu/cpu_gemm_bf16.h"

#define EMBER_BF16_TARGET [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")]]
#define EMBER_BF16_INLINE EMBER_BF16_TARGET [[gnu::always_inline]] inline

namespace ember::cpu {

namespace {

constexpr int kPanel = 32;  // k per a chunk, columns per b micro-panel

int64_t round_up32(int64_t k) {
  return (k + 31) / 32 * 32;
}

EMBER_BF16_INLINE __mmask32 mask32(int64_t n) {
  return n >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << n) - 1);
}
EMBER_BF16_INLINE __mmask16 mask16(int n) {
  return static_cast<__mmask16>((1u << n) - 1);
}

// Up to 32 bfloat16 at p (n of them; zero past n), as raw 16-bit lanes.
EMBER_BF16_INLINE __m512i load_bf16(const BFloat16* p, int64_t n) {
  if (n >= 32) return _mm512_loadu_si512(p);
  return _mm512_maskz_loadu_epi16(mask32(n), p);
}

}  // namespace

namespace bf16_pack {

namespace {

template <int MR>
EMBER_BF16_INLINE void pack_a_panels(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t rows,
                                     int64_t col0, int64_t kc, BFloat16* dst) {
  const int64_t kp = round_up32(kc);
  for (int64_t p = 0; p * MR < rows; ++p) {
    BFloat16* out = dst + p * MR * kp;
    int64_t r0 = row0 + p * MR;
    int nrow = static_cast<int>(std::min<int64_t>(MR, row0 + rows - r0));
    const BFloat16* src = g.a + r0 * g.a_rs + col0 * g.a_cs;
    if (g.a_cs == 1) {  // rows of a are contiguous: 64 bytes at a time
      for (int i = 0; i < MR; ++i)
        for (int64_t q = 0; q < kp; q += kPanel) {
          __m512i v = i < nrow ? load_bf16(src + i * g.a_rs + q, kc - q) : _mm512_setzero_si512();
          _mm512_storeu_si512(out + q * MR + i * kPanel, v);
        }
      continue;
    }
    // Any other strides, k outermost (contiguous reads for a transposed a).
    std::memset(static_cast<void*>(out), 0, sizeof(BFloat16) * MR * kp);
    for (int64_t q = 0; q < kc; ++q) {
      BFloat16* chunk = out + q / kPanel * MR * kPanel + q % kPanel;
      for (int i = 0; i < nrow; ++i) chunk[i * kPanel] = src[i * g.a_rs + q * g.a_cs];
    }
  }
}

}  // namespace

EMBER_BF16_TARGET void pack_a14(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t rows,
                                int64_t col0, int64_t kc, BFloat16* dst) {
  pack_a_panels<14>(g, row0, rows, col0, kc, dst);
}

EMBER_BF16_TARGET void pack_a32(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t rows,
                                int64_t col0, int64_t kc, BFloat16* dst) {
  pack_a_panels<32>(g, row0, rows, col0, kc, dst);
}

namespace {

// Half h (16 columns) of a b micro-panel from a transposed b (columns contiguous): column c0 + i
// is `line` i at src + i * line_stride, `valid` of them; its k pairs are 32-bit lanes, so each 16
// pairs of 16 columns are a 16 x 16 transpose.
EMBER_BF16_TARGET void pack_b_lines(const BFloat16* src, int64_t line_stride, int valid, int64_t kc,
                                    int64_t kp, BFloat16* out) {
  for (int64_t k0 = 0; k0 < kp; k0 += kPanel) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < valid ? _mm512_castsi512_ps(load_bf16(src + i * line_stride + k0, kc - k0))
                       : _mm512_setzero_ps();
    avx512::transpose16(r);
    for (int q = 0; q < 16; ++q) _mm512_storeu_ps(out + (k0 / 2 + q) * kPanel, r[q]);
  }
}

}  // namespace

EMBER_BF16_TARGET void pack_b(const GemmArgs<float, BFloat16>& g, int64_t row0, int64_t kc,
                              int64_t col0, int64_t cols, BFloat16* dst) {
  const int64_t kp = round_up32(kc);
  const int64_t half = 16 * kp;  // elements in one half of a micro-panel
  if (g.b_cs == 1) {  // rows of b are contiguous: interleave each two rows, 32 columns at a time
    // Pairs of 16-bit lanes: (row0[j], row1[j]) for j in 0..15, then 16..31.
    alignas(64) uint16_t lo_index[32], hi_index[32];
    for (int j = 0; j < 16; ++j) {
      lo_index[2 * j] = static_cast<uint16_t>(j);
      lo_index[2 * j + 1] = static_cast<uint16_t>(32 + j);
      hi_index[2 * j] = static_cast<uint16_t>(16 + j);
      hi_index[2 * j + 1] = static_cast<uint16_t>(48 + j);
    }
    const __m512i lo_idx = _mm512_load_si512(lo_index), hi_idx = _mm512_load_si512(hi_index);
    for (int64_t p = 0; p < kp; p += 2) {
      const BFloat16* row = g.b + (row0 + p) * g.b_rs + col0;
      for (int64_t j = 0; j < cols; j += kPanel) {
        int64_t n = cols - j;
        __m512i r0 = p < kc ? load_bf16(row + j, n) : _mm512_setzero_si512();
        __m512i r1 = p + 1 < kc ? load_bf16(row + g.b_rs + j, n) : _mm512_setzero_si512();
        BFloat16* out = dst + j * kp + p * 16;
        _mm512_storeu_si512(out, _mm512_permutex2var_epi16(r0, lo_idx, r1));
        _mm512_storeu_si512(out + half, _mm512_permutex2var_epi16(r0, hi_idx, r1));
      }
    }
    return;
  }
  for (int64_t j = 0; j < cols; j += kPanel) {
    BFloat16* out = dst + j * kp;
    int ncol = static_cast<int>(std::min<int64_t>(kPanel, cols - j));
    const BFloat16* src = g.b + row0 * g.b_rs + (col0 + j) * g.b_cs;
    if (g.b_rs == 1) {  // columns of b are contiguous (a transposed weight)
      for (int h = 0; h < 2; ++h) {
        int valid = std::clamp(ncol - 16 * h, 0, 16);
        pack_b_lines(src + 16 * h * g.b_cs, g.b_cs, valid, kc, kp, out + h * half);
      }
      continue;
    }
    std::memset(static_cast<void*>(out), 0, sizeof(BFloat16) * kPanel * kp);
    for (int64_t q = 0; q < kc; ++q)
      for (int jj = 0; jj < ncol; ++jj)
        out[jj / 16 * half + q / 2 * kPanel + jj % 16 * 2 + q % 2] = src[q * g.b_rs + jj * g.b_cs];
  }
}

}  // namespace bf16_pack

namespace {

constexpr int kMr = 14;

EMBER_BF16_INLINE __m512 dot_pairs(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, __builtin_bit_cast(__m512bh, a), __builtin_bit_cast(__m512bh, b));
}

// c tile (ROWS, nr <= 32) = (or +=) ap (a micro-panel of kMr rows) @ bp (a 32-column one).
template <int ROWS>
EMBER_BF16_TARGET void micro(int64_t kc, const BFloat16* ap, const BFloat16* bp, float* c,
                             int64_t ldc, int nr, bool accumulate) {
  const int64_t kp = round_up32(kc), pairs = (kc + 1) / 2;
  const BFloat16* bp1 = bp + 16 * kp;
  __m512 acc[ROWS][2];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i) {
    acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    __builtin_prefetch(c + i * ldc, 1, 3);
    __builtin_prefetch(c + i * ldc + 16, 1, 3);
  }
  for (int64_t q0 = 0; q0 < pairs; q0 += 16) {
    const BFloat16* chunk = ap + q0 * 2 * kMr;
    const int64_t qn = std::min<int64_t>(16, pairs - q0);
#pragma GCC unroll 2
    for (int64_t q = 0; q < qn; ++q) {
      __m512i b0 = _mm512_loadu_si512(bp + (q0 + q) * kPanel);
      __m512i b1 = _mm512_loadu_si512(bp1 + (q0 + q) * kPanel);
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) {
        int32_t pair;
        std::memcpy(&pair, chunk + i * kPanel + q * 2, sizeof(pair));
        __m512i a = _mm512_set1_epi32(pair);
        acc[i][0] = dot_pairs(acc[i][0], a, b0);
        acc[i][1] = dot_pairs(acc[i][1], a, b1);
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i) {
    float* row = c + i * ldc;
    for (int v = 0; v < 2; ++v) {
      int n = nr - 16 * v;
      if (n <= 0) break;
      __mmask16 m = n >= 16 ? __mmask16{0xFFFF} : mask16(n);
      __m512 x = acc[i][v];
      if (accumulate) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, row + 16 * v));
      _mm512_mask_storeu_ps(row + 16 * v, m, x);
    }
  }
}

template <int... Rows>
constexpr GemmKernelBF16 make_kernel(std::integer_sequence<int, Rows...>) {
  // A 14-row a micro-panel (14 x 512 x 2 bytes) stays in L1, a packed b block (512 x 512) in L2.
  return GemmKernelBF16{
      .name = "avx512_bf16 14x32",
      .mr = kMr,
      .nr = kPanel,
      .kc = 512,
      .nb = 512,
      .mc = 2016,
      .micro = {&micro<Rows + 1>...},
      .pack_a = &bf16_pack::pack_a14,
      .pack_b = &bf16_pack::pack_b,
      .kgroup = kPanel,
  };
}

}  // namespace

constinit const GemmKernelBF16 kGemmAvx512Bf16BF16 =
    make_kernel(std::make_integer_sequence<int, kMr>{});

}  // namespace ember::cpu
