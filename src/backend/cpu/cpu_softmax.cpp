// backend/cpu/cpu_softmax.cpp: fused softmax and log-softmax -- per slice along the dim, one pass
// for the maximum, one for the exponentials and their sum, one writing the result. float32 uses
// the branch-free exp of cpu_vec_math.h, which the compiler vectorizes; float64 uses std::exp.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_loops.h"
#include "backend/cpu/cpu_vec_math.h"

namespace ember {

namespace {

// The maximum of a row of n values, NaNs left out (they make the sum NaN later, and with it the
// whole row, as in PyTorch). Four 16-byte vectors of lanes (GCC vector extensions) compare
// independently.
template <class T>
[[gnu::always_inline]] inline T row_max(const T* x, int64_t n) {
  using Vec [[gnu::vector_size(16)]] = T;
  constexpr int kPer = 16 / sizeof(T), kVecs = 4, kStep = kPer * kVecs;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  Vec acc[kVecs];
  for (Vec& a : acc) a = Vec{} + kLow;
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep)
    for (int v = 0; v < kVecs; ++v) {
      Vec x_v;
      std::memcpy(&x_v, x + i + v * kPer, sizeof(Vec));
      acc[v] = x_v > acc[v] ? x_v : acc[v];
    }
  T m = kLow;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (const Vec& a : acc)
    for (int l = 0; l < kPer; ++l) m = a[l] > m ? a[l] : m;
  return m;
}

// y[i] = e^(x[i] - m), and their sum in sixteen lanes.
template <class T>
[[gnu::always_inline]] inline T row_exp_sum(T* y, const T* x, int64_t n, T m) {
  for (int64_t i = 0; i < n; ++i) y[i] = cpu::exp_of(x[i] - m);
  constexpr int kLanes = 16;
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += y[i + l];
  T total = 0;
  for (; i < n; ++i) total += y[i];
  for (T l : lanes) total += l;
  return total;
}

// One contiguous row (inner == 1), the common case.
template <class T>
[[gnu::always_inline]] inline void softmax_row(T* y, const T* x, int64_t n, bool log) {
  T m = row_max(x, n);
  // log-softmax shifts by 0 where the maximum is infinite, as the composite form does.
  if (log && std::isinf(m)) m = 0;
  T total = row_exp_sum(y, x, n, m);
  if (log) {
    T lse = std::log(total);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;
  } else {
    T inv = T(1) / total;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// Rows [b, e) of a float32 softmax, compiled per instruction set (cpu_isa.h).
[[gnu::always_inline]] inline void softmax_rows_f32(float* y, const float* x, int64_t b, int64_t e,
                                                    int64_t n, bool log) {
  for (int64_t o = b; o < e; ++o) softmax_row(y + o * n, x + o * n, n, log);
}

// x: `outer` blocks of (n, inner) values; y the same. Softmax over the n axis.
template <class T>
void softmax_typed(T* y, const T* x, int64_t outer, int64_t n, int64_t inner, bool log) {
  int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n * inner, 1));
  if (inner == 1) {
    cpu::parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, float>)
        cpu::isa_dispatch<&softmax_rows_f32>(y, x, b, e, n, log);
      else
        for (int64_t o = b; o < e; ++o) softmax_row(y + o * n, x + o * n, n, log);
    });
    return;
  }
  cpu::parallel_for(outer, grain, [&](int64_t b, int64_t e) {
    std::vector<T> mx(inner), total(inner);
    for (int64_t o = b; o < e; ++o) {
      const T* xs = x + o * n * inner;
      T* ys = y + o * n * inner;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          T v = xs[i * inner + j];
          if (v > mx[j] || v != v)
            mx[j] = v != v || mx[j] != mx[j] ? std::numeric_limits<T>::quiet_NaN() : v;
        }
      if (log)
        for (int64_t j = 0; j < inner; ++j)
          if (std::isinf(mx[j])) mx[j] = 0;
      std::fill(total.begin(), total.end(), T(0));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          T ex = cpu::exp_of(xs[i * inner + j] - mx[j]);
          total[j] += ex;
          if (!log) ys[i * inner + j] = ex;
        }
      if (log) {
        for (int64_t j = 0; j < inner; ++j) total[j] = std::log(total[j]);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < inner; ++j)
            ys[i * inner + j] = (xs[i * inner + j] - mx[j]) - total[j];
      } else {
        for (int64_t j = 0; j < inner; ++j) total[j] = T(1) / total[j];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < inner; ++j) ys[i * inner + j] *= total[j];
      }
    }
  });
}

}  // namespace

void CpuBackend::softmax(const View& dst, const View& src, int64_t dim, bool log) {
  int64_t outer = 1, inner = 1, n = src.sizes.empty() ? 1 : src.sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  check_float32_or_64(src.dtype, "softmax");
  if (src.dtype == kFloat32)
    softmax_typed(static_cast<float*>(dst.data), static_cast<const float*>(src.data), outer, n,
                  inner, log);
  else
    softmax_typed(static_cast<double*>(dst.data), static_cast<const double*>(src.data), outer, n,
                  inner, log);
}

}  // namespace ember
