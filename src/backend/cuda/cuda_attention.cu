// backend/cuda/cuda_attention.cu: fused scaled-dot-product attention (flash-attention style) on
// CUDA: the float32 kernels, and the launchers, which hand bfloat16 and float16 views to the
// tensor-core kernels of cuda_attention_half.cu (the op sends float64 and heads over 128 to the
// math path).
//
// Forward: one block of kFlashThreads per (query tile of kFlashQ rows, batch x head), the longest
// causal tiles launched first. Q's tile sits in shared memory; for each key tile of kFlashK rows
// (those wholly above the causal diagonal skipped) the block stages K and V in shared memory and
// each thread computes a 4 x 8 block of the scores in registers, takes the rows' maxima and sums
// with warp shuffles (online softmax: the output it accumulates in registers is rescaled when a
// row's maximum grows), then adds P V from P staged per warp in shared memory. The head dims are
// padded with zeros to the kernel's D (64 or 128). Backward (after a small kernel takes each
// row's dout . out): one block per (key tile of kFlashK rows, batch x key/value head), the
// tile's dK and dV accumulated in registers over the query heads it serves and their query
// tiles (those wholly before the tile under the causal mask skipped), P recomputed from the
// scores and the saved logsumexp; dQ gets its share through atomicAdd (dq is zeroed first).
#include <cmath>
#include <limits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

// The tiles; the kernels' thread layouts below assume these values.
constexpr int kFlashQ = 64, kFlashK = 64, kFlashThreads = 128;

// The operands: q (N, Hq, L, E), k (N, Hk, S, E), v (N, Hk, S, Ev) with element strides, the
// mask read as (N, Hq, L, S) through its strides (null when absent).
struct Attn {
  const float *q, *k, *v;
  int64_t qs[4], ks[4], vs[4];
  const void* mask;
  bool mask_bool;
  int64_t ms[4];
  int64_t N, Hq, Hk, L, S, E, Ev, groups;
  float scale;
  bool causal;
  // Whether each of q, k and v has contiguous rows whose every start is 16-byte aligned.
  bool q_vec, k_vec, v_vec;
};

Attn make_attn(const View& q, const View& k, const View& v, const View& mask,
               const AttentionParams& p) {
  Attn a{};
  a.q = static_cast<const float*>(q.data);
  a.k = static_cast<const float*>(k.data);
  a.v = static_cast<const float*>(v.data);
  for (int d = 0; d < 4; ++d) {
    a.qs[d] = q.strides[d];
    a.ks[d] = k.strides[d];
    a.vs[d] = v.strides[d];
    a.ms[d] = mask.data ? mask.strides[d] : 0;
  }
  a.mask = mask.data;
  a.mask_bool = mask.data && mask.dtype == kBool;
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
  auto rows_vec = [](const View& t) {
    return t.strides[3] == 1 && t.strides[0] % 4 == 0 && t.strides[1] % 4 == 0 &&
           t.strides[2] % 4 == 0 && aligned_to(t.data, 16);
  };
  a.q_vec = rows_vec(q);
  a.k_vec = rows_vec(k);
  a.v_vec = rows_vec(v);
  return a;
}

// The score of query i and key j of head (n, h) from their dot product: scaled, masked, -inf
// where hidden or out of range.
__device__ float masked_score(const Attn& a, int64_t n, int64_t h, int64_t i, int64_t j,
                              float dot) {
  const float neg_inf = -INFINITY;
  if (i >= a.L || j >= a.S || (a.causal && j > i)) return neg_inf;
  float s = dot * a.scale;
  if (a.mask) {
    int64_t off = n * a.ms[0] + h * a.ms[1] + i * a.ms[2] + j * a.ms[3];
    if (a.mask_bool)
      s = static_cast<const bool*>(a.mask)[off] ? s : neg_inf;
    else
      s += static_cast<const float*>(a.mask)[off];
  }
  return s;
}

using Vec4 = Vec<float, 4>;

