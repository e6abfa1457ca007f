// backend/cpu/cpu_scan.cpp: cumsum along one dim. A long line (1-D, or the last dim of few rows)
// is scanned in fixed blocks of 64 Ki elements on all threads: block totals, their prefix, then
// each block from its offset -- the same blocks whatever the thread count, so results do not
// depend on it. Other shapes scan each line on its own thread, columns (inner > 1) a row of
// accumulators at a time.
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"

namespace ember {

namespace {

constexpr int64_t kScanBlock = int64_t{1} << 16;

// The accumulator of T: float64 for the floating dtypes, T (wrapping) for integers.
template <class T>
using scan_acc_t = std::conditional_t<is_float_v<T>, double, T>;

template <class T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// y[i] = acc + x[0] + ... + x[i] for one contiguous line of n; returns the final sum.
template <class T>
scan_acc_t<T> scan_line(T* y, const T* x, int64_t n, scan_acc_t<T> acc) {
  for (int64_t i = 0; i < n; ++i) {
    acc = add_wrapping(acc, static_cast<scan_acc_t<T>>(x[i]));
    y[i] = static_cast<T>(acc);
  }
  return acc;
}

template <class T>
void scan_long_line(T* y, const T* x, int64_t n) {
  using A = scan_acc_t<T>;
  const int64_t blocks = (n + kScanBlock - 1) / kScanBlock;
  std::vector<A> offset(static_cast<size_t>(blocks) + 1, A(0));
  cpu::parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      A s = A(0);
      for (int64_t i = b * kScanBlock, e = std::min(n, i + kScanBlock); i < e; ++i)
        s = add_wrapping(s, static_cast<A>(x[i]));
      offset[static_cast<size_t>(b) + 1] = s;
    }
  });
  for (int64_t b = 0; b < blocks; ++b)
    offset[static_cast<size_t>(b) + 1] =
        add_wrapping(offset[static_cast<size_t>(b)], offset[static_cast<size_t>(b) + 1]);
  cpu::parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t i = b * kScanBlock;
      scan_line(y + i, x + i, std::min(kScanBlock, n - i), offset[static_cast<size_t>(b)]);
    }
  });
}

template <class T>
void cumsum_typed(T* y, const T* x, int64_t outer, int64_t n, int64_t inner) {
  using A = scan_acc_t<T>;
  if (inner == 1) {
    if (outer == 1 && n >= 2 * kScanBlock) return scan_long_line(y, x, n);
    cpu::parallel_for(outer, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                      [&](int64_t r0, int64_t r1) {
                        for (int64_t r = r0; r < r1; ++r) scan_line(y + r * n, x + r * n, n, A(0));
                      });
    return;
  }
  // Columns: one accumulator per inner position, rows read contiguously.
  cpu::parallel_for(outer, 1, [&](int64_t o0, int64_t o1) {
    std::vector<A> acc(static_cast<size_t>(inner));
    for (int64_t o = o0; o < o1; ++o) {
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t k = 0; k < n; ++k) {
        const T* xs = x + (o * n + k) * inner;
        T* ys = y + (o * n + k) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          acc[static_cast<size_t>(j)] =
              add_wrapping(acc[static_cast<size_t>(j)], static_cast<A>(xs[j]));
          ys[j] = static_cast<T>(acc[static_cast<size_t>(j)]);
        }
      }
    }
  });
}

}  // namespace

void CpuBackend::cumsum(const View& dst, const View& src, int64_t dim) {
  int64_t outer = 1, inner = 1, n = src.sizes.empty() ? 1 : src.sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  if (outer * n * inner == 0) return;
  visit_dtype(src.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>)
      EMBER_CHECK_KIND(DType, false, "[cumsum] internal: bool is summed as int64");
    else
      cumsum_typed<T>(static_cast<T*>(dst.data), static_cast<const T*>(src.data), outer, n, inner);
  });
}

}  // namespace ember
