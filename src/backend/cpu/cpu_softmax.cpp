// backend/cpu/cpu_softmax.cpp: fused softmax and log-softmax -- per slice along the dim, one pass
// for the maximum, one for the sum of exponentials, one writing the result.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"

namespace ember {

namespace {

// x: `outer` blocks of (n, inner) values; y the same. Softmax over the n axis.
template <class T>
void softmax_typed(T* y, const T* x, int64_t outer, int64_t n, int64_t inner, bool log) {
  int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n * inner, 1));
  cpu::parallel_for(outer, grain, [&](int64_t b, int64_t e) {
    std::vector<T> mx(inner), total(inner);
    for (int64_t o = b; o < e; ++o) {
      const T* xs = x + o * n * inner;
      T* ys = y + o * n * inner;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          T v = xs[i * inner + j];
          if (v > mx[j] || v != v) mx[j] = v != v || mx[j] != mx[j] ? std::numeric_limits<T>::quiet_NaN() : v;
        }
      // log-softmax shifts by 0 where the maximum is infinite, as the composite form does.
      if (log)
        for (int64_t j = 0; j < inner; ++j)
          if (std::isinf(mx[j])) mx[j] = 0;
      std::fill(total.begin(), total.end(), T(0));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          T ex = std::exp(xs[i * inner + j] - mx[j]);
          total[j] += ex;
          if (!log) ys[i * inner + j] = ex;
        }
      if (log) {
        for (int64_t j = 0; j < inner; ++j) total[j] = std::log(total[j]);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < inner; ++j) ys[i * inner + j] = (xs[i * inner + j] - mx[j]) - total[j];
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
  if (src.dtype == kFloat32)
    softmax_typed(static_cast<float*>(dst.data), static_cast<const float*>(src.data), outer, n, inner, log);
  else
    softmax_typed(static_cast<double*>(dst.data), static_cast<const double*>(src.data), outer, n, inner, log);
}

}  // namespace ember
