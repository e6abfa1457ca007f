// backend/cpu/cpu_layer_norm.cpp: fused layer normalization over the rows of a (rows, cols)
// matrix. The forward reads a row twice (its mean, then the variance about it) and writes the
// output in a third pass; the backward reads each row of dy and x once for the row's two sums and
// once more for dx. The weight's and bias's gradients are summed over fixed blocks of rows and the
// blocks' sums added in order, so no result depends on the thread count. Row sums run in sixteen
// lanes (the same order at every instruction-set level, so the clones give the same bits) whose
// totals are added in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_loops.h"

namespace ember {

namespace {

constexpr int kLanes = 16;

// The sixteen lanes' total, in double.
template <class T>
[[gnu::always_inline]] inline double lanes_total(const T (&lanes)[kLanes], T tail) {
  double total = static_cast<double>(tail);
  for (T l : lanes) total += static_cast<double>(l);
  return total;
}

// One row: y = (x - mean) * rstd * w + b, with w and b optional.
template <class T>
[[gnu::always_inline]] inline void forward_row(T* y, T& mean_out, T& rstd_out, const T* x,
                                               const T* w, const T* b, int64_t n, double eps) {
  T lanes[kLanes] = {}, tail = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
  for (; i < n; ++i) tail += x[i];
  const T mean = static_cast<T>(lanes_total(lanes, tail) / static_cast<double>(n));
  T sq[kLanes] = {}, sq_tail = 0;
  for (i = 0; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      T d = x[i + l] - mean;
      sq[l] += d * d;
    }
  for (; i < n; ++i) sq_tail += (x[i] - mean) * (x[i] - mean);
  const double var = lanes_total(sq, sq_tail) / static_cast<double>(n);
  const T rstd = static_cast<T>(1.0 / std::sqrt(var + eps));
  mean_out = mean;
  rstd_out = rstd;
  if (w && b)
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i] + b[i];
  else if (w)
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i];
  else if (b)
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd + b[i];
  else
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd;
}

template <class T>
[[gnu::always_inline]] inline void forward_rows(T* y, T* mean, T* rstd, const T* x, const T* w,
                                                const T* b, int64_t r0, int64_t r1, int64_t n,
                                                double eps) {
  for (int64_t r = r0; r < r1; ++r)
    forward_row(y + r * n, mean[r], rstd[r], x + r * n, w, b, n, eps);
}

// dx of one row: with xhat = (x - mean) * rstd and gw = dy * w,
//   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)).
template <class T>
[[gnu::always_inline]] inline void input_grad_row(T* dx, const T* g, const T* x, T mean, T rstd,
                                                  const T* w, int64_t n) {
  T dot[kLanes] = {}, sum[kLanes] = {}, dot_tail = 0, sum_tail = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      T gw = w ? g[i + l] * w[i + l] : g[i + l];
      dot[l] += gw * ((x[i + l] - mean) * rstd);
      sum[l] += gw;
    }
  for (; i < n; ++i) {
    T gw = w ? g[i] * w[i] : g[i];
    dot_tail += gw * ((x[i] - mean) * rstd);
    sum_tail += gw;
  }
  const T c_dot = static_cast<T>(lanes_total(dot, dot_tail) / static_cast<double>(n));
  const T c_sum = static_cast<T>(lanes_total(sum, sum_tail) / static_cast<double>(n));
  if (w)
    for (i = 0; i < n; ++i) dx[i] = rstd * (g[i] * w[i] - c_sum - (x[i] - mean) * rstd * c_dot);
  else
    for (i = 0; i < n; ++i) dx[i] = rstd * (g[i] - c_sum - (x[i] - mean) * rstd * c_dot);
}

// Rows [r0, r1): dx where asked for, and this block's sums of dy * xhat (dw) and dy (db).
template <class T>
[[gnu::always_inline]] inline void backward_rows(T* dx, T* dw, T* db, const T* g, const T* x,
                                                 const T* mean, const T* rstd, const T* w,
                                                 int64_t r0, int64_t r1, int64_t n) {
  if (dw) std::fill(dw, dw + n, T(0));
  if (db) std::fill(db, db + n, T(0));
  for (int64_t r = r0; r < r1; ++r) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    const T m = mean[r], s = rstd[r];
    if (dw)
      for (int64_t i = 0; i < n; ++i) dw[i] += gr[i] * ((xr[i] - m) * s);
    if (db)
      for (int64_t i = 0; i < n; ++i) db[i] += gr[i];
    if (dx) input_grad_row(dx + r * n, gr, xr, m, s, w, n);
  }
}

