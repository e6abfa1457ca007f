// backend/cpu/cpu_sgemm_avx512.cpp: ember's float32 GEMM for AVX-512 CPUs (BLIS-style).
//
// Loops, outermost first: M blocks of MC rows; K blocks of KC, the block of a (MC x KC) packed
// into 14-row micro-panels; N chunks of NB columns, the block of b (KC x NB) packed into 32-column
// micro-panels; then the micro-kernel over every (14-row panel of a) x (32-column panel of b)
// tile, each a panel staying in L1 while b's panels stream from L2. The micro-kernel keeps a
// 14x32 tile of c in 28 zmm registers and does one broadcast and two FMAs per row and k. With
// several threads, each takes a range of columns (or of rows, when that duplicates less packing)
// as a product of its own; nobody splits K, so every element of c sums the same K blocks in the
// same order whatever the thread count.
//
// Only the functions marked EMBER_AVX512 use AVX-512; the rest of the file is baseline code, so
// no AVX-512 instruction runs unless sgemm_avx512_supported() said yes.
#include "backend/cpu/cpu_sgemm_avx512.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <utility>

#include "core/host_allocator.h"

#define EMBER_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

namespace ember::cpu {

namespace {

constexpr int kMr = 14;  // rows of a micro-tile: 14 x 2 accumulators + 2 b vectors + 1 broadcast
constexpr int kNr = 32;  // columns of a micro-tile: two zmm registers
// Block sizes for 48 KiB L1d / 2 MiB L2 per core: an a micro-panel (14 x KC, 28 KiB) stays in L1,
// a packed b block (KC x NB, 1 MiB) in L2. MC bounds a thread's packed a block (4 MiB). KC 512
// rather than 384: a K of 1024 then takes 2 passes over c instead of 3 (6 % faster at 1024^3).
constexpr int64_t kKc = 512;
constexpr int64_t kNb = 512;
constexpr int64_t kMc = 2016;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Splits n into ceil(n / max_block) near-equal blocks, each a multiple of `multiple`.
int64_t balanced_block(int64_t n, int64_t max_block, int64_t multiple) {
  if (n <= 0) return multiple;
  int64_t blocks = ceil_div(n, max_block);
  return ceil_div(ceil_div(n, blocks), multiple) * multiple;
}

// Masks of the valid lanes of the two 16-float halves of a row segment of nr <= 32 columns.
EMBER_AVX512 inline __mmask16 lane_mask(int valid) {
  if (valid >= 16) return 0xFFFF;
  if (valid <= 0) return 0;
  return static_cast<__mmask16>((1u << valid) - 1);
}

// c tile (MR, nr) = (or +=, when accumulate) ap (KC x 14, k-major) @ bp (KC x 32, k-major).
template <int MR>
EMBER_AVX512 void micro_kernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                               int nr, bool accumulate) {
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 14
  for (int i = 0; i < MR; ++i) {
    c0[i] = _mm512_setzero_ps();
    c1[i] = _mm512_setzero_ps();
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    if (nr > 16) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    __m512 b0 = _mm512_loadu_ps(bp);
    __m512 b1 = _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 14
    for (int i = 0; i < MR; ++i) {
      __m512 av = _mm512_set1_ps(ap[i]);
      c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
    }
    ap += kMr;
    bp += kNr;
  }
  if (nr == kNr) {
#pragma GCC unroll 14
    for (int i = 0; i < MR; ++i) {
      float* row = c + i * ldc;
      if (accumulate) {
        c0[i] = _mm512_add_ps(c0[i], _mm512_loadu_ps(row));
        c1[i] = _mm512_add_ps(c1[i], _mm512_loadu_ps(row + 16));
      }
      _mm512_storeu_ps(row, c0[i]);
      _mm512_storeu_ps(row + 16, c1[i]);
    }
    return;
  }
  // Partial tile: masked loads and stores (the second half only when it has columns, so that no
  // pointer goes past the end of c).
  __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
#pragma GCC unroll 14
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    if (accumulate) c0[i] = _mm512_add_ps(c0[i], _mm512_maskz_loadu_ps(m0, row));
    _mm512_mask_storeu_ps(row, m0, c0[i]);
    if (nr > 16) {
      if (accumulate) c1[i] = _mm512_add_ps(c1[i], _mm512_maskz_loadu_ps(m1, row + 16));
      _mm512_mask_storeu_ps(row + 16, m1, c1[i]);
    }
  }
}

using MicroKernel = void (*)(int64_t, const float*, const float*, float*, int64_t, int, bool);

