// backend/cpu/cpu_attention.cpp: fused scaled-dot-product attention (flash-attention style) on the
// CPU. Forward: one task per (batch, head, block of kBlockQ queries); it walks the key blocks the
// block can see, computing the scores tile with ember's GEMM, and keeps a running maximum and sum
// per row (online softmax) while accumulating P V, so only (kBlockQ, kBlockK) scores exist at a
// time. Backward: one task per (batch, key/value head), owning that head's dK and dV and the dQ of
// the query heads it serves; per key block it recomputes P from the scores and the saved
// logsumexp and accumulates dV += P^T dO, dK += dS^T Q scale and dQ += dS K scale, with
// dS = P (dO V^T - rowsum(dO O)). Dropout (dropout_p > 0) zeroes weights of P after the row sums
// are taken and scales the kept ones, by the same counter-based draws in both passes: the forward
// multiplies Z P (Z the kept weights' 1 / (1 - p), else 0) with V, the backward takes
// dV += (Z P)^T dO and dS = P (Z (dO V^T) - rowsum(dO O)). Every task runs alone and in a fixed
// order, and every dropout draw belongs to its element, so results do not depend on the thread
// count. The element-wise tile loops are compiled per instruction set
// (cpu_isa.h); the products go through the GEMM kernels of the same level.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_gemm.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_loops.h"
#include "backend/cpu/cpu_vec_math.h"
#include "ember/error.h"
#include "kernels/philox.h"

namespace ember {

namespace {

constexpr int64_t kBlockQ = 64, kBlockK = 64;

// One operand (N, H, rows, cols) as a base pointer and four element strides.
template <class T>
struct Operand {
  const T* data = nullptr;
  int64_t n = 0, h = 0, r = 0, c = 0;
  explicit Operand(const View& v) : data(static_cast<const T*>(v.data)) {
    if (!data) return;
    n = v.strides[0];
    h = v.strides[1];
    r = v.strides[2];
    c = v.strides[3];
  }
  const T* head(int64_t bn, int64_t bh) const { return data + bn * n + bh * h; }
};

// The problem: q (N, Hq, L, E), k (N, Hk, S, E), v (N, Hk, S, Ev), the mask read as (N, Hq, L, S).
template <class T>
struct Problem {
  int64_t N, Hq, Hk, L, S, E, Ev, groups;
  Operand<T> q, k, v;
  const void* mask;
  bool mask_bool;
  int64_t m_n, m_h, m_l, m_s;
  T scale;
  bool causal;
  bool dropout;
  T drop_p, keep_scale;
  uint64_t seed, counter;
  const cpu::GemmKernel<T>& kern;

  Problem(const View& qv, const View& kv, const View& vv, const View& mv, const AttentionParams& p)
      : N(qv.sizes[0]),
        Hq(qv.sizes[1]),
        Hk(kv.sizes[1]),
        L(qv.sizes[2]),
        S(kv.sizes[2]),
        E(qv.sizes[3]),
        Ev(vv.sizes[3]),
        groups(p.kv_groups),
        q(qv),
        k(kv),
        v(vv),
        mask(mv.data),
        mask_bool(mv.data && mv.dtype == kBool),
        m_n(mv.data ? mv.strides[0] : 0),
        m_h(mv.data ? mv.strides[1] : 0),
        m_l(mv.data ? mv.strides[2] : 0),
        m_s(mv.data ? mv.strides[3] : 0),
        scale(static_cast<T>(p.scale)),
        causal(p.causal),
        dropout(p.dropout_p > 0),
        drop_p(static_cast<T>(p.dropout_p)),
        keep_scale(static_cast<T>(p.dropout_p > 0 ? 1 / (1 - p.dropout_p) : 1)),
        seed(p.dropout_seed),
        counter(p.dropout_counter),
        kern(cpu::gemm_kernel<T>(cpu::cpu_isa())) {}

  // The keys [0, end) that queries [i0, i0 + rows) may see.
  int64_t key_end(int64_t i0, int64_t rows) const { return causal ? std::min(S, i0 + rows) : S; }

