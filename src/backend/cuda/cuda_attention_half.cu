// backend/cuda/cuda_attention_half.cu: fused scaled-dot-product attention for bfloat16 and
// float16 on tensor cores, so that 16-bit attention on CUDA reads q, k and v as they are instead
// of float32 copies (launch_attention_forward / launch_attention_backward of cuda_attention.cu
// hand 16-bit views here). The products go through nvcuda::wmma 16x16x16 fragments (16-bit
// operands, float32 accumulators; sm_80+); the softmax statistics, the logsumexp and every
// accumulation stay in float32, and O, dQ, dK, dV are written in the input dtype. An additive mask
// is read as it comes, float32, bfloat16 or float16, and widened per element (the inputs' dtype,
// or under autocast, which lowers q, k and v but not the mask, the original one). Head dims must
// be multiples of 16 up to 128 whose tiles fit the device's shared memory (half_attention_fits;
// the op sends other heads to the float32 kernels). It compiles in CI but has NEVER RUN ON A GPU:
// no GPU was available when it was written, so its tests skip without one.
//
// Forward: one block of 4 warps per (batch x head, tile of 64 queries; the last tiles first),
// each warp owning 16 query rows. Per tile of 64 keys the block loads K and V into shared memory;
// each warp computes its 16 x 64 scores (Q K^T) into a float32 tile, masks and scales them,
// updates its rows' running maximum and sum (two lanes per row), rescales its rows of the float32
// output accumulator in shared memory and adds P V, P rounded to the input dtype. Only the K/V
// loads need the whole block; everything else is warp-local.
// Backward: one block of 4 warps per (batch x key/value head, tile of 64 keys), each warp owning
// 16 of the keys and their rows of dK and dV (float32 accumulators in shared memory), over the
// query heads that share the key/value head and their tiles of 32 queries. Per query tile: the
// warp recomputes its 32 x 16 scores and P = exp(s - lse), adds P^T dO to dV, computes
// dP = dO V^T and dS = P (dP - D) scale, adds dS^T Q to dK; then, after a block barrier, dQ += dS K
// is added to a float32 scratch with atomicAdd and converted to the input dtype at the end.
// D = rowsum(dO * O) is computed before, one warp per row.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "ember/error.h"