// kFlashK rows of src (row stride rs, column stride cs; `vec`: rows contiguous and aligned) into
// dst with row pitch D + 4, columns past `cols` and rows past `valid` zero.
template <int D>
__device__ void load_flash_tile(float* dst, const float* src, int64_t rs, int64_t cs, int64_t valid,
                                int64_t cols, bool vec) {
  constexpr int C4 = D / 4;
  for (int idx = threadIdx.x; idx < kFlashK * C4; idx += blockDim.x) {
    const int r = idx / C4, c = idx % C4 * 4;
    Vec4 t{};
    if (r < valid) {
      const float* row = src + r * rs;
      if (vec && c + 4 <= cols) {
        t = *reinterpret_cast<const Vec4*>(row + c);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) t.v[e] = c + e < cols ? row[(c + e) * cs] : 0.0f;
      }
    }
    *reinterpret_cast<Vec4*>(dst + r * (D + 4) + c) = t;
  }
}

// Thread t of the block owns query rows (t / 8) * 4 + i (i < 4) -- a warp owns 16 rows, so P's
// rows stay within their warp -- score columns t % 8 + 8 j (j < 8), and output columns
// (t % 8) * 4 + 32 m + e (m < D / 32, e < 4). Rows and columns are padded with zeros: rows past L
// and keys past S are masked by masked_score and never written.
template <int D>
__global__ void __launch_bounds__(kFlashThreads)
    attention_forward_flash(Attn a, float* out, float* lse) {
  constexpr int P = D + 4, PP = kFlashK + 4, M = D / 32;
  EMBER_CUDA_DYNAMIC_SHARED(float, smem);
  float* qs = smem;              // (kFlashQ, P)
  float* ks = qs + kFlashQ * P;  // (kFlashK, P)
  float* vs = ks + kFlashK * P;  // (kFlashK, P)
  float* ps = vs + kFlashK * P;  // (kFlashQ, PP)
  const int rg = threadIdx.x / 8, cg = threadIdx.x % 8;
  const int64_t head = blockIdx.y, n = head / a.Hq, h = head % a.Hq, hk = h / a.groups;
  const int64_t i0 = static_cast<int64_t>(gridDim.x - 1 - blockIdx.x) * kFlashQ;
  load_flash_tile<D>(qs, a.q + n * a.qs[0] + h * a.qs[1] + i0 * a.qs[2], a.qs[2], a.qs[3], a.L - i0,
                     a.E, a.q_vec);
  const float* kh = a.k + n * a.ks[0] + hk * a.ks[1];
  const float* vh = a.v + n * a.vs[0] + hk * a.vs[1];
  float o[4][M][4] = {}, row_max[4], row_sum[4] = {};
#pragma unroll
  for (int i = 0; i < 4; ++i) row_max[i] = -INFINITY;
  const int64_t end = a.causal ? min(a.S, i0 + kFlashQ) : a.S;
  for (int64_t j0 = 0; j0 < end; j0 += kFlashK) {
    __syncthreads();  // the previous tile's K and V are no longer read
    load_flash_tile<D>(ks, kh + j0 * a.ks[2], a.ks[2], a.ks[3], a.S - j0, a.E, a.k_vec);
    load_flash_tile<D>(vs, vh + j0 * a.vs[2], a.vs[2], a.vs[3], a.S - j0, a.Ev, a.v_vec);
    __syncthreads();
    float s[4][8] = {};
    for (int e = 0; e < D; e += 4) {
      Vec4 qv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) qv[i] = *reinterpret_cast<const Vec4*>(qs + (rg * 4 + i) * P + e);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const Vec4 kv = *reinterpret_cast<const Vec4*>(ks + (cg + 8 * j) * P + e);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int x = 0; x < 4; ++x) s[i][j] += qv[i].v[x] * kv.v[x];
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = rg * 4 + i;
      float mx = row_max[i];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        s[i][j] = masked_score(a, n, h, i0 + r, j0 + cg + 8 * j, s[i][j]);
        mx = fmaxf(mx, s[i][j]);
      }
      // The 8 threads of a row are lanes differing in their low 3 bits.
      for (int d = 1; d < 8; d *= 2) mx = fmaxf(mx, __shfl_xor_sync(kFullMask, mx, d));
      const float shift = mx == -INFINITY ? 0.0f : mx, alpha = expf(row_max[i] - shift);
      float total = 0.0f;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float p = expf(s[i][j] - shift);
        ps[r * PP + cg + 8 * j] = p;
        total += p;
      }
      row_sum[i] = row_sum[i] * alpha + total;
      row_max[i] = mx;
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int x = 0; x < 4; ++x) o[i][m][x] *= alpha;
    }
    __syncwarp();  // P's rows of this warp are written
    for (int c = 0; c < kFlashK; c += 4) {
      Vec4 pv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        pv[i] = *reinterpret_cast<const Vec4*>(ps + (rg * 4 + i) * PP + c);
#pragma unroll
      for (int cc = 0; cc < 4; ++cc)
#pragma unroll
        for (int m = 0; m < M; ++m) {
          const Vec4 vv = *reinterpret_cast<const Vec4*>(vs + (c + cc) * P + cg * 4 + 32 * m);
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int x = 0; x < 4; ++x) o[i][m][x] += pv[i].v[cc] * vv.v[x];
        }
    }
    __syncwarp();  // P is read before the next tile overwrites it
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float l = row_sum[i];
    for (int d = 1; d < 8; d *= 2) l += __shfl_xor_sync(kFullMask, l, d);
    const int64_t row = i0 + rg * 4 + i;
    if (row >= a.L) continue;
    float* orow = out + (head * a.L + row) * a.Ev;
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int col = cg * 4 + 32 * m + x;
        if (col < a.Ev) orow[col] = l > 0.0f ? o[i][m][x] / l : 0.0f;
      }
    if (cg == 0) lse[head * a.L + row] = l > 0.0f ? row_max[i] + logf(l) : INFINITY;
  }
}