template <int... R>
constexpr auto make_kernels(std::integer_sequence<int, R...>) {
  return std::array<MicroKernel, sizeof...(R)>{&micro_kernel<R + 1>...};
}
// kernels[r - 1] handles r rows.
constexpr auto kKernels = make_kernels(std::make_integer_sequence<int, kMr>{});

// The all-lanes masked forms of unpack and shuffle_f32x4: GCC 12's plain forms start from
// _mm512_undefined_ps and then warn -Wmaybe-uninitialized.
EMBER_AVX512 inline __m512 unpacklo(__m512 a, __m512 b) {
  return _mm512_mask_unpacklo_ps(a, 0xFFFF, a, b);
}
EMBER_AVX512 inline __m512 unpackhi(__m512 a, __m512 b) {
  return _mm512_mask_unpackhi_ps(a, 0xFFFF, a, b);
}
template <int Imm>
EMBER_AVX512 inline __m512 shuffle_lanes(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, Imm);
}

// Transposes a 16x16 block in registers: on return, r[j] holds element j of each input r[i].
EMBER_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = unpacklo(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = unpackhi(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane l: column 4l + c of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    __m512 v_lo = shuffle_lanes<0x88>(u[c], u[4 + c]);
    __m512 v_hi = shuffle_lanes<0xDD>(u[c], u[4 + c]);
    __m512 w_lo = shuffle_lanes<0x88>(u[8 + c], u[12 + c]);
    __m512 w_hi = shuffle_lanes<0xDD>(u[8 + c], u[12 + c]);
    r[c] = shuffle_lanes<0x88>(v_lo, w_lo);
    r[4 + c] = shuffle_lanes<0x88>(v_hi, w_hi);
    r[8 + c] = shuffle_lanes<0xDD>(v_lo, w_lo);
    r[12 + c] = shuffle_lanes<0xDD>(v_hi, w_hi);
  }
}

// How far ahead (in floats) the transposing packer prefetches each line: four cache lines, enough
// for the 14-16 strided streams it reads to arrive from memory in time.
constexpr int64_t kPrefetch = 64;

// out (kc x width, row stride `ld`, at most 16 wide) = the transpose of `lines` (width x kc): line
// i has its kc elements contiguous at src + i * line_stride; lines past `valid` read as zero.
EMBER_AVX512 void pack_transposed(const float* src, int64_t line_stride, int valid, int width,
                                  int64_t kc, float* out, int64_t ld) {
  __mmask16 store = lane_mask(width);
  int64_t q = 0;
  for (; q + 16 <= kc; q += 16) {
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (i < valid) {
        const float* line = src + i * line_stride + q;
        if (q + 16 + kPrefetch <= kc)
          _mm_prefetch(reinterpret_cast<const char*>(line + kPrefetch), _MM_HINT_T0);
        r[i] = _mm512_loadu_ps(line);
      } else {
        r[i] = _mm512_setzero_ps();
      }
    }
    transpose16(r);
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) _mm512_mask_storeu_ps(out + (q + j) * ld, store, r[j]);
  }
  for (; q < kc; ++q)
    for (int i = 0; i < width; ++i) out[q * ld + i] = i < valid ? src[i * line_stride + q] : 0.0f;
}

// Packs a's block at (row0, col0), `rows` x kc, into 14-row micro-panels: panel p holds rows
// row0 + 14p .. +14 as kc groups of 14 (zero past `rows`).
EMBER_AVX512 void pack_a(const SgemmArgs& g, int64_t row0, int64_t rows, int64_t col0, int64_t kc,
                         float* dst) {
  for (int64_t p = 0; p < ceil_div(rows, kMr); ++p) {
    float* out = dst + p * kMr * kc;
    int64_t r0 = row0 + p * kMr;
    int nrow = static_cast<int>(std::min<int64_t>(kMr, row0 + rows - r0));
    const float* src = g.a + r0 * g.a_rs + col0 * g.a_cs;
    if (g.a_cs == 1) {  // rows of a are contiguous: transpose 16 k at a time
      pack_transposed(src, g.a_rs, nrow, kMr, kc, out, kMr);
      continue;
    }
    if (g.a_rs == 1 && nrow == kMr) {  // a column holds the panel's 14 values contiguously
      __mmask16 m = lane_mask(kMr);
      for (int64_t q = 0; q < kc; ++q)
        _mm512_mask_storeu_ps(out + q * kMr, m, _mm512_maskz_loadu_ps(m, src + q * g.a_cs));
      continue;
    }
    if (nrow < kMr) std::fill_n(out, kMr * kc, 0.0f);
    for (int64_t q = 0; q < kc; ++q)
      for (int i = 0; i < nrow; ++i) out[q * kMr + i] = src[i * g.a_rs + q * g.a_cs];
  }
}

