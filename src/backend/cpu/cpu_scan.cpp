// backend/cpu/cpu_scan.cpp: scans along one dim (cumsum, cumprod, logcumsumexp; cummax and
// cummin with indices), on the combine rules of kernels/scan_ops.h. A long line (1-D, or the
// last dim of few rows) of a sum, product or log-sum-exp is scanned in fixed blocks of 64 Ki
// elements on all threads: block totals, their prefix, then each block from its offset -- the
// same blocks whatever the thread count, so results do not depend on it. Other shapes scan each
// line on its own thread, columns (inner > 1) a row of accumulators at a time.
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/scan_ops.h"

namespace ember {

namespace {

using kernels::scan_acc_t;
using kernels::scan_combine;
using kernels::scan_identity;

constexpr int64_t kScanBlock = int64_t{1} << 16;

// y[i] = acc (op) x[0] (op) ... (op) x[i] for one contiguous line of n; returns the last.
template <ScanOp op, class T>
scan_acc_t<T> scan_line(T* y, const T* x, int64_t n, scan_acc_t<T> acc) {
  using A = scan_acc_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    acc = scan_combine<A>(op, acc, static_cast<A>(x[i]));
    y[i] = static_cast<T>(acc);
  }
  return acc;
}

template <ScanOp op, class T>
void scan_long_line(T* y, const T* x, int64_t n) {
  using A = scan_acc_t<T>;
  const int64_t blocks = (n + kScanBlock - 1) / kScanBlock;
  std::vector<A> offset(static_cast<size_t>(blocks) + 1, scan_identity<A>(op));
  cpu::parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      A s = scan_identity<A>(op);
      for (int64_t i = b * kScanBlock, e = std::min(n, i + kScanBlock); i < e; ++i)
        s = scan_combine<A>(op, s, static_cast<A>(x[i]));
      offset[static_cast<size_t>(b) + 1] = s;
    }
  });
  for (int64_t b = 0; b < blocks; ++b)
    offset[static_cast<size_t>(b) + 1] =
        scan_combine<A>(op, offset[static_cast<size_t>(b)], offset[static_cast<size_t>(b) + 1]);
  cpu::parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t i = b * kScanBlock;
      scan_line<op>(y + i, x + i, std::min(kScanBlock, n - i), offset[static_cast<size_t>(b)]);
    }
  });
}

template <ScanOp op, class T>
void scan_typed(T* y, const T* x, int64_t outer, int64_t n, int64_t inner) {
  using A = scan_acc_t<T>;
  if (inner == 1) {
    if (outer == 1 && n >= 2 * kScanBlock) return scan_long_line<op>(y, x, n);
    cpu::parallel_for(outer, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                      [&](int64_t r0, int64_t r1) {
                        for (int64_t r = r0; r < r1; ++r)
                          scan_line<op>(y + r * n, x + r * n, n, scan_identity<A>(op));
                      });
    return;
  }
  // Columns: one accumulator per inner position, rows read contiguously.
  cpu::parallel_for(outer, 1, [&](int64_t o0, int64_t o1) {
    std::vector<A> acc(static_cast<size_t>(inner));
    for (int64_t o = o0; o < o1; ++o) {
      std::fill(acc.begin(), acc.end(), scan_identity<A>(op));
      for (int64_t k = 0; k < n; ++k) {
        const T* xs = x + (o * n + k) * inner;
        T* ys = y + (o * n + k) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          A& a = acc[static_cast<size_t>(j)];
          a = scan_combine<A>(op, a, static_cast<A>(xs[j]));
          ys[j] = static_cast<T>(a);
        }
      }
    }
  });
}

// cummax / cummin: the running best of each line and the position it came from.
template <class T>
void scan_best(bool max, T* y, int64_t* at, const T* x, int64_t outer, int64_t n, int64_t inner) {
  using A = scan_acc_t<T>;
  cpu::parallel_for(outer * inner, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                    [&](int64_t l0, int64_t l1) {
                      for (int64_t line = l0; line < l1; ++line) {
                        const int64_t base = (line / inner) * n * inner + line % inner;
                        A best = static_cast<A>(x[base]);
                        int64_t where = 0;
                        for (int64_t k = 0; k < n; ++k) {
                          const int64_t e = base + k * inner;
                          const A v = static_cast<A>(x[e]);
                          if (k > 0 && kernels::scan_takes(max, best, v)) {
                            best = v;
                            where = k;
                          }
                          y[e] = static_cast<T>(best);
                          at[e] = where;
                        }
                      }
                    });
}

}  // namespace

void CpuBackend::scan(ScanOp op, const View& dst, const View& indices, const View& src,
                      int64_t dim) {
  int64_t outer = 1, inner = 1, n = src.sizes.empty() ? 1 : src.sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  if (outer * n * inner == 0) return;
  visit_dtype(src.dtype, [&]<class T>() {
    T* y = static_cast<T*>(dst.data);
    const T* x = static_cast<const T*>(src.data);
    if (op == ScanOp::Max || op == ScanOp::Min) {
      scan_best<T>(op == ScanOp::Max, y, static_cast<int64_t*>(indices.data), x, outer, n, inner);
    } else if constexpr (std::is_same_v<T, bool>) {
      EMBER_CHECK_KIND(DType, false, "[scan] internal: bool is summed and multiplied as int64");
    } else {
      // The op as a template argument, so that each loop compiles to its own combine. No
      // default: a new ScanOp is a -Wswitch warning here, not a silent cumsum.
      switch (op) {
        case ScanOp::Sum:
          return scan_typed<ScanOp::Sum, T>(y, x, outer, n, inner);
        case ScanOp::Prod:
          return scan_typed<ScanOp::Prod, T>(y, x, outer, n, inner);
        case ScanOp::LogSumExp:
          return scan_typed<ScanOp::LogSumExp, T>(y, x, outer, n, inner);
        case ScanOp::Max:
        case ScanOp::Min:
          break;  // scan_best above
      }
      EMBER_THROW(NotImplemented, "[scan] internal: no CPU loop for scan op ",
                  static_cast<int>(op));
    }
  });
}

}  // namespace ember