// delta[r] = dout[r] . out[r], rows of Ev: one warp per row.
__global__ void attention_delta_kernel(const float* dout, const float* out, float* delta,
                                       int64_t rows, int64_t Ev) {
  const int lane = threadIdx.x % 32, per_block = blockDim.x / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * per_block;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / 32; r < rows;
       r += warps) {
    float sum = 0.0f;
    for (int64_t e = lane; e < Ev; e += 32) sum += dout[r * Ev + e] * out[r * Ev + e];
    for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(kFullMask, sum, d);
    if (lane == 0) delta[r] = sum;
  }
}

// One block per (key tile of kFlashK rows, batch x key/value head), the causal tiles with the
// most queries first. Thread t owns keys (t / 8) * 4 + i (i < 4), score columns (queries)
// t % 8 + 8 j (j < 8), and dK / dV columns (t % 8) * 4 + 32 m + e, accumulated in registers over
// the query heads the key head serves and their query tiles. Per query tile: S^T = K Q^T and
// dP^T = V dO^T in registers, P^T and dS^T = P^T (dP^T - delta) scale staged in shared memory,
// dV += P^T dO, dK += dS^T Q, and dQ += dS K (thread t: queries (t / 8) * 4 + i) added to dq
// with atomicAdd.
template <int D>
__global__ void __launch_bounds__(kFlashThreads)
    attention_backward_flash(Attn a, float* dq, float* dk, float* dv, const float* dout,
                             const float* lse, const float* delta, bool do_vec) {
  constexpr int P = D + 4, PP = kFlashQ + 4, M = D / 32;
  EMBER_CUDA_DYNAMIC_SHARED(float, smem);
  float* ks = smem;                      // (kFlashK, P)
  float* vs = ks + kFlashK * P;          // (kFlashK, P)
  float* qs = vs + kFlashK * P;          // (kFlashQ, P)
  float* dos = qs + kFlashQ * P;         // (kFlashQ, P)
  float* pt = dos + kFlashQ * P;         // (kFlashK, PP)
  float* dst = pt + kFlashK * PP;        // (kFlashK, PP)
  float* row_lse = dst + kFlashK * PP;   // (kFlashQ)
  float* row_delta = row_lse + kFlashQ;  // (kFlashQ)
  const int rg = threadIdx.x / 8, cg = threadIdx.x % 8;
  const int64_t kv_head = blockIdx.y, n = kv_head / a.Hk, hk = kv_head % a.Hk;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kFlashK;
  load_flash_tile<D>(ks, a.k + n * a.ks[0] + hk * a.ks[1] + j0 * a.ks[2], a.ks[2], a.ks[3],
                     a.S - j0, a.E, a.k_vec);
  load_flash_tile<D>(vs, a.v + n * a.vs[0] + hk * a.vs[1] + j0 * a.vs[2], a.vs[2], a.vs[3],
                     a.S - j0, a.Ev, a.v_vec);
  float dka[4][M][4] = {}, dva[4][M][4] = {};
  for (int64_t hh = 0; hh < a.groups; ++hh) {
    const int64_t h = hk * a.groups + hh, head = n * a.Hq + h;
    const float* qh = a.q + n * a.qs[0] + h * a.qs[1];
    // Queries before j0 see none of this tile's keys under the causal mask.
    const int64_t first = a.causal ? j0 / kFlashQ * kFlashQ : 0;
    for (int64_t i0 = first; i0 < a.L; i0 += kFlashQ) {
      __syncthreads();  // the previous query tile is no longer read
      load_flash_tile<D>(qs, qh + i0 * a.qs[2], a.qs[2], a.qs[3], a.L - i0, a.E, a.q_vec);
      load_flash_tile<D>(dos, dout + (head * a.L + i0) * a.Ev, a.Ev, 1, a.L - i0, a.Ev, do_vec);
      for (int r = threadIdx.x; r < kFlashQ; r += blockDim.x) {
        const bool in = i0 + r < a.L;
        row_lse[r] = in ? lse[head * a.L + i0 + r] : 0.0f;
        row_delta[r] = in ? delta[head * a.L + i0 + r] : 0.0f;
      }
      __syncthreads();
      float s[4][8] = {}, dp[4][8] = {};
      for (int e = 0; e < D; e += 4) {
        Vec4 kv[4], vv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          kv[i] = *reinterpret_cast<const Vec4*>(ks + (rg * 4 + i) * P + e);
          vv[i] = *reinterpret_cast<const Vec4*>(vs + (rg * 4 + i) * P + e);
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const Vec4 qv = *reinterpret_cast<const Vec4*>(qs + (cg + 8 * j) * P + e);
          const Vec4 dov = *reinterpret_cast<const Vec4*>(dos + (cg + 8 * j) * P + e);
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int x = 0; x < 4; ++x) {
              s[i][j] += kv[i].v[x] * qv.v[x];
              dp[i][j] += vv[i].v[x] * dov.v[x];
            }
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int key = rg * 4 + i, query = cg + 8 * j;
          const float sc = masked_score(a, n, h, i0 + query, j0 + key, s[i][j]);
          const float p = i0 + query < a.L ? expf(sc - row_lse[query]) : 0.0f;
          pt[key * PP + query] = p;
          dst[key * PP + query] = p * (dp[i][j] - row_delta[query]) * a.scale;
        }
      __syncthreads();  // dS^T is read by every warp for dQ
      for (int c = 0; c < kFlashQ; c += 4) {
        Vec4 pv[4], dsv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          pv[i] = *reinterpret_cast<const Vec4*>(pt + (rg * 4 + i) * PP + c);
          dsv[i] = *reinterpret_cast<const Vec4*>(dst + (rg * 4 + i) * PP + c);
        }
#pragma unroll
        for (int cc = 0; cc < 4; ++cc)
#pragma unroll
          for (int m = 0; m < M; ++m) {
            const int col = cg * 4 + 32 * m;
            const Vec4 dov = *reinterpret_cast<const Vec4*>(dos + (c + cc) * P + col);
            const Vec4 qv = *reinterpret_cast<const Vec4*>(qs + (c + cc) * P + col);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
              for (int x = 0; x < 4; ++x) {
                dva[i][m][x] += pv[i].v[cc] * dov.v[x];
                dka[i][m][x] += dsv[i].v[cc] * qv.v[x];
              }
          }
      }
      float dqa[4][M][4] = {};
      for (int c = 0; c < kFlashK; ++c) {
        const Vec4 d4 = *reinterpret_cast<const Vec4*>(dst + c * PP + rg * 4);
#pragma unroll
        for (int m = 0; m < M; ++m) {
          const Vec4 kv = *reinterpret_cast<const Vec4*>(ks + c * P + cg * 4 + 32 * m);
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int x = 0; x < 4; ++x) dqa[i][m][x] += d4.v[i] * kv.v[x];
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t query = i0 + rg * 4 + i;
        if (query >= a.L) continue;
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
          for (int x = 0; x < 4; ++x) {
            const int col = cg * 4 + 32 * m + x;
            if (col < a.E) atomicAdd(dq + (head * a.L + query) * a.E + col, dqa[i][m][x]);
          }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t key = j0 + rg * 4 + i;
    if (key >= a.S) continue;
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int col = cg * 4 + 32 * m + x;
        if (col < a.E) dk[(kv_head * a.S + key) * a.E + col] = dka[i][m][x];
        if (col < a.Ev) dv[(kv_head * a.S + key) * a.Ev + col] = dva[i][m][x];
      }
  }
}