// Packs b's block at (row0, col0), kc x cols, into 32-column micro-panels of kc rows each
// (zero past `cols`).
EMBER_AVX512 void pack_b(const SgemmArgs& g, int64_t row0, int64_t kc, int64_t col0, int64_t cols,
                         float* dst) {
  if (g.b_cs == 1) {  // rows of b are contiguous: read each row once, left to right
    int64_t full = cols / kNr * kNr;
    int tail = static_cast<int>(cols - full);
    __mmask16 m0 = lane_mask(tail), m1 = lane_mask(tail - 16);
    for (int64_t q = 0; q < kc; ++q) {
      const float* row = g.b + (row0 + q) * g.b_rs + col0;
      float* out = dst + q * kNr;
      for (int64_t j = 0; j < full; j += kNr) {
        _mm512_storeu_ps(out + j * kc, _mm512_loadu_ps(row + j));
        _mm512_storeu_ps(out + j * kc + 16, _mm512_loadu_ps(row + j + 16));
      }
      if (tail > 0) {
        _mm512_storeu_ps(out + full * kc, _mm512_maskz_loadu_ps(m0, row + full));
        _mm512_storeu_ps(out + full * kc + 16, tail > 16
                                                   ? _mm512_maskz_loadu_ps(m1, row + full + 16)
                                                   : _mm512_setzero_ps());
      }
    }
    return;
  }
  for (int64_t j = 0; j < cols; j += kNr) {
    float* out = dst + j * kc;
    int ncol = static_cast<int>(std::min<int64_t>(kNr, cols - j));
    const float* src = g.b + row0 * g.b_rs + (col0 + j) * g.b_cs;
    if (g.b_rs == 1) {  // columns of b are contiguous (a transposed weight): transpose 16 x 16
      pack_transposed(src, g.b_cs, std::min(ncol, 16), 16, kc, out, kNr);
      pack_transposed(ncol > 16 ? src + 16 * g.b_cs : src, g.b_cs, std::max(ncol - 16, 0), 16, kc,
                      out + 16, kNr);
      continue;
    }
    if (ncol < kNr) std::fill_n(out, kNr * kc, 0.0f);
    for (int64_t q = 0; q < kc; ++q)
      for (int jj = 0; jj < ncol; ++jj) out[q * kNr + jj] = src[q * g.b_rs + jj * g.b_cs];
  }
}

// Runs the micro-kernel over all a panels of the packed block (rows x kc) x the packed b block
// (kc x cols) into c at (row0, col0).
void compute_block(const SgemmArgs& g, const float* apack, int64_t row0, int64_t rows,
                   const float* bpack, int64_t col0, int64_t cols, int64_t kc, bool accumulate) {
  for (int64_t r = 0; r < rows; r += kMr) {
    int nrow = static_cast<int>(std::min<int64_t>(kMr, rows - r));
    MicroKernel kernel = kKernels[nrow - 1];
    const float* ap = apack + r * kc;
    for (int64_t j = 0; j < cols; j += kNr) {
      int ncol = static_cast<int>(std::min<int64_t>(kNr, cols - j));
      kernel(kc, ap, bpack + j * kc, g.c + (row0 + r) * g.ldc + col0 + j, g.ldc, ncol, accumulate);
    }
  }
}

// Block sizes of one thread's product: they depend on the operand shapes only, and the K blocks
// on K only, so every element of c sums the same K blocks in the same order on any thread.
struct Blocks {
  int64_t mc, kc, nb;
  explicit Blocks(const SgemmArgs& g)
      : mc(balanced_block(g.m, kMc, kMr)),
        kc(balanced_block(g.k, kKc, 1)),
        nb(balanced_block(g.n, kNb, kNr)) {}
  int64_t floats() const { return mc * kc + kc * nb; }
};

// c = a @ b on the calling thread, with packing buffers at `buf` (Blocks(g).floats() floats).
void gemm_serial(const SgemmArgs& g, float* buf) {
  Blocks bl(g);
  float* apack = buf;
  float* bpack = buf + bl.mc * bl.kc;
  for (int64_t ic = 0; ic < g.m; ic += bl.mc) {
    int64_t rows = std::min(bl.mc, g.m - ic);
    for (int64_t pc = 0; pc < g.k; pc += bl.kc) {
      int64_t kc = std::min(bl.kc, g.k - pc);
      pack_a(g, ic, rows, pc, kc, apack);
      for (int64_t jc = 0; jc < g.n; jc += bl.nb) {
        int64_t cols = std::min(bl.nb, g.n - jc);
        pack_b(g, pc, kc, jc, cols, bpack);
        compute_block(g, apack, ic, rows, bpack, jc, cols, kc, pc > 0);
      }
    }
  }
}

