// backend/cpu/cpu_gemm_amx.cpp: the AMX kernel of cpu_gemm_bf16.h (Sapphire Rapids and later) --
// a 32 x 32 block of c in four 16 x 16 float32 tiles, tmm0..tmm3, each 32 k of the a and b
// micro-panels two a tiles (tmm4, tmm5) and two b tiles (tmm6, tmm7) and four _tile_dpbf16ps.
// The tile registers are configured at the start of each packed block and released at its end,
// so nothing is left configured between calls. Compiled for AMX through target attributes (see
// cpu_gemm_avx512_bf16.cpp); the driver calls it only at cpu_isa() amx, which detected_isa()
// reports only once Linux has granted this process the tile data.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

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