namespace ember::cuda_detail {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4, kBlockThreads = kWarps * 32;
constexpr int kFwdRows = kWarps * 16, kFwdKeys = 64;  // forward tiles: 16 query rows per warp
constexpr int kBwdKeys = kWarps * 16, kBwdRows = 32;  // backward tiles: 16 keys per warp
constexpr int kMaxHeadDim = 128;
// Shared tiles' rows are padded by 16 bytes (ldmatrix rows then fall in distinct bank groups);
// WMMA wants leading dimensions of multiples of 8 (16-bit) or 4 (float) elements and 32-byte
// aligned tile starts, which 16-aligned rows and columns of these tiles keep.
constexpr int kPad16 = 8, kPad32 = 4, kStageLd = 16 + kPad32;

static_assert(kFwdKeys % 16 == 0 && kBwdRows % 16 == 0, "tiles are whole 16x16 fragments");

template <class T>
struct Elem;
template <>
struct Elem<__nv_bfloat16> {
  static __device__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __nv_bfloat16 narrow(float x) { return __float2bfloat16_rn(x); }
};
template <>
struct Elem<__half> {
  static __device__ float widen(__half x) { return __half2float(x); }
  static __device__ __half narrow(float x) { return __float2half_rn(x); }
};

template <class T, class Layout>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, Layout>;
template <class T, class Layout>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, Layout>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
using wmma::col_major;
using wmma::row_major;

enum class MaskKind { None, Bool, Float32, BFloat16, Float16 };

// One 16-bit operand (N, H, rows, cols): data and element strides; vec when every row starts on
// 16 bytes and its columns are contiguous (tiles then load 8 elements at a time).
struct Operand {
  const void* data;
  int64_t s[4];
  bool vec;
};

// The problem: q (N, Hq, L, E), k (N, Hk, S, E), v (N, Hk, S, Ev), the mask read as
// (N, Hq, L, S) through its strides.
struct HalfAttn {
  Operand q, k, v;
  const void* mask;
  MaskKind mask_kind;
  int64_t ms[4];
  int64_t N, Hq, Hk, L, S, E, Ev, groups;
  float scale;
  bool causal;
};

// Byte offsets of a kernel's shared buffers, each 128-byte aligned.
struct Carver {
  size_t bytes = 0;
  size_t take(size_t n) {
    size_t at = bytes;
    bytes += (n + 127) / 128 * 128;
    return at;
  }
};

// The forward's shared memory: Q (kFwdRows, E), K (kFwdKeys, E), V (kFwdKeys, Ev) in the input
// dtype, the scores S (kFwdRows, kFwdKeys) in float32, P (kFwdRows, kFwdKeys) in the input
// dtype, the output accumulator O (kFwdRows, Ev) in float32. ld*: row lengths in elements.
struct FwdSmem {
  int ldq, ldk, ldv, lds, ldp, ldo;
  size_t q, k, v, s, p, o, bytes;
};

FwdSmem fwd_smem(int64_t E, int64_t Ev) {
  FwdSmem m{};
  m.ldq = m.ldk = static_cast<int>(E) + kPad16;
  m.ldv = static_cast<int>(Ev) + kPad16;
  m.lds = kFwdKeys + kPad32;
  m.ldp = kFwdKeys + kPad16;
  m.ldo = static_cast<int>(Ev) + kPad32;
  Carver c;
  m.q = c.take(2 * kFwdRows * m.ldq);
  m.k = c.take(2 * kFwdKeys * m.ldk);
  m.v = c.take(2 * kFwdKeys * m.ldv);
  m.s = c.take(4 * kFwdRows * m.lds);
  m.p = c.take(2 * kFwdRows * m.ldp);
  m.o = c.take(4 * kFwdRows * m.ldo);
  m.bytes = c.bytes;
  return m;
}

// The backward's shared memory: K (kBwdKeys, E), V (kBwdKeys, Ev), Q (kBwdRows, E),
// dO (kBwdRows, Ev) in the input dtype; P and dP (kBwdRows, kBwdKeys) in float32; P, then dS,
// (kBwdRows, kBwdKeys) in the input dtype; the dK (kBwdKeys, E) and dV (kBwdKeys, Ev)
// accumulators in float32; a 16 x 16 float32 staging tile per warp for dQ; the query rows'
// logsumexp and D.
struct BwdSmem {
  int ldk, ldv, ldq, lddo, lds, ldp, lddk, lddv;
  size_t k, v, q, dout, p32, dp, p16, dk, dv, stage, lse, d, bytes;
};

BwdSmem bwd_smem(int64_t E, int64_t Ev) {
  BwdSmem m{};
  m.ldk = m.ldq = static_cast<int>(E) + kPad16;
  m.ldv = m.lddo = static_cast<int>(Ev) + kPad16;
  m.lds = kBwdKeys + kPad32;
  m.ldp = kBwdKeys + kPad16;
  m.lddk = static_cast<int>(E) + kPad32;
  m.lddv = static_cast<int>(Ev) + kPad32;
  Carver c;
  m.k = c.take(2 * kBwdKeys * m.ldk);
  m.v = c.take(2 * kBwdKeys * m.ldv);
  m.q = c.take(2 * kBwdRows * m.ldq);
  m.dout = c.take(2 * kBwdRows * m.lddo);
  m.p32 = c.take(4 * kBwdRows * m.lds);
  m.dp = c.take(4 * kBwdRows * m.lds);
  m.p16 = c.take(2 * kBwdRows * m.ldp);
  m.dk = c.take(4 * kBwdKeys * m.lddk);
  m.dv = c.take(4 * kBwdKeys * m.lddv);
  m.stage = c.take(4 * kWarps * 16 * kStageLd);
  m.lse = c.take(4 * kBwdRows);
  m.d = c.take(4 * kBwdRows);
  m.bytes = c.bytes;
  return m;
}

// acc += A B over `depth` (a multiple of 16): A (16 x depth) at a and B (depth x 16) at b, in
// shared memory with leading dimensions lda and ldb and the layouts LA and LB.
template <class LA, class LB, class T>
__device__ void mma_depth(FragC& acc, const T* a, int lda, const T* b, int ldb, int64_t depth) {
  constexpr bool a_rows = std::is_same_v<LA, row_major>, b_rows = std::is_same_v<LB, row_major>;
  for (int64_t d = 0; d < depth; d += 16) {
    FragA<T, LA> fa;
    FragB<T, LB> fb;
    wmma::load_matrix_sync(fa, a + (a_rows ? d : d * lda), lda);
    wmma::load_matrix_sync(fb, b + (b_rows ? d * ldb : d), ldb);
    wmma::mma_sync(acc, fa, fb, acc);
  }
}

// rows x cols (cols a multiple of 8) of an operand, row r at src + r * o.s[2], into shared rows
// of ld elements; rows from `valid` on are zeros (never read from global memory).
template <class T>
__device__ void load_tile(T* dst, int ld, const T* src, const Operand& o, int rows, int64_t cols,
                          int64_t valid) {
  const int64_t rs = o.s[2];
  if (o.vec) {
    const int64_t chunks = cols / 8;
    for (int64_t t = threadIdx.x; t < rows * chunks; t += blockDim.x) {
      const int64_t r = t / chunks, c = (t - r * chunks) * 8;
      uint4 x = make_uint4(0, 0, 0, 0);
      if (r < valid) x = *reinterpret_cast<const uint4*>(src + r * rs + c);
      *reinterpret_cast<uint4*>(dst + r * ld + c) = x;
    }
  } else {
    const int64_t cs = o.s[3];
    const T zero = Elem<T>::narrow(0.0f);
    for (int64_t t = threadIdx.x; t < rows * cols; t += blockDim.x) {
      const int64_t r = t / cols, c = t - r * cols;
      dst[r * ld + c] = r < valid ? src[r * rs + c * cs] : zero;
    }
  }
}

// The score of query i and key j of head (n, h) from their dot product: scaled, masked, -inf
// where hidden or out of range (as masked_score of cuda_attention.cu).
__device__ float masked_score(const HalfAttn& a, int64_t n, int64_t h, int64_t i, int64_t j,
                              float dot) {
  if (i >= a.L || j >= a.S || (a.causal && j > i)) return -INFINITY;
  const float s = dot * a.scale;
  if (a.mask_kind == MaskKind::None) return s;
  const int64_t off = n * a.ms[0] + h * a.ms[1] + i * a.ms[2] + j * a.ms[3];
  if (a.mask_kind == MaskKind::Bool) return static_cast<const bool*>(a.mask)[off] ? s : -INFINITY;
  if (a.mask_kind == MaskKind::Float32) return s + static_cast<const float*>(a.mask)[off];
  if (a.mask_kind == MaskKind::BFloat16)
    return s + __bfloat162float(static_cast<const __nv_bfloat16*>(a.mask)[off]);
  return s + __half2float(static_cast<const __half*>(a.mask)[off]);
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    half_attention_forward_kernel(HalfAttn a, FwdSmem m, T* out, float* lse) {
  EMBER_CUDA_DYNAMIC_SHARED(unsigned char, smem);
  T* qs = reinterpret_cast<T*>(smem + m.q);
  T* ks = reinterpret_cast<T*>(smem + m.k);
  T* vs = reinterpret_cast<T*>(smem + m.v);
  float* ss = reinterpret_cast<float*>(smem + m.s);
  T* ps = reinterpret_cast<T*>(smem + m.p);
  float* os = reinterpret_cast<float*>(smem + m.o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t head = blockIdx.x, n = head / a.Hq, h = head % a.Hq, hk = h / a.groups;
  // The last query tiles first: under a causal mask they have the most key tiles, so the long
  // blocks start in the first waves instead of trailing the grid.
  const int64_t i0 = static_cast<int64_t>(gridDim.y - 1 - blockIdx.y) * kFwdRows;
  const T* qh = static_cast<const T*>(a.q.data) + n * a.q.s[0] + h * a.q.s[1];
  const T* kh = static_cast<const T*>(a.k.data) + n * a.k.s[0] + hk * a.k.s[1];
  const T* vh = static_cast<const T*>(a.v.data) + n * a.v.s[0] + hk * a.v.s[1];
  load_tile(qs, m.ldq, qh + i0 * a.q.s[2], a.q, kFwdRows, a.E, a.L - i0);
  for (int t = threadIdx.x; t < kFwdRows * m.ldo; t += blockDim.x) os[t] = 0.0f;
  // This warp's rows start at w0; the lane pair (2r, 2r + 1) keeps row w0 + r's running maximum
  // and sum, each lane the columns of its parity.
  const int w0 = warp * 16, row = w0 + lane / 2, parity = lane % 2;
  const int64_t i = i0 + row;
  float* srow = ss + row * m.lds;
  T* prow = ps + row * m.ldp;
  float* orow = os + row * m.ldo;
  float row_max = -INFINITY, row_sum = 0.0f;
  const int64_t end = a.causal ? min(a.S, i0 + kFwdRows) : a.S;
  for (int64_t j0 = 0; j0 < end; j0 += kFwdKeys) {
    __syncthreads();  // every warp is done with the previous K and V
    load_tile(ks, m.ldk, kh + j0 * a.k.s[2], a.k, kFwdKeys, a.E, a.S - j0);
    load_tile(vs, m.ldv, vh + j0 * a.v.s[2], a.v, kFwdKeys, a.Ev, a.S - j0);
    __syncthreads();
    // S (16 x kFwdKeys) = Q K^T for the warp's rows.
    for (int c0 = 0; c0 < kFwdKeys; c0 += 16) {
      FragC acc;
      wmma::fill_fragment(acc, 0.0f);
      mma_depth<row_major, col_major>(acc, qs + w0 * m.ldq, m.ldq, ks + c0 * m.ldk, m.ldk, a.E);
      wmma::store_matrix_sync(ss + w0 * m.lds + c0, acc, m.lds, wmma::mem_row_major);
    }
    __syncwarp();
    // Online softmax: the row's new maximum (0 as the shift while every score is -inf), P in
    // the input dtype, the running sum and the accumulated output rescaled.
    float mx = -INFINITY;
    for (int c = parity; c < kFwdKeys; c += 2) {
      const float s = masked_score(a, n, h, i, j0 + c, srow[c]);
      srow[c] = s;
      mx = fmaxf(mx, s);
    }
    mx = fmaxf(mx, __shfl_xor_sync(kFullMask, mx, 1));
    const float new_max = fmaxf(row_max, mx);
    const float shift = new_max == -INFINITY ? 0.0f : new_max;
    float total = 0.0f;
    for (int c = parity; c < kFwdKeys; c += 2) {
      const float p = expf(srow[c] - shift);
      prow[c] = Elem<T>::narrow(p);
      total += p;
    }
    total += __shfl_xor_sync(kFullMask, total, 1);
    const float alpha = expf(row_max - shift);
    row_sum = row_sum * alpha + total;
    row_max = new_max;
    for (int64_t e = parity; e < a.Ev; e += 2) orow[e] *= alpha;
    __syncwarp();
    // O (16 x Ev) += P V for the warp's rows.
    for (int64_t e0 = 0; e0 < a.Ev; e0 += 16) {
      FragC acc;
      wmma::load_matrix_sync(acc, os + w0 * m.ldo + e0, m.ldo, wmma::mem_row_major);
      mma_depth<row_major, row_major>(acc, ps + w0 * m.ldp, m.ldp, vs + e0, m.ldv, kFwdKeys);
      wmma::store_matrix_sync(os + w0 * m.ldo + e0, acc, m.ldo, wmma::mem_row_major);
    }
  }
  __syncwarp();
  if (parity == 0 && i < a.L)
    lse[head * a.L + i] = row_sum > 0.0f ? row_max + logf(row_sum) : INFINITY;
  // The warp's rows, one at a time across the lanes: O / sum, zeros for a row without a key.
  for (int r = 0; r < 16; ++r) {
    const float l = __shfl_sync(kFullMask, row_sum, 2 * r);
    if (i0 + w0 + r >= a.L) break;
    T* dst = out + (head * a.L + i0 + w0 + r) * a.Ev;
    const float* src = os + (w0 + r) * m.ldo;
    for (int64_t e = lane; e < a.Ev; e += 32)
      dst[e] = Elem<T>::narrow(l > 0.0f ? src[e] / l : 0.0f);
  }
}

// d[row] = sum over the row of dout * out (rows x cols, contiguous), one warp per row.
template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    half_attention_row_dot_kernel(const T* dout, const T* out, float* d, int64_t rows,
                                  int64_t cols) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // the whole warp
  float sum = 0.0f;
  for (int64_t c = lane; c < cols; c += 32)
    sum += Elem<T>::widen(dout[row * cols + c]) * Elem<T>::widen(out[row * cols + c]);
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(kFullMask, sum, o);
  if (lane == 0) d[row] = sum;
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    half_attention_backward_kernel(HalfAttn a, BwdSmem m, float* dq, T* dk, T* dv, const T* dout,
                                   Operand dout_rows, const float* lse, const float* dsum) {
  EMBER_CUDA_DYNAMIC_SHARED(unsigned char, smem);
  T* ks = reinterpret_cast<T*>(smem + m.k);
  T* vs = reinterpret_cast<T*>(smem + m.v);
  T* qs = reinterpret_cast<T*>(smem + m.q);
  T* dos = reinterpret_cast<T*>(smem + m.dout);
  float* p32 = reinterpret_cast<float*>(smem + m.p32);
  float* dps = reinterpret_cast<float*>(smem + m.dp);
  T* p16 = reinterpret_cast<T*>(smem + m.p16);  // P, then dS
  float* dks = reinterpret_cast<float*>(smem + m.dk);
  float* dvs = reinterpret_cast<float*>(smem + m.dv);
  float* lse_s = reinterpret_cast<float*>(smem + m.lse);
  float* d_s = reinterpret_cast<float*>(smem + m.d);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* stage = reinterpret_cast<float*>(smem + m.stage) + warp * 16 * kStageLd;
  const int64_t kv_head = blockIdx.x, n = kv_head / a.Hk, hk = kv_head % a.Hk;
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kBwdKeys;
  load_tile(ks, m.ldk,
            static_cast<const T*>(a.k.data) + n * a.k.s[0] + hk * a.k.s[1] + j0 * a.k.s[2], a.k,
            kBwdKeys, a.E, a.S - j0);
  load_tile(vs, m.ldv,
            static_cast<const T*>(a.v.data) + n * a.v.s[0] + hk * a.v.s[1] + j0 * a.v.s[2], a.v,
            kBwdKeys, a.Ev, a.S - j0);
  for (int t = threadIdx.x; t < kBwdKeys * m.lddk; t += blockDim.x) dks[t] = 0.0f;
  for (int t = threadIdx.x; t < kBwdKeys * m.lddv; t += blockDim.x) dvs[t] = 0.0f;
  const int k0 = warp * 16;  // this warp's keys in the tile: columns k0 .. k0 + 15 of P and dS
  const int row_tiles = kBwdRows / 16, dq_tiles = row_tiles * static_cast<int>(a.E / 16);
  for (int64_t hh = 0; hh < a.groups; ++hh) {
    const int64_t h = hk * a.groups + hh, head = n * a.Hq + h;
    const T* qh = static_cast<const T*>(a.q.data) + n * a.q.s[0] + h * a.q.s[1];
    const int64_t first = a.causal ? j0 / kBwdRows * kBwdRows : 0;
    for (int64_t i0 = first; i0 < a.L; i0 += kBwdRows) {
      __syncthreads();  // every warp is done with the previous Q, dO, dS, lse and D
      load_tile(qs, m.ldq, qh + i0 * a.q.s[2], a.q, kBwdRows, a.E, a.L - i0);
      load_tile(dos, m.lddo, dout + (head * a.L + i0) * a.Ev, dout_rows, kBwdRows, a.Ev, a.L - i0);
      for (int t = threadIdx.x; t < kBwdRows; t += blockDim.x) {
        const bool in = i0 + t < a.L;
        lse_s[t] = in ? lse[head * a.L + i0 + t] : INFINITY;
        d_s[t] = in ? dsum[head * a.L + i0 + t] : 0.0f;
      }
      __syncthreads();
      // The warp's columns of S = Q K^T, then P = exp(s - lse) (0 where hidden or without keys)
      // in float32 and in the input dtype.
      for (int r0 = 0; r0 < kBwdRows; r0 += 16) {
        FragC acc;
        wmma::fill_fragment(acc, 0.0f);
        mma_depth<row_major, col_major>(acc, qs + r0 * m.ldq, m.ldq, ks + k0 * m.ldk, m.ldk, a.E);
        wmma::store_matrix_sync(p32 + r0 * m.lds + k0, acc, m.lds, wmma::mem_row_major);
      }
      __syncwarp();
      for (int t = lane; t < kBwdRows * 16; t += 32) {
        const int r = t / 16, c = k0 + t % 16;
        const float s = masked_score(a, n, h, i0 + r, j0 + c, p32[r * m.lds + c]);
        const float p = expf(s - lse_s[r]);
        p32[r * m.lds + c] = p;
        p16[r * m.ldp + c] = Elem<T>::narrow(p);
      }
      __syncwarp();
      // dV (the warp's 16 keys x Ev) += P^T dO.
      for (int64_t e0 = 0; e0 < a.Ev; e0 += 16) {
        FragC acc;
        wmma::load_matrix_sync(acc, dvs + k0 * m.lddv + e0, m.lddv, wmma::mem_row_major);
        mma_depth<col_major, row_major>(acc, p16 + k0, m.ldp, dos + e0, m.lddo, kBwdRows);
        wmma::store_matrix_sync(dvs + k0 * m.lddv + e0, acc, m.lddv, wmma::mem_row_major);
      }
      // The warp's columns of dP = dO V^T.
      for (int r0 = 0; r0 < kBwdRows; r0 += 16) {
        FragC acc;
        wmma::fill_fragment(acc, 0.0f);
        mma_depth<row_major, col_major>(acc, dos + r0 * m.lddo, m.lddo, vs + k0 * m.ldv, m.ldv,
                                        a.Ev);
        wmma::store_matrix_sync(dps + r0 * m.lds + k0, acc, m.lds, wmma::mem_row_major);
      }
      __syncwarp();
      // dS = P (dP - D) scale over P's columns in the input dtype (P^T was read above).
      for (int t = lane; t < kBwdRows * 16; t += 32) {
        const int r = t / 16, c = k0 + t % 16;
        const float ds = p32[r * m.lds + c] * (dps[r * m.lds + c] - d_s[r]) * a.scale;
        p16[r * m.ldp + c] = Elem<T>::narrow(ds);
      }
      __syncwarp();
      // dK (the warp's 16 keys x E) += dS^T Q.
      for (int64_t e0 = 0; e0 < a.E; e0 += 16) {
        FragC acc;
        wmma::load_matrix_sync(acc, dks + k0 * m.lddk + e0, m.lddk, wmma::mem_row_major);
        mma_depth<col_major, row_major>(acc, p16 + k0, m.ldp, qs + e0, m.ldq, kBwdRows);
        wmma::store_matrix_sync(dks + k0 * m.lddk + e0, acc, m.lddk, wmma::mem_row_major);
      }
      __syncthreads();  // dS complete: every warp's columns
      // dQ (kBwdRows x E) += dS K, 16 x 16 tiles spread over the warps, added to the float32
      // scratch through the warp's staging tile.
      for (int t = warp; t < dq_tiles; t += kWarps) {
        const int r0 = t % row_tiles * 16, e0 = t / row_tiles * 16;
        FragC acc;
        wmma::fill_fragment(acc, 0.0f);
        mma_depth<row_major, row_major>(acc, p16 + r0 * m.ldp, m.ldp, ks + e0, m.ldk, kBwdKeys);
        wmma::store_matrix_sync(stage, acc, kStageLd, wmma::mem_row_major);
        __syncwarp();
        for (int u = lane; u < 256; u += 32) {
          const int r = u / 16, c = u % 16;
          if (i0 + r0 + r < a.L)
            atomicAdd(dq + (head * a.L + i0 + r0 + r) * a.E + e0 + c, stage[r * kStageLd + c]);
        }
        __syncwarp();
      }
    }
  }
  __syncthreads();
  for (int64_t t = threadIdx.x; t < kBwdKeys * a.E; t += blockDim.x) {
    const int64_t r = t / a.E, e = t - r * a.E;
    if (j0 + r < a.S) dk[(kv_head * a.S + j0 + r) * a.E + e] = Elem<T>::narrow(dks[r * m.lddk + e]);
  }
  for (int64_t t = threadIdx.x; t < kBwdKeys * a.Ev; t += blockDim.x) {
    const int64_t r = t / a.Ev, e = t - r * a.Ev;
    if (j0 + r < a.S)
      dv[(kv_head * a.S + j0 + r) * a.Ev + e] = Elem<T>::narrow(dvs[r * m.lddv + e]);
  }
}

// dst = src rounded to T, n elements.
template <class T>
__global__ void narrow_kernel(T* dst, const float* src, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += stride)
    dst[t] = Elem<T>::narrow(src[t]);
}

bool head_dims_fit(int64_t E, int64_t Ev) {
  return E >= 16 && Ev >= 16 && E <= kMaxHeadDim && Ev <= kMaxHeadDim && E % 16 == 0 &&
         Ev % 16 == 0;
}

Operand operand(const View& v) {
  Operand o{v.data, {v.strides[0], v.strides[1], v.strides[2], v.strides[3]}, false};
  o.vec = aligned_to(v.data, 16) && v.strides[3] == 1;
  for (int d = 0; d < 3; ++d)
    if (v.sizes[d] > 1 && v.strides[d] % 8 != 0) o.vec = false;
  return o;
}

// The kernels' view of the operands, after checking what the kernels assume.
HalfAttn make_half_attn(const View& q, const View& k, const View& v, const View& mask,
                        const AttentionParams& p, const char* op) {
  EMBER_CHECK_KIND(
      DType,
      (q.dtype == kBFloat16 || q.dtype == kFloat16) && k.dtype == q.dtype && v.dtype == q.dtype,
      "[", op, "] the tensor-core kernels take bfloat16 or float16 q, k and v, got ", q.dtype, ", ",
      k.dtype, " and ", v.dtype);
  EMBER_CHECK_KIND(Shape, head_dims_fit(q.sizes[3], v.sizes[3]), "[", op,
                   "] the tensor-core kernels take head dims that are multiples of 16 up to ",
                   kMaxHeadDim, ", got ", q.sizes[3], " and ", v.sizes[3]);
  HalfAttn a{};
  a.q = operand(q);
  a.k = operand(k);
  a.v = operand(v);
  a.mask = mask.data;
  a.mask_kind = MaskKind::None;
  if (mask.data) {
    if (mask.dtype == kBool)
      a.mask_kind = MaskKind::Bool;
    else if (mask.dtype == kFloat32)
      a.mask_kind = MaskKind::Float32;
    else if (mask.dtype == kBFloat16)
      a.mask_kind = MaskKind::BFloat16;
    else if (mask.dtype == kFloat16)
      a.mask_kind = MaskKind::Float16;
    else
      EMBER_THROW(DType, "[", op, "] the tensor-core kernels take a bool mask or an additive ",
                  "float32, bfloat16 or float16 one, got ", mask.dtype);
    for (int d = 0; d < 4; ++d) a.ms[d] = mask.strides[d];
  }
  a.N = q.sizes[0];
  a.Hq = q.sizes[1];
  a.Hk = k.sizes[1];
  a.L = q.sizes[2];
  a.S = k.sizes[2];
  a.E = q.sizes[3];
  a.Ev = v.sizes[3];
  a.groups = p.kv_groups;
  a.scale = static_cast<float>(p.scale);
  a.causal = p.causal;
  return a;
}

// A grid of (heads, tiles): heads on x (up to 2^31 - 1), tiles on y (up to 65535).
dim3 head_tile_grid(int64_t heads, int64_t rows, int tile, const char* op) {
  const int64_t tiles = (rows + tile - 1) / tile;
  EMBER_CHECK(heads <= 0x7fffffff && tiles <= 65535, "[", op, "] ", heads, " heads of ", rows,
              " rows exceed the CUDA grid of the tensor-core kernels");
  return dim3(static_cast<unsigned>(heads), static_cast<unsigned>(tiles));
}

template <class K>
void set_shared_bytes(K kernel, size_t bytes) {
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)),
                   "attention shared memory (16-bit)");
}

