// backend/cuda/cuda_scan.cu: scans along one dim (cumsum, cumprod, logcumsumexp; cummax and
// cummin with indices), one thread per (outer, inner) line scanning it in order with the combine
// rules of kernels/scan_ops.h, so each element has the CPU's order within a line. Long 1-D
// lines use a single thread: correct, not fast (a block-parallel scan is future work).
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/scan_ops.h"

namespace ember::cuda_detail {

namespace {

using kernels::scan_acc_t;

template <class T>
__device__ T from_acc(scan_acc_t<T> a) {
  if constexpr (is_reduced_float_v<T>)
    return T(static_cast<float>(a));
  else
    return static_cast<T>(a);
}

template <class T>
__global__ void scan_lines(ScanOp op, T* y, int64_t* at, const T* x, int64_t outer, int64_t n,
                           int64_t inner) {
  using A = scan_acc_t<T>;
  for (int64_t line = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; line < outer * inner;
       line += int64_t{gridDim.x} * blockDim.x) {
    const int64_t base = (line / inner) * n * inner + line % inner;
    if (op == ScanOp::Max || op == ScanOp::Min) {
      A best = static_cast<A>(x[base]);
      int64_t where = 0;
      for (int64_t k = 0; k < n; ++k) {
        const A v = static_cast<A>(x[base + k * inner]);
        if (k > 0 && kernels::scan_takes(op == ScanOp::Max, best, v)) {
          best = v;
          where = k;
        }
        y[base + k * inner] = from_acc<T>(best);
        at[base + k * inner] = where;
      }
      continue;
    }
    A acc = kernels::scan_identity<A>(op);
    for (int64_t k = 0; k < n; ++k) {
      acc = kernels::scan_combine<A>(op, acc, static_cast<A>(x[base + k * inner]));
      y[base + k * inner] = from_acc<T>(acc);
    }
  }
}

}  // namespace

void launch_scan(ScanOp op, const View& dst, const View& indices, const View& src, int64_t dim) {
  int64_t outer = 1, inner = 1, n = src.sizes.empty() ? 1 : src.sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  if (outer * n * inner == 0) return;
  visit_dtype(src.dtype, [&]<class T>() {
    EMBER_CUDA_LAUNCH(blocks_for(outer * inner), kThreads, 0, current_stream(), scan_lines<T>)
    (op, static_cast<T*>(dst.data), static_cast<int64_t*>(indices.data),
     static_cast<const T*>(src.data), outer, n, inner);
    EMBER_CUDA_CHECK_LAUNCH("scan kernel");
  });
}

}  // namespace ember::cuda_detail