  // c (m x n, dense) = a @ b on this thread.
  void gemm(int64_t m, int64_t n, int64_t kk, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
            int64_t b_rs, int64_t b_cs, T* c) const {
    cpu::gemm(kern, cpu::GemmArgs<T>{m, n, kk, a, a_rs, a_cs, b, b_rs, b_cs, c, n}, 1);
  }

  // s (rows x cols) = q[i0 ...] k[j0 ...]^T * scale of head (bn, bh), -inf where the mask or
  // causality hides a key, the additive mask added.
  void scores(int64_t bn, int64_t bh, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
              T* s) const {
    const T* qh = q.head(bn, bh) + i0 * q.r;
    const T* kh = k.head(bn, bh / groups) + j0 * k.r;
    gemm(rows, cols, E, qh, q.r, q.c, kh, k.c, k.r, s);
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    for (int64_t r = 0; r < rows; ++r) {
      T* sr = s + r * cols;
      for (int64_t c = 0; c < cols; ++c) sr[c] *= scale;
      if (mask) {
        int64_t off = bn * m_n + bh * m_h + (i0 + r) * m_l + j0 * m_s;
        if (mask_bool) {
          const bool* mr = static_cast<const bool*>(mask) + off;
          for (int64_t c = 0; c < cols; ++c)
            if (!mr[c * m_s]) sr[c] = kNegInf;
        } else {
          const T* mr = static_cast<const T*>(mask) + off;
          for (int64_t c = 0; c < cols; ++c) sr[c] += mr[c * m_s];
        }
      }
      if (causal)
        for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) sr[c] = kNegInf;
    }
  }

  // The dropout draw of weight (i, j) of head (bn, bh): its index in the (N, Hq, L, S) weights.
  uint64_t draw(int64_t bn, int64_t bh, int64_t i, int64_t j) const {
    return static_cast<uint64_t>(((bn * Hq + bh) * L + i) * S + j);
  }
};

// The online-softmax step of one scores tile: per row, the new maximum mx (0 while every score is
// -inf), p = e^(s - mx) in place, the running sum rescaled and the accumulated output rows too.
template <class T>
[[gnu::always_inline]] inline void online_step(T* s, int64_t rows, int64_t cols, T* row_max,
                                               T* row_sum, T* acc, int64_t ev) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    T* sr = s + r * cols;
    T mx = row_max[r];
    for (int64_t c = 0; c < cols; ++c) mx = sr[c] > mx ? sr[c] : mx;
    T shift = mx == kNegInf ? T(0) : mx;
    T alpha = cpu::exp_of<T>(row_max[r] - shift);
    T total = 0;
    for (int64_t c = 0; c < cols; ++c) {
      sr[c] = cpu::exp_of<T>(sr[c] - shift);
      total += sr[c];
    }
    row_sum[r] = row_sum[r] * alpha + total;
    row_max[r] = mx;
    T* ar = acc + r * ev;
    for (int64_t e = 0; e < ev; ++e) ar[e] *= alpha;
  }
}

// z (rows x cols, row r's first weight taking draw first + r * stride) = keep where dropout keeps
// the weight (its uniform from the fill at (seed, counter) is >= p), else 0. Per row the Philox
// calls it needs run one after another (independent, so they vectorize), then each weight reads
// its uniform.
template <class T>
[[gnu::always_inline]] inline void dropout_scales(T* z, int64_t rows, int64_t cols, uint64_t first,
                                                  int64_t stride, uint64_t seed, uint64_t counter,
                                                  T p, T keep) {
  constexpr uint64_t per = philox::kUniformsPerCall<T>;
  constexpr int64_t kMaxCalls = kBlockK / per + 2;
  uint32_t words[4 * kMaxCalls];
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t idx0 = first + static_cast<uint64_t>(r * stride);
    const uint64_t skip = idx0 % per, c0 = counter + idx0 / per;
    const int64_t calls = static_cast<int64_t>((skip + cols + per - 1) / per);
    for (int64_t j = 0; j < calls; ++j) {
      const philox::Uint4 w = philox::philox4x32(c0 + static_cast<uint64_t>(j), seed);
      words[4 * j] = w.x;
      words[4 * j + 1] = w.y;
      words[4 * j + 2] = w.z;
      words[4 * j + 3] = w.w;
    }
    T* zr = z + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const uint64_t u = skip + static_cast<uint64_t>(c);
      T uniform;
      if constexpr (per == 4)
        uniform = philox::uniform_float(words[u]);
      else
        uniform = static_cast<T>(philox::uniform_double(words[2 * u], words[2 * u + 1]));
      zr[c] = uniform >= p ? keep : T(0);
    }
  }
}

