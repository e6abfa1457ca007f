// backend/cpu/cpu_search.cpp: searchsorted -- each value's binary search in its sorted row
// (kernels/search.h), values in parallel.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/scalar_math.h"
#include "kernels/search.h"

namespace ember {

void CpuBackend::searchsorted(const View& dst, const View& sorted, const View& values, bool right) {
  const int64_t m = sorted.sizes.empty() ? 1 : sorted.sizes.back();
  const int64_t k = values.sizes.empty() ? 1 : values.sizes.back();
  if (k == 0) return;
  const int64_t total = values.numel();
  const bool shared = sorted.numel() == m;  // one sorted row for every value row
  visit_dtype(values.dtype, [&]<class T>() {
    using A = opmath_t<T>;
    const T* s = static_cast<const T*>(sorted.data);
    const T* v = static_cast<const T*>(values.data);
    auto* out = static_cast<int64_t*>(dst.data);
    cpu::parallel_for(total, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        out[i] =
            kernels::search_row<A>(s + (shared ? 0 : (i / k) * m), m, static_cast<A>(v[i]), right);
    });
  });
}

}  // namespace ember