// Dynamic shared memory of a kernel: `floats` of them, the limit raised above 48 KiB as needed.
template <class K>
size_t shared_bytes(K kernel, int64_t floats) {
  size_t bytes = static_cast<size_t>(floats) * sizeof(float);
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)),
                   "attention shared memory");
  return bytes;
}

void check_float32(DType dtype, const char* op) {
  EMBER_CHECK_KIND(DType, dtype == kFloat32, "[", op,
                   "] the CUDA kernels take float32, bfloat16 or float16, got ", dtype);
}

bool is_16bit(DType dtype) {
  return dtype == kBFloat16 || dtype == kFloat16;
}

}  // namespace

void launch_attention_forward(const View& out, const View& lse, const View& q, const View& k,
                              const View& v, const View& mask, const AttentionParams& p) {
  if (is_16bit(q.dtype)) {
    launch_attention_forward_half(out, lse, q, k, v, mask, p);
    return;
  }
  check_float32(q.dtype, "attention_forward");
  Attn a = make_attn(q, k, v, mask, p);
  if (a.N * a.Hq * a.L == 0) return;
  dim3 grid(static_cast<unsigned>((a.L + kFlashQ - 1) / kFlashQ),
            static_cast<unsigned>(a.N * a.Hq));
  auto launch = [&]<int D>() {
    const int64_t floats = (kFlashQ + 2 * kFlashK) * (D + 4) + kFlashQ * (kFlashK + 4);
    size_t bytes = shared_bytes(attention_forward_flash<D>, floats);
    EMBER_CUDA_LAUNCH(grid, kFlashThreads, bytes, current_stream(), attention_forward_flash<D>)
    (a, static_cast<float*>(out.data), static_cast<float*>(lse.data));
  };
  if (std::max(a.E, a.Ev) <= 64)
    launch.template operator()<64>();
  else
    launch.template operator()<128>();
  EMBER_CUDA_CHECK_LAUNCH("attention forward kernel");
}