// dst[i] = a[i] * b[i] for n elements (dst may be a).
template <class T>
[[gnu::always_inline]] inline void mul_into(T* dst, const T* a, const T* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = a[i] * b[i];
}

// dst[i] += src[i] for n elements.
template <class T>
[[gnu::always_inline]] inline void add_into(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

// p = e^(s - lse) in place (rows x cols); an lse of +inf (no visible key) gives zeros.
template <class T>
[[gnu::always_inline]] inline void probs_from_lse(T* s, int64_t rows, int64_t cols, const T* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    T* sr = s + r * cols;
    const T shift = lse[r];
    for (int64_t c = 0; c < cols; ++c) sr[c] = cpu::exp_of<T>(sr[c] - shift);
  }
}

// dp = p (dp - d) * scale in place: the scores' gradient, scaled for both products it feeds.
template <class T>
[[gnu::always_inline]] inline void scores_grad(T* dp, const T* p, int64_t rows, int64_t cols,
                                               const T* d, T scale) {
  for (int64_t r = 0; r < rows; ++r) {
    T* g = dp + r * cols;
    const T* pr = p + r * cols;
    const T dr = d[r];
    for (int64_t c = 0; c < cols; ++c) g[c] = pr[c] * (g[c] - dr) * scale;
  }
}

// The tile loops, each compiled per instruction set for float and double.
template <class T>
struct TileOps {
  static void online(T* s, int64_t rows, int64_t cols, T* mx, T* sum, T* acc, int64_t ev) {
    cpu::isa_dispatch<&online_step<T>>(s, rows, cols, mx, sum, acc, ev);
  }
  static void add(T* dst, const T* src, int64_t n) { cpu::isa_dispatch<&add_into<T>>(dst, src, n); }
  static void mul(T* dst, const T* a, const T* b, int64_t n) {
    cpu::isa_dispatch<&mul_into<T>>(dst, a, b, n);
  }
  // The dropout scales of the (rows x cols) weights of head (bn, bh) at queries i0.., keys j0...
  static void dropout(T* z, const Problem<T>& pb, int64_t bn, int64_t bh, int64_t i0, int64_t rows,
                      int64_t j0, int64_t cols) {
    cpu::isa_dispatch<&dropout_scales<T>>(z, rows, cols, pb.draw(bn, bh, i0, j0), pb.S, pb.seed,
                                          pb.counter, pb.drop_p, pb.keep_scale);
  }
  static void probs(T* s, int64_t rows, int64_t cols, const T* lse) {
    cpu::isa_dispatch<&probs_from_lse<T>>(s, rows, cols, lse);
  }
  static void grad(T* dp, const T* p, int64_t rows, int64_t cols, const T* d, T scale) {
    cpu::isa_dispatch<&scores_grad<T>>(dp, p, rows, cols, d, scale);
  }
};