// Thread t's part of a product split among nt threads: a contiguous range of columns (a multiple
// of 32 wide) when split_n, else of rows (a multiple of 14). Each part is a product of its own
// that packs its own panels: the threads never wait for one another inside the product (waking a
// sleeping OpenMP thread costs 100-300 us on a busy VM, more than packing the shared operand
// twice).
SgemmArgs part(const SgemmArgs& g, bool split_n, int t, int nt) {
  SgemmArgs p = g;
  int64_t unit = split_n ? kNr : kMr, extent = split_n ? g.n : g.m;
  int64_t units = ceil_div(extent, unit);
  int64_t lo = std::min(extent, units * t / nt * unit);
  int64_t hi = std::min(extent, units * (t + 1) / nt * unit);
  if (split_n) {
    p.n = hi - lo;
    p.b += lo * g.b_cs;
    p.c += lo;
  } else {
    p.m = hi - lo;
    p.a += lo * g.a_rs;
    p.c += lo * g.ldc;
  }
  return p;
}

// Per-thread scratch kept between calls (packed panels; a fresh allocation of megabytes per call
// would cost a page fault per 4 KiB). From 1 MiB up it is at least a huge block of the host
// allocator (2 MiB aligned, transparent huge pages): the micro-kernel streams packed b panels and
// re-reads packed a panels, and with 4 KiB pages that missed the first-level TLB every 32 k steps
// (1024^3 on 2 threads went from 73 % to 77 % of the FMA peak).
struct Scratch {
  float* data = nullptr;
  size_t bytes = 0;
  ~Scratch() { release(); }
  void release() {
    if (data) host_deallocate(data, bytes);
    data = nullptr;
    bytes = 0;
  }
  float* get(int64_t floats) {
    size_t want = static_cast<size_t>(floats) * sizeof(float);
    if (want > bytes) {
      release();
      size_t size = want >= (size_t{1} << 20) ? std::max(want, kMinHugeBlock) : want;
      data = static_cast<float*>(host_allocate(size));
      bytes = size;
    }
    return data;
  }
};

thread_local Scratch scratch;

}  // namespace

bool sgemm_avx512_supported() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("fma");
  return ok;
}

void sgemm_avx512(const SgemmArgs& g, int threads) {
  // Below about 2^17 multiply-adds per thread, waking a second thread costs more than it saves.
  int64_t work = g.m * g.n * g.k;
  int nt = static_cast<int>(std::clamp<int64_t>(work >> 17, 1, std::max(threads, 1)));
  if (omp_in_parallel()) nt = 1;
  if (nt == 1) {
    gemm_serial(g, scratch.get(Blocks(g).floats()));
    return;
  }
  // Split the dimension whose packing the threads then share the least of: columns duplicate the
  // packing of a (m x k), rows that of b (k x n); both need enough 32-column or 14-row panels.
  int64_t n_panels = ceil_div(g.n, kNr), m_panels = ceil_div(g.m, kMr);
  bool split_n = n_panels >= 2 * nt && (g.m <= g.n || m_panels < 2 * nt);
  if (n_panels < 2 * nt && m_panels < 2 * nt) split_n = n_panels >= m_panels;
  // Buffers are allocated here, on the calling thread, so that a failure throws outside OpenMP.
  int64_t floats = 0;
  for (int t = 0; t < nt; ++t) floats = std::max(floats, Blocks(part(g, split_n, t, nt)).floats());
  floats = (floats + 15) / 16 * 16;
  float* base = scratch.get(floats * nt);
  // Parts are handed out first come, first served: when the OS starts a thread late, the others
  // have taken its part and it only has to arrive at the region's end. Which thread computes a
  // part does not change the result.
  std::atomic<int> next{0};
#pragma omp parallel num_threads(nt)
  {
    float* mine = base + omp_get_thread_num() * floats;
    for (int i = next.fetch_add(1); i < nt; i = next.fetch_add(1)) {
      SgemmArgs p = part(g, split_n, i, nt);
      if (p.m > 0 && p.n > 0) gemm_serial(p, mine);
    }
  }
}

}  // namespace ember::cpu
