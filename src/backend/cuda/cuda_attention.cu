// backend/cuda/cuda_attention.cu: fused scaled-dot-product attention (flash-attention style) on
// CUDA: the float32 kernels, and the launchers, which hand bfloat16 and float16 views to the
// tensor-core kernels of cuda_attention_half.cu (the op sends float64 and wide heads to the math
// path). It compiles and links in CI but has never run on a GPU: no GPU was available when it was
// written, so its tests skip.
//
// Forward: one block per (query tile of kFwdQ rows, batch x head). Q's tile sits in shared memory;
// for each key tile the block loads K and V, computes the scores tile, and per row updates the
// running maximum and sum (online softmax), rescaling the accumulated output kept in shared
// memory before adding P V. Backward: one block per (key tile of kBwdK rows, batch x key/value
// head), accumulating that tile's dK and dV in shared memory over the query heads it serves and
// their query tiles, P recomputed from the scores and the saved logsumexp; dQ gets its share
// through atomicAdd (dq is zeroed first).
#include <cmath>
#include <limits>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

constexpr int kFwdQ = 32, kFwdK = 32, kBwdQ = 16, kBwdK = 16, kAttnThreads = 128;

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

// rows x cols of src (row stride rs, column stride cs) into dst (dense), zeros past `valid` rows.
__device__ void load_tile(float* dst, const float* src, int64_t rs, int64_t cs, int rows,
                          int64_t cols, int64_t valid) {
  for (int64_t t = threadIdx.x; t < rows * cols; t += blockDim.x) {
    int64_t r = t / cols, c = t - r * cols;
    dst[t] = r < valid ? src[r * rs + c * cs] : 0.0f;
  }
}

__global__ void attention_forward_kernel(Attn a, float* out, float* lse) {
  EMBER_CUDA_DYNAMIC_SHARED(float, smem);
  const int64_t E = a.E, Ev = a.Ev;
  float* qs = smem;                 // (kFwdQ, E)
  float* ks = qs + kFwdQ * E;       // (kFwdK, E)
  float* vs = ks + kFwdK * E;       // (kFwdK, Ev)
  float* ss = vs + kFwdK * Ev;      // (kFwdQ, kFwdK)
  float* acc = ss + kFwdQ * kFwdK;  // (kFwdQ, Ev)
  float* row_max = acc + kFwdQ * Ev;
  float* row_sum = row_max + kFwdQ;
  float* alpha = row_sum + kFwdQ;
  const int64_t head = blockIdx.y, n = head / a.Hq, h = head % a.Hq, hk = h / a.groups;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kFwdQ;
  const float* qh = a.q + n * a.qs[0] + h * a.qs[1] + i0 * a.qs[2];
  const float* kh = a.k + n * a.ks[0] + hk * a.ks[1];
  const float* vh = a.v + n * a.vs[0] + hk * a.vs[1];
  load_tile(qs, qh, a.qs[2], a.qs[3], kFwdQ, E, a.L - i0);
  for (int64_t t = threadIdx.x; t < kFwdQ * Ev; t += blockDim.x) acc[t] = 0.0f;
  for (int r = threadIdx.x; r < kFwdQ; r += blockDim.x) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.0f;
  }
  const int64_t end = a.causal ? min(a.S, i0 + kFwdQ) : a.S;
  for (int64_t j0 = 0; j0 < end; j0 += kFwdK) {
    __syncthreads();
    load_tile(ks, kh + j0 * a.ks[2], a.ks[2], a.ks[3], kFwdK, E, a.S - j0);
    load_tile(vs, vh + j0 * a.vs[2], a.vs[2], a.vs[3], kFwdK, Ev, a.S - j0);
    __syncthreads();
    for (int t = threadIdx.x; t < kFwdQ * kFwdK; t += blockDim.x) {
      int r = t / kFwdK, c = t % kFwdK;
      float dot = 0.0f;
      for (int64_t e = 0; e < E; ++e) dot += qs[r * E + e] * ks[c * E + e];
      ss[t] = masked_score(a, n, h, i0 + r, j0 + c, dot);
    }
    __syncthreads();
    for (int r = threadIdx.x; r < kFwdQ; r += blockDim.x) {
      float mx = row_max[r];
      for (int c = 0; c < kFwdK; ++c) mx = fmaxf(mx, ss[r * kFwdK + c]);
      float shift = mx == -INFINITY ? 0.0f : mx, total = 0.0f;
      for (int c = 0; c < kFwdK; ++c) {
        float p = expf(ss[r * kFwdK + c] - shift);
        ss[r * kFwdK + c] = p;
        total += p;
      }
      alpha[r] = expf(row_max[r] - shift);
      row_sum[r] = row_sum[r] * alpha[r] + total;
      row_max[r] = mx;
    }
    __syncthreads();
    for (int64_t t = threadIdx.x; t < kFwdQ * Ev; t += blockDim.x) {
      int64_t r = t / Ev, e = t - r * Ev;
      float sum = acc[t] * alpha[r];
      for (int c = 0; c < kFwdK; ++c) sum += ss[r * kFwdK + c] * vs[c * Ev + e];
      acc[t] = sum;
    }
  }
  __syncthreads();
  for (int64_t t = threadIdx.x; t < kFwdQ * Ev; t += blockDim.x) {
    int64_t r = t / Ev, e = t - r * Ev;
    if (i0 + r >= a.L) continue;
    float l = row_sum[r];
    out[(head * a.L + i0 + r) * Ev + e] = l > 0.0f ? acc[t] / l : 0.0f;
  }
  for (int r = threadIdx.x; r < kFwdQ; r += blockDim.x)
    if (i0 + r < a.L)
      lse[head * a.L + i0 + r] = row_sum[r] > 0.0f ? row_max[r] + logf(row_sum[r]) : INFINITY;
}