template <class T>
void forward_typed(const View& out, const View& lse, const Problem<T>& pb) {
  const int64_t q_blocks = (pb.L + kBlockQ - 1) / kBlockQ;
  T* o = static_cast<T*>(out.data);
  T* ls = static_cast<T*>(lse.data);
  cpu::parallel_for(pb.N * pb.Hq * q_blocks, 1, [&](int64_t b, int64_t e) {
    std::vector<T> s(kBlockQ * kBlockK), pv(kBlockQ * pb.Ev), acc(kBlockQ * pb.Ev);
    std::vector<T> z(pb.dropout ? kBlockQ * kBlockK : 0);
    std::vector<T> row_max(kBlockQ), row_sum(kBlockQ);
    for (int64_t t = b; t < e; ++t) {
      const int64_t head = t / q_blocks, bn = head / pb.Hq, bh = head % pb.Hq;
      const int64_t i0 = t % q_blocks * kBlockQ, rows = std::min(kBlockQ, pb.L - i0);
      std::fill(row_max.begin(), row_max.end(), -std::numeric_limits<T>::infinity());
      std::fill(row_sum.begin(), row_sum.end(), T(0));
      std::fill(acc.begin(), acc.end(), T(0));
      const T* vh = pb.v.head(bn, bh / pb.groups);
      const int64_t end = pb.key_end(i0, rows);
      for (int64_t j0 = 0; j0 < end; j0 += kBlockK) {
        const int64_t cols = std::min(kBlockK, end - j0);
        pb.scores(bn, bh, i0, rows, j0, cols, s.data());
        TileOps<T>::online(s.data(), rows, cols, row_max.data(), row_sum.data(), acc.data(), pb.Ev);
        if (pb.dropout) {
          TileOps<T>::dropout(z.data(), pb, bn, bh, i0, rows, j0, cols);
          TileOps<T>::mul(s.data(), s.data(), z.data(), rows * cols);
        }
        pb.gemm(rows, pb.Ev, cols, s.data(), cols, 1, vh + j0 * pb.v.r, pb.v.r, pb.v.c, pv.data());
        TileOps<T>::add(acc.data(), pv.data(), rows * pb.Ev);
      }
      T* orow = o + (head * pb.L + i0) * pb.Ev;
      T* lrow = ls + head * pb.L + i0;
      for (int64_t r = 0; r < rows; ++r) {
        const T l = row_sum[r];
        const T inv = l > 0 ? T(1) / l : T(0);
        for (int64_t c = 0; c < pb.Ev; ++c) orow[r * pb.Ev + c] = acc[r * pb.Ev + c] * inv;
        lrow[r] = l > 0 ? row_max[r] + std::log(l) : std::numeric_limits<T>::infinity();
      }
    }
  });
}