template <class T>
void forward_typed(const View& out, const View& lse, const HalfAttn& a) {
  const FwdSmem m = fwd_smem(a.E, a.Ev);
  const dim3 grid = head_tile_grid(a.N * a.Hq, a.L, kFwdRows, "attention_forward");
  set_shared_bytes(half_attention_forward_kernel<T>, m.bytes);
  EMBER_CUDA_LAUNCH(grid, kBlockThreads, m.bytes, current_stream(),
                    half_attention_forward_kernel<T>)
  (a, m, static_cast<T*>(out.data), static_cast<float*>(lse.data));
  EMBER_CUDA_CHECK_LAUNCH("attention forward kernel (16-bit)");
}

template <class T>
void backward_typed(const View& dq, const View& dk, const View& dv, const View& dout,
                    const View& out, const View& lse, const HalfAttn& a) {
  cudaStream_t stream = current_stream();
  const int64_t rows = a.N * a.Hq * a.L, dq_n = rows * a.E;
  Scratch dq32(sizeof(float) * static_cast<size_t>(dq_n)), dsum(sizeof(float) * rows);
  float* dq_acc = static_cast<float*>(dq32.get());
  if (dq_n > 0)
    EMBER_CUDA_CHECK(cudaMemsetAsync(dq_acc, 0, sizeof(float) * dq_n, stream),
                     "attention backward (16-bit)");
  if (rows > 0) {
    const unsigned blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
    EMBER_CUDA_LAUNCH(blocks, kBlockThreads, 0, stream, half_attention_row_dot_kernel<T>)
    (static_cast<const T*>(dout.data), static_cast<const T*>(out.data),
     static_cast<float*>(dsum.get()), rows, a.Ev);
    EMBER_CUDA_CHECK_LAUNCH("attention backward row dot kernel (16-bit)");
  }
  if (a.N * a.Hk * a.S > 0) {
    const BwdSmem m = bwd_smem(a.E, a.Ev);
    const dim3 grid = head_tile_grid(a.N * a.Hk, a.S, kBwdKeys, "attention_backward");
    // dout (N, Hq, L, Ev) contiguous: rows of Ev elements.
    const Operand dout_rows{dout.data, {0, 0, a.Ev, 1}, aligned_to(dout.data, 16)};
    set_shared_bytes(half_attention_backward_kernel<T>, m.bytes);
    EMBER_CUDA_LAUNCH(grid, kBlockThreads, m.bytes, stream, half_attention_backward_kernel<T>)
    (a, m, dq_acc, static_cast<T*>(dk.data), static_cast<T*>(dv.data),
     static_cast<const T*>(dout.data), dout_rows, static_cast<const float*>(lse.data),
     static_cast<const float*>(dsum.get()));
    EMBER_CUDA_CHECK_LAUNCH("attention backward kernel (16-bit)");
  }
  if (dq_n > 0) {
    EMBER_CUDA_LAUNCH(blocks_for(dq_n), kThreads, 0, stream, narrow_kernel<T>)
    (static_cast<T*>(dq.data), dq_acc, dq_n);
    EMBER_CUDA_CHECK_LAUNCH("attention backward dq kernel (16-bit)");
  }
}