__global__ void attention_backward_kernel(Attn a, float* dq, float* dk, float* dv,
                                          const float* dout, const float* out, const float* lse) {
  EMBER_CUDA_DYNAMIC_SHARED(float, smem);
  const int64_t E = a.E, Ev = a.Ev;
  float* ks = smem;                   // (kBwdK, E)
  float* vs = ks + kBwdK * E;         // (kBwdK, Ev)
  float* dks = vs + kBwdK * Ev;       // (kBwdK, E)
  float* dvs = dks + kBwdK * E;       // (kBwdK, Ev)
  float* qs = dvs + kBwdK * Ev;       // (kBwdQ, E)
  float* dos = qs + kBwdQ * E;        // (kBwdQ, Ev)
  float* ps = dos + kBwdQ * Ev;       // (kBwdQ, kBwdK)
  float* dss = ps + kBwdQ * kBwdK;    // (kBwdQ, kBwdK)
  float* drow = dss + kBwdQ * kBwdK;  // (kBwdQ)
  const int64_t kv_head = blockIdx.y, n = kv_head / a.Hk, hk = kv_head % a.Hk;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kBwdK;
  load_tile(ks, a.k + n * a.ks[0] + hk * a.ks[1] + j0 * a.ks[2], a.ks[2], a.ks[3], kBwdK, E,
            a.S - j0);
  load_tile(vs, a.v + n * a.vs[0] + hk * a.vs[1] + j0 * a.vs[2], a.vs[2], a.vs[3], kBwdK, Ev,
            a.S - j0);
  for (int64_t t = threadIdx.x; t < kBwdK * E; t += blockDim.x) dks[t] = 0.0f;
  for (int64_t t = threadIdx.x; t < kBwdK * Ev; t += blockDim.x) dvs[t] = 0.0f;
  for (int64_t hh = 0; hh < a.groups; ++hh) {
    const int64_t h = hk * a.groups + hh, head = n * a.Hq + h;
    const float* qh = a.q + n * a.qs[0] + h * a.qs[1];
    const int64_t first = a.causal ? j0 / kBwdQ * kBwdQ : 0;
    for (int64_t i0 = first; i0 < a.L; i0 += kBwdQ) {
      __syncthreads();
      load_tile(qs, qh + i0 * a.qs[2], a.qs[2], a.qs[3], kBwdQ, E, a.L - i0);
      load_tile(dos, dout + (head * a.L + i0) * Ev, Ev, 1, kBwdQ, Ev, a.L - i0);
      __syncthreads();
      for (int r = threadIdx.x; r < kBwdQ; r += blockDim.x) {
        float sum = 0.0f;
        if (i0 + r < a.L)
          for (int64_t e = 0; e < Ev; ++e)
            sum += dos[r * Ev + e] * out[(head * a.L + i0 + r) * Ev + e];
        drow[r] = sum;
      }
      for (int t = threadIdx.x; t < kBwdQ * kBwdK; t += blockDim.x) {
        int r = t / kBwdK, c = t % kBwdK;
        float dot = 0.0f, dpv = 0.0f;
        for (int64_t e = 0; e < E; ++e) dot += qs[r * E + e] * ks[c * E + e];
        for (int64_t e = 0; e < Ev; ++e) dpv += dos[r * Ev + e] * vs[c * Ev + e];
        float s = masked_score(a, n, h, i0 + r, j0 + c, dot);
        float p = i0 + r < a.L ? expf(s - lse[head * a.L + i0 + r]) : 0.0f;
        ps[t] = p;
        dss[t] = dpv;
      }
      __syncthreads();
      for (int t = threadIdx.x; t < kBwdQ * kBwdK; t += blockDim.x)
        dss[t] = ps[t] * (dss[t] - drow[t / kBwdK]) * a.scale;
      __syncthreads();
      for (int64_t t = threadIdx.x; t < kBwdK * Ev; t += blockDim.x) {
        int64_t c = t / Ev, e = t - c * Ev;
        float sum = 0.0f;
        for (int r = 0; r < kBwdQ; ++r) sum += ps[r * kBwdK + c] * dos[r * Ev + e];
        dvs[t] += sum;
      }
      for (int64_t t = threadIdx.x; t < kBwdK * E; t += blockDim.x) {
        int64_t c = t / E, e = t - c * E;
        float sum = 0.0f;
        for (int r = 0; r < kBwdQ; ++r) sum += dss[r * kBwdK + c] * qs[r * E + e];
        dks[t] += sum;
      }
      for (int64_t t = threadIdx.x; t < kBwdQ * E; t += blockDim.x) {
        int64_t r = t / E, e = t - r * E;
        if (i0 + r >= a.L) continue;
        float sum = 0.0f;
        for (int c = 0; c < kBwdK; ++c) sum += dss[r * kBwdK + c] * ks[c * E + e];
        atomicAdd(dq + (head * a.L + i0 + r) * E + e, sum);
      }
    }
  }
  __syncthreads();
  for (int64_t t = threadIdx.x; t < kBwdK * E; t += blockDim.x)
    if (j0 + t / E < a.S) dk[(kv_head * a.S + j0) * E + t] = dks[t];
  for (int64_t t = threadIdx.x; t < kBwdK * Ev; t += blockDim.x)
    if (j0 + t / Ev < a.S) dv[(kv_head * a.S + j0) * Ev + t] = dvs[t];
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
  int64_t floats = (kFwdQ + kFwdK) * a.E + kFwdK * a.Ev + kFwdQ * kFwdK + kFwdQ * a.Ev + 3 * kFwdQ;
  size_t bytes = shared_bytes(attention_forward_kernel, floats);
  dim3 grid(static_cast<unsigned>((a.L + kFwdQ - 1) / kFwdQ), static_cast<unsigned>(a.N * a.Hq));
  EMBER_CUDA_LAUNCH(grid, kAttnThreads, bytes, current_stream(), attention_forward_kernel)
  (a, static_cast<float*>(out.data), static_cast<float*>(lse.data));
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
  int64_t floats = 2 * kBwdK * (a.E + a.Ev) + kBwdQ * (a.E + a.Ev) + 2 * kBwdQ * kBwdK + kBwdQ;
  size_t bytes = shared_bytes(attention_backward_kernel, floats);
  dim3 grid(static_cast<unsigned>((a.S + kBwdK - 1) / kBwdK), static_cast<unsigned>(a.N * a.Hk));
  EMBER_CUDA_LAUNCH(grid, kAttnThreads, bytes, stream, attention_backward_kernel)
  (a, static_cast<float*>(dq.data), static_cast<float*>(dk.data), static_cast<float*>(dv.data),
   static_cast<const float*>(dout.data), static_cast<const float*>(out.data),
   static_cast<const float*>(lse.data));
  EMBER_CUDA_CHECK_LAUNCH("attention backward kernel");
}

}  // namespace ember::cuda_detail