template <class T>
void backward_typed(const View& dqv, const View& dkv, const View& dvv, const View& doutv,
                    const View& outv, const View& lsev, const Problem<T>& pb) {
  T* dq = static_cast<T*>(dqv.data);
  T* dk = static_cast<T*>(dkv.data);
  T* dv = static_cast<T*>(dvv.data);
  const T* dout = static_cast<const T*>(doutv.data);
  const T* out = static_cast<const T*>(outv.data);
  const T* lse = static_cast<const T*>(lsev.data);
  const int64_t L = pb.L, S = pb.S, E = pb.E, Ev = pb.Ev, g = pb.groups;
  cpu::parallel_for(pb.N * pb.Hk, 1, [&](int64_t b, int64_t e) {
    std::vector<T> s(kBlockQ * kBlockK), dp(kBlockQ * kBlockK), tmp(kBlockK * std::max(E, Ev));
    std::vector<T> z(pb.dropout ? kBlockQ * kBlockK : 0), kept(z.size());
    std::vector<T> dk_acc(kBlockK * E), dv_acc(kBlockK * Ev), d(g * L);
    for (int64_t t = b; t < e; ++t) {
      const int64_t bn = t / pb.Hk, hk = t % pb.Hk;
      // The query heads h0 .. h0 + g - 1 of this key/value head, and D = rowsum(dO * O).
      const int64_t h0 = hk * g, q_head0 = bn * pb.Hq + h0;
      for (int64_t i = 0; i < g * L; ++i) {
        const T* a = dout + (q_head0 * L + i) * Ev;
        const T* o = out + (q_head0 * L + i) * Ev;
        T sum = 0;
        for (int64_t c = 0; c < Ev; ++c) sum += a[c] * o[c];
        d[i] = sum;
      }
      std::fill(dq + q_head0 * L * E, dq + (q_head0 + g) * L * E, T(0));
      const T* kh = pb.k.head(bn, hk);
      const T* vh = pb.v.head(bn, hk);
      for (int64_t j0 = 0; j0 < S; j0 += kBlockK) {
        const int64_t cols = std::min(kBlockK, S - j0);
        std::fill(dk_acc.begin(), dk_acc.end(), T(0));
        std::fill(dv_acc.begin(), dv_acc.end(), T(0));
        for (int64_t hh = 0; hh < g; ++hh) {
          const int64_t bh = h0 + hh, head = bn * pb.Hq + bh;
          const T* qh = pb.q.head(bn, bh);
          const int64_t first = pb.causal ? j0 / kBlockQ * kBlockQ : 0;
          for (int64_t i0 = first; i0 < L; i0 += kBlockQ) {
            const int64_t rows = std::min(kBlockQ, L - i0);
            const T* dout_t = dout + (head * L + i0) * Ev;
            pb.scores(bn, bh, i0, rows, j0, cols, s.data());
            TileOps<T>::probs(s.data(), rows, cols, lse + head * L + i0);
            // dV += (Z P)^T dO
            const T* pz = s.data();
            if (pb.dropout) {
              TileOps<T>::dropout(z.data(), pb, bn, bh, i0, rows, j0, cols);
              TileOps<T>::mul(kept.data(), s.data(), z.data(), rows * cols);
              pz = kept.data();
            }
            pb.gemm(cols, Ev, rows, pz, 1, cols, dout_t, Ev, 1, tmp.data());
            TileOps<T>::add(dv_acc.data(), tmp.data(), cols * Ev);
            // dP = Z (dO V^T), then dS * scale
            pb.gemm(rows, cols, Ev, dout_t, Ev, 1, vh + j0 * pb.v.r, pb.v.c, pb.v.r, dp.data());
            if (pb.dropout) TileOps<T>::mul(dp.data(), dp.data(), z.data(), rows * cols);
            TileOps<T>::grad(dp.data(), s.data(), rows, cols, d.data() + hh * L + i0, pb.scale);
            // dQ += dS K
            pb.gemm(rows, E, cols, dp.data(), cols, 1, kh + j0 * pb.k.r, pb.k.r, pb.k.c,
                    tmp.data());
            TileOps<T>::add(dq + (head * L + i0) * E, tmp.data(), rows * E);
            // dK += dS^T Q
            pb.gemm(cols, E, rows, dp.data(), 1, cols, qh + i0 * pb.q.r, pb.q.r, pb.q.c,
                    tmp.data());
            TileOps<T>::add(dk_acc.data(), tmp.data(), cols * E);
          }
        }
        std::copy(dk_acc.begin(), dk_acc.begin() + cols * E, dk + (t * S + j0) * E);
        std::copy(dv_acc.begin(), dv_acc.begin() + cols * Ev, dv + (t * S + j0) * Ev);
      }
    }
  });
}

void check_attention_dtype(const char* op, DType dtype) {
  EMBER_CHECK_KIND(DType, dtype == kFloat32 || dtype == kFloat64, "[", op,
                   "] the CPU kernel takes float32 or float64, got ", dtype);
}

}  // namespace

void CpuBackend::attention_forward(const View& out, const View& lse, const View& q, const View& k,
                                   const View& v, const View& mask, const AttentionParams& p) {
  check_attention_dtype("attention_forward", q.dtype);
  if (q.dtype == kFloat32)
    forward_typed<float>(out, lse, Problem<float>(q, k, v, mask, p));
  else
    forward_typed<double>(out, lse, Problem<double>(q, k, v, mask, p));
}

void CpuBackend::attention_backward(const View& dq, const View& dk, const View& dv,
                                    const View& dout, const View& q, const View& k, const View& v,
                                    const View& out, const View& lse, const View& mask,
                                    const AttentionParams& p) {
  check_attention_dtype("attention_backward", q.dtype);
  if (q.dtype == kFloat32)
    backward_typed<float>(dq, dk, dv, dout, out, lse, Problem<float>(q, k, v, mask, p));
  else
    backward_typed<double>(dq, dk, dv, dout, out, lse, Problem<double>(q, k, v, mask, p));
}

}  // namespace ember