void check_float32_lse(const View& lse, const char* op) {
  EMBER_CHECK_KIND(DType, lse.dtype == kFloat32, "[", op,
                   "] the tensor-core kernels keep the logsumexp in float32, got ", lse.dtype);
}

}  // namespace

bool half_attention_fits(int64_t head_dim, int64_t value_dim, int device) {
  if (!head_dims_fit(head_dim, value_dim)) return false;
  int major = 0, optin = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                   "attention (compute capability)");
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                   "attention (shared memory per block)");
  const size_t limit = static_cast<size_t>(optin);
  return major >= 8 && fwd_smem(head_dim, value_dim).bytes <= limit &&
         bwd_smem(head_dim, value_dim).bytes <= limit;
}

void launch_attention_forward_half(const View& out, const View& lse, const View& q, const View& k,
                                   const View& v, const View& mask, const AttentionParams& p) {
  const HalfAttn a = make_half_attn(q, k, v, mask, p, "attention_forward");
  check_float32_lse(lse, "attention_forward");
  if (a.N * a.Hq * a.L == 0) return;
  if (q.dtype == kBFloat16)
    forward_typed<__nv_bfloat16>(out, lse, a);
  else
    forward_typed<__half>(out, lse, a);
}

void launch_attention_backward_half(const View& dq, const View& dk, const View& dv,
                                    const View& dout, const View& q, const View& k, const View& v,
                                    const View& out, const View& lse, const View& mask,
                                    const AttentionParams& p) {
  const HalfAttn a = make_half_attn(q, k, v, mask, p, "attention_backward");
  check_float32_lse(lse, "attention_backward");
  if (q.dtype == kBFloat16)
    backward_typed<__nv_bfloat16>(dq, dk, dv, dout, out, lse, a);
  else
    backward_typed<__half>(dq, dk, dv, dout, out, lse, a);
}

}  // namespace ember::cuda_detail
