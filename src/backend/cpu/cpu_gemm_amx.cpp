// backend/cpu/cpu_gemm_amx.cpp: the AMX kernel of cpu_gemm_bf16.h (Sapphire Rapids and later) --
// a 32 x 32 block of c in four 16 x 16 float32 tiles, tmm0..tmm3, each 32 k of the a and b
// micro-panels two a tiles (tmm4, tmm5) and two b tiles (tmm6, tmm7) and four _tile_dpbf16ps.
// The tile registers are configured at the start of each packed block and released at its end,
// so nothing is left configured between calls. Compiled for AMX through target attributes (see
// cpu_gemm_avx512_bf16.cpp); the driver calls it only at cpu_isa() amx, which detected_isa()
// reports only once Linux has granted this process the tile data.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_gemm_bf16.h"

#define EMBER_AMX_TARGET \
  [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,amx-tile,amx-bf16")]]

namespace ember::cpu {

namespace {

constexpr int kTile = 16;   // rows of every tile; float32 columns of a c tile
constexpr int kBlock = 32;  // rows and columns of c per block of four tiles; k per a tile

// The 64-byte operand of ldtilecfg: palette 1, tiles 0-7 all 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
constexpr TileConfig kConfig{};

// The tile instructions are asm statements that name their memory by address only: the compiler
// must finish (or not yet start) plain stores and loads of that memory across them.
inline void memory_barrier() {
  __asm__ __volatile__("" ::: "memory");
}

// A c tile at (r, j) of the block, `rows` x `cols` of it inside c: whole tiles move between c and
// their tile register directly, partial ones through a 16 x 16 staging buffer.
struct CTile {
  float* c;
  int64_t ldc;
  int rows, cols;
  bool whole() const { return rows == kTile && cols == kTile; }
  void stage_in(float* buf) const {
    std::fill_n(buf, kTile * kTile, 0.0f);
    for (int i = 0; i < rows; ++i) std::copy_n(c + i * ldc, cols, buf + i * kTile);
    memory_barrier();
  }
  void stage_out(const float* buf) const {
    memory_barrier();
    for (int i = 0; i < rows; ++i) std::copy_n(buf + i * kTile, cols, c + i * ldc);
  }
};

// Tile numbers are part of each instruction, so each c tile has its own load and store.
#define EMBER_AMX_C_TILE_IO(n)                                                   \
  EMBER_AMX_TARGET void load_c##n(const CTile& t, bool accumulate, float* buf) { \
    if (!accumulate) {                                                           \
      _tile_zero(n);                                                             \
    } else if (t.whole()) {                                                      \
      _tile_loadd(n, t.c, t.ldc * sizeof(float));                                \
    } else {                                                                     \
      t.stage_in(buf);                                                           \
      _tile_loadd(n, buf, kTile * sizeof(float));                                \
    }                                                                            \
  }                                                                              \
  EMBER_AMX_TARGET void store_c##n(const CTile& t, float* buf) {                 \
    if (t.whole()) {                                                             \
      _tile_stored(n, t.c, t.ldc * sizeof(float));                               \
    } else {                                                                     \
      _tile_stored(n, buf, kTile * sizeof(float));                               \
      t.stage_out(buf);                                                          \
    }                                                                            \
  }
EMBER_AMX_C_TILE_IO(0)
EMBER_AMX_C_TILE_IO(1)
EMBER_AMX_C_TILE_IO(2)
EMBER_AMX_C_TILE_IO(3)
#undef EMBER_AMX_C_TILE_IO

// c (rows <= 32, cols <= 32) = (or +=) ap (a 32-row a micro-panel) @ bp (a 32-column b one), kp
// of k. RT and CT: 1 or 2 tiles of rows and columns (rows > 16, cols > 16).
template <int RT, int CT>
EMBER_AMX_TARGET void tile_block(int64_t kp, const BFloat16* ap, const BFloat16* bp, float* c,
                                 int64_t ldc, int rows, int cols, bool accumulate) {
  alignas(64) float buf[kTile * kTile];
  const CTile t0{c, ldc, std::min(rows, kTile), std::min(cols, kTile)};
  const CTile t1{c + kTile, ldc, t0.rows, cols - kTile};
  const CTile t2{c + kTile * ldc, ldc, rows - kTile, t0.cols};
  const CTile t3{c + kTile * ldc + kTile, ldc, rows - kTile, cols - kTile};
  memory_barrier();
  load_c0(t0, accumulate, buf);
  if constexpr (CT == 2) load_c1(t1, accumulate, buf);
  if constexpr (RT == 2) load_c2(t2, accumulate, buf);
  if constexpr (RT == 2 && CT == 2) load_c3(t3, accumulate, buf);
  const BFloat16* bp1 = bp + kTile * kp;
  constexpr int64_t kStride = 64;  // bytes per row of every a and b tile
  // Loads interleaved with the products that free their tiles: the tile registers are not
  // renamed, so the next step's load of a tile waits for the last product reading it. The b panel
  // streams from L2: the next step's b tiles (32 lines) are prefetched into L1 meanwhile.
  for (int64_t k0 = 0; k0 < kp; k0 += kBlock) {
    const BFloat16* a = ap + k0 * kBlock;
    const BFloat16* b0 = bp + k0 * kTile;
    const BFloat16* b1 = bp1 + k0 * kTile;
    if (k0 + kBlock < kp) {
      for (int line = 0; line < kTile; ++line) {
        _mm_prefetch(reinterpret_cast<const char*>(b0 + kBlock * kTile + line * kBlock),
                     _MM_HINT_T0);
        if constexpr (CT == 2)
          _mm_prefetch(reinterpret_cast<const char*>(b1 + kBlock * kTile + line * kBlock),
                       _MM_HINT_T0);
      }
    }
    _tile_loadd(4, a, kStride);
    _tile_loadd(6, b0, kStride);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (CT == 2) {
      _tile_loadd(7, b1, kStride);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (RT == 2) {
      _tile_loadd(5, a + kTile * kBlock, kStride);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (CT == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  store_c0(t0, buf);
  if constexpr (CT == 2) store_c1(t1, buf);
  if constexpr (RT == 2) store_c2(t2, buf);
  if constexpr (RT == 2 && CT == 2) store_c3(t3, buf);
  memory_barrier();
}

EMBER_AMX_TARGET void amx_block(const GemmArgs<float, BFloat16>& g, const BFloat16* apack,
                                int64_t row0, int64_t rows, const BFloat16* bpack, int64_t col0,
                                int64_t cols, int64_t kc, bool accumulate) {
  const int64_t kp = (kc + kBlock - 1) / kBlock * kBlock;
  _tile_loadconfig(&kConfig);
  for (int64_t r = 0; r < rows; r += kBlock) {
    int nrow = static_cast<int>(std::min<int64_t>(kBlock, rows - r));
    const BFloat16* ap = apack + r * kp;
    for (int64_t j = 0; j < cols; j += kBlock) {
      int ncol = static_cast<int>(std::min<int64_t>(kBlock, cols - j));
      const BFloat16* bp = bpack + j * kp;
      float* c = g.c + (row0 + r) * g.ldc + col0 + j;
      if (nrow > kTile && ncol > kTile)
        tile_block<2, 2>(kp, ap, bp, c, g.ldc, nrow, ncol, accumulate);
      else if (nrow > kTile)
        tile_block<2, 1>(kp, ap, bp, c, g.ldc, nrow, ncol, accumulate);
      else if (ncol > kTile)
        tile_block<1, 2>(kp, ap, bp, c, g.ldc, nrow, ncol, accumulate);
      else
        tile_block<1, 1>(kp, ap, bp, c, g.ldc, nrow, ncol, accumulate);
    }
  }
  _tile_release();
}

}  // namespace

// K blocks of up to 2048, so that c (float32, often larger than L2) is loaded and stored once per
// 2048 k rather than once per 512; a packed b block of 2048 x 256 (1 MiB) in L2. Measured at
// 1024^3 on 2 threads: 815 GFLOP/s against 650-690 with blocks of 512 x 1024.
constinit const GemmKernelBF16 kGemmAmxBF16{
    .name = "amx 32x32",
    .mr = kBlock,
    .nr = kBlock,
    .kc = 2048,
    .nb = 256,
    .mc = 2048,
    .micro = {},
    .pack_a = &bf16_pack::pack_a32,
    .pack_b = &bf16_pack::pack_b,
    .kgroup = kBlock,
    .block = &amx_block,
};

}  // namespace ember::cpu

namespace ember::cpu {

namespace {

constexpr int64_t kDirectMaxRows = 64;

// Rows n0.. (16, `rows` of them valid) of W, columns k0.. (32, `cols` valid) as an a tile in tmm4
// (T = 0) or tmm5 (T = 1): straight from W when whole, else through a zero-padded buffer.
template <int T>
EMBER_AMX_TARGET void load_weight_tile(const BFloat16* w, int64_t ldw, int rows, int cols,
                                       BFloat16* buf) {
  if (rows == kTile && cols == kBlock) {
    if constexpr (T == 0)
      _tile_loadd(4, w, ldw * sizeof(BFloat16));
    else
      _tile_loadd(5, w, ldw * sizeof(BFloat16));
    return;
  }
  std::fill_n(buf, kTile * kBlock, BFloat16());
  for (int r = 0; r < rows; ++r) std::copy_n(w + r * ldw, cols, buf + r * kBlock);
  memory_barrier();
  if constexpr (T == 0)
    _tile_loadd(4, buf, 64);
  else
    _tile_loadd(5, buf, 64);
}

// c^T tile (n 16 x m 16) from its tile register into c (m x n), `rows` n and `cols` m valid.
EMBER_AMX_TARGET void write_transposed(const float* buf, float* c, int64_t ldc, int rows,
                                       int cols) {
  memory_barrier();
  for (int mm = 0; mm < cols; ++mm)
    for (int nn = 0; nn < rows; ++nn) c[mm * ldc + nn] = buf[nn * kTile + mm];
}

// c^T (rows n <= 32 from n0, cols m <= 32 from the packed x panel) = W rows @ x panel^T.
template <int RT, int CT>
EMBER_AMX_TARGET void direct_block(const GemmArgs<float, BFloat16>& g, const BFloat16* xpanel,
                                   int64_t kp, int64_t n0, int rows, int64_t m0, int cols) {
  alignas(64) BFloat16 wbuf[kTile * kBlock];
  alignas(64) float cbuf[kTile * kTile];
  const int64_t ldw = g.b_cs;
  const BFloat16* w = g.b + n0 * ldw;
  const int rows0 = std::min(rows, kTile), rows1 = rows - kTile;
  const int cols0 = std::min(cols, kTile), cols1 = cols - kTile;
  _tile_zero(0);
  if constexpr (CT == 2) _tile_zero(1);
  if constexpr (RT == 2) _tile_zero(2);
  if constexpr (RT == 2 && CT == 2) _tile_zero(3);
  const BFloat16* x1 = xpanel + kTile * kp;
  for (int64_t k0 = 0; k0 < kp; k0 += kBlock) {
    const int kcols = static_cast<int>(std::min<int64_t>(kBlock, g.k - k0));
    load_weight_tile<0>(w + k0, ldw, rows0, kcols, wbuf);
    _tile_loadd(6, xpanel + k0 * kTile, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (CT == 2) {
      _tile_loadd(7, x1 + k0 * kTile, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (RT == 2) {
      load_weight_tile<1>(w + kTile * ldw + k0, ldw, rows1, kcols, wbuf);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (CT == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  float* c = g.c + m0 * g.ldc + n0;
  _tile_stored(0, cbuf, 64);
  write_transposed(cbuf, c, g.ldc, rows0, cols0);
  if constexpr (CT == 2) {
    _tile_stored(1, cbuf, 64);
    write_transposed(cbuf, c + kTile * g.ldc, g.ldc, rows0, cols1);
  }
  if constexpr (RT == 2) {
    _tile_stored(2, cbuf, 64);
    write_transposed(cbuf, c + kTile, g.ldc, rows1, cols0);
  }
  if constexpr (RT == 2 && CT == 2) {
    _tile_stored(3, cbuf, 64);
    write_transposed(cbuf, c + kTile * g.ldc + kTile, g.ldc, rows1, cols1);
  }
}

// The n blocks [begin, end) of 32 against every packed x panel, on this thread's tiles.
EMBER_AMX_TARGET void direct_range(const GemmArgs<float, BFloat16>& g, const BFloat16* xpack,
                                   int64_t kp, int64_t begin, int64_t end) {
  _tile_loadconfig(&kConfig);
  for (int64_t nb = begin; nb < end; ++nb) {
    const int64_t n0 = nb * kBlock;
    const int rows = static_cast<int>(std::min<int64_t>(kBlock, g.n - n0));
    for (int64_t m0 = 0; m0 < g.m; m0 += kBlock) {
      const int cols = static_cast<int>(std::min<int64_t>(kBlock, g.m - m0));
      const BFloat16* xpanel = xpack + m0 * kp;
      if (rows > kTile && cols > kTile)
        direct_block<2, 2>(g, xpanel, kp, n0, rows, m0, cols);
      else if (rows > kTile)
        direct_block<2, 1>(g, xpanel, kp, n0, rows, m0, cols);
      else if (cols > kTile)
        direct_block<1, 2>(g, xpanel, kp, n0, rows, m0, cols);
      else
        direct_block<1, 1>(g, xpanel, kp, n0, rows, m0, cols);
    }
  }
  _tile_release();
}

thread_local std::vector<BFloat16> direct_xpack;

}  // namespace

bool gemm_amx_weight_direct(const GemmArgs<float, BFloat16>& g, int threads) {
  if (g.m > kDirectMaxRows || g.b_rs != 1 || g.m <= 0 || g.n <= 0 || g.k <= 0) return false;
  // x^T as a b operand (k x m, columns contiguous when x's rows are), packed as b panels.
  GemmArgs<float, BFloat16> gx = g;
  gx.b = g.a;
  gx.b_rs = g.a_cs;
  gx.b_cs = g.a_rs;
  const int64_t kp = (g.k + kBlock - 1) / kBlock * kBlock;
  const int64_t mp = (g.m + kBlock - 1) / kBlock * kBlock;
  direct_xpack.resize(static_cast<size_t>(mp * kp));
  bf16_pack::pack_b(gx, 0, g.k, 0, g.m, direct_xpack.data());
  const BFloat16* xpack = direct_xpack.data();
  const int64_t blocks = (g.n + kBlock - 1) / kBlock;
  // About 2^20 multiply-adds per thread at least (as cpu::gemm's 2^17 per thread, for the tiles).
  const int nt = static_cast<int>(
      std::clamp<int64_t>(g.m * g.n * g.k >> 20, 1, std::min<int64_t>(threads, blocks)));
  if (nt == 1 || omp_in_parallel()) {
    direct_range(g, xpack, kp, 0, blocks);
    return true;
  }
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    direct_range(g, xpack, kp, blocks * t / nt, blocks * (t + 1) / nt);
  }
  return true;
}

}  // namespace ember::cpu