template <class T>
void layer_norm_typed(const View& y, const View& mean, const View& rstd, const View& x,
                      const View& weight, const View& bias, double eps) {
  const int64_t rows = x.sizes[0], n = x.sizes[1];
  if (rows == 0) return;
  T* yd = static_cast<T*>(y.data);
  T* md = static_cast<T*>(mean.data);
  T* rd = static_cast<T*>(rstd.data);
  const T* xd = static_cast<const T*>(x.data);
  const T* w = static_cast<const T*>(weight.data);
  const T* b = static_cast<const T*>(bias.data);
  const int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1));
  cpu::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    cpu::isa_dispatch<&forward_rows<T>>(yd, md, rd, xd, w, b, r0, r1, n, eps);
  });
}

template <class T>
void layer_norm_backward_typed(const View& dx, const View& dweight, const View& dbias,
                               const View& dy, const View& x, const View& mean, const View& rstd,
                               const View& weight) {
  const int64_t rows = dy.sizes[0], n = dy.sizes[1];
  T* dxd = static_cast<T*>(dx.data);
  T* dwd = static_cast<T*>(dweight.data);
  T* dbd = static_cast<T*>(dbias.data);
  const T* g = static_cast<const T*>(dy.data);
  const T* xd = static_cast<const T*>(x.data);
  const T* md = static_cast<const T*>(mean.data);
  const T* rd = static_cast<const T*>(rstd.data);
  const T* w = static_cast<const T*>(weight.data);
  // Blocks of rows fixed by the shape alone: at least 16 rows, at most 256 blocks.
  const int64_t block = std::max<int64_t>(16, (rows + 255) / 256);
  const int64_t blocks = rows == 0 ? 0 : (rows + block - 1) / block;
  std::vector<T> dw_part(dwd ? static_cast<size_t>(blocks * n) : 0);
  std::vector<T> db_part(dbd ? static_cast<size_t>(blocks * n) : 0);
  const int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(block * n, 1));
  cpu::parallel_for(blocks, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t k = b0; k < b1; ++k)
      cpu::isa_dispatch<&backward_rows<T>>(dxd, dwd ? dw_part.data() + k * n : nullptr,
                                           dbd ? db_part.data() + k * n : nullptr, g, xd, md, rd, w,
                                           k * block, std::min(rows, (k + 1) * block), n);
  });
  if (!dwd && !dbd) return;
  cpu::parallel_for(n, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(blocks, 1)),
                    [&](int64_t c0, int64_t c1) {
                      for (int64_t c = c0; c < c1; ++c) {
                        double sw = 0, sb = 0;
                        for (int64_t k = 0; k < blocks; ++k) {
                          if (dwd) sw += static_cast<double>(dw_part[k * n + c]);
                          if (dbd) sb += static_cast<double>(db_part[k * n + c]);
                        }
                        if (dwd) dwd[c] = static_cast<T>(sw);
                        if (dbd) dbd[c] = static_cast<T>(sb);
                      }
                    });
}

}  // namespace

void CpuBackend::layer_norm(const View& y, const View& mean, const View& rstd, const View& x,
                            const View& weight, const View& bias, double eps) {
  check_float32_or_64(x.dtype, "layer_norm");
  if (x.dtype == kFloat32)
    layer_norm_typed<float>(y, mean, rstd, x, weight, bias, eps);
  else
    layer_norm_typed<double>(y, mean, rstd, x, weight, bias, eps);
}

void CpuBackend::layer_norm_backward(const View& dx, const View& dweight, const View& dbias,
                                     const View& dy, const View& x, const View& mean,
                                     const View& rstd, const View& weight) {
  check_float32_or_64(dy.dtype, "layer_norm_backward");
  if (dy.dtype == kFloat32)
    layer_norm_backward_typed<float>(dx, dweight, dbias, dy, x, mean, rstd, weight);
  else
    layer_norm_backward_typed<double>(dx, dweight, dbias, dy, x, mean, rstd, weight);
}

}  // namespace ember