void launch_attention_backward(const View& dq, const View& dk, const View& dv, const View& dout,
                               const View& q, const View& k, const View& v, const View& out,
                               const View& lse, const View& mask, const AttentionParams& p) {
  if (is_16bit(q.dtype)) {
    launch_attention_backward_half(dq, dk, dv, dout, q, k, v, out, lse, mask, p);
    return;
  }
  check_float32(q.dtype, "attention_backward");
  Attn a = make_attn(q, k, v, mask, p);
  cudaStream_t stream = current_stream();
  EMBER_CUDA_CHECK(cudaMemsetAsync(dq.data, 0, dq.numel() * sizeof(float), stream),
                   "attention backward");
  if (a.N * a.Hk * a.S == 0) return;
  const int64_t rows = a.N * a.Hq * a.L;
  Scratch delta_buf(sizeof(float) * std::max<int64_t>(rows, 1));
  float* delta = static_cast<float*>(delta_buf.get());
  if (rows > 0) {
    EMBER_CUDA_LAUNCH(blocks_for(rows * 32), kThreads, 0, stream, attention_delta_kernel)
    (static_cast<const float*>(dout.data), static_cast<const float*>(out.data), delta, rows, a.Ev);
    EMBER_CUDA_CHECK_LAUNCH("attention backward delta kernel");
  }
  dim3 grid(static_cast<unsigned>((a.S + kFlashK - 1) / kFlashK),
            static_cast<unsigned>(a.N * a.Hk));
  auto launch = [&]<int D>() {
    const int64_t floats =
        (2 * kFlashK + 2 * kFlashQ) * (D + 4) + 2 * kFlashK * (kFlashQ + 4) + 2 * kFlashQ;
    size_t bytes = shared_bytes(attention_backward_flash<D>, floats);
    EMBER_CUDA_LAUNCH(grid, kFlashThreads, bytes, stream, attention_backward_flash<D>)
    (a, static_cast<float*>(dq.data), static_cast<float*>(dk.data), static_cast<float*>(dv.data),
     static_cast<const float*>(dout.data), static_cast<const float*>(lse.data), delta,
     a.Ev % 4 == 0 && aligned_to(dout.data, 16));
  };
  if (std::max(a.E, a.Ev) <= 64)
    launch.template operator()<64>();
  else
    launch.template operator()<128>();
  EMBER_CUDA_CHECK_LAUNCH("attention backward kernel");
}

}  // namespace ember::cuda_detail
