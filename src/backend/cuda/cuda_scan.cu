// backend/cuda/cuda_scan.cu: cumsum along one dim, one thread per (outer, inner) line scanning it
// in order (float64 accumulators for the floating dtypes, wrapping integers), so each element's
// sum has the CPU's order within a line. Long 1-D lines use a single thread: correct, not fast
// (a block-parallel scan is future work).
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

template <class T>
using scan_acc_t = std::conditional_t<is_float_v<T>, double, T>;

template <class T>
__global__ void cumsum_lines(T* y, const T* x, int64_t outer, int64_t n, int64_t inner) {
  using A = scan_acc_t<T>;
  for (int64_t line = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; line < outer * inner;
       line += int64_t{gridDim.x} * blockDim.x) {
    int64_t o = line / inner, j = line % inner;
    A acc = A(0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t at = (o * n + k) * inner + j;
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        acc = static_cast<T>(static_cast<U>(acc) + static_cast<U>(x[at]));
        y[at] = acc;
      } else if constexpr (is_reduced_float_v<T>) {
        acc += static_cast<double>(static_cast<float>(x[at]));
        y[at] = T(static_cast<float>(acc));
      } else {
        acc += static_cast<A>(x[at]);
        y[at] = static_cast<T>(acc);
      }
    }
  }
}

}  // namespace

void launch_cumsum(const View& dst, const View& src, int64_t dim) {
  int64_t outer = 1, inner = 1, n = src.sizes.empty() ? 1 : src.sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= src.sizes[d];
  for (size_t d = dim + 1; d < src.sizes.size(); ++d) inner *= src.sizes[d];
  if (outer * n * inner == 0) return;
  visit_dtype(src.dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      cumsum_lines<T><<<blocks_for(outer * inner), kThreads, 0, current_stream()>>>(
          static_cast<T*>(dst.data), static_cast<const T*>(src.data), outer, n, inner);
      EMBER_CUDA_CHECK_LAUNCH("cumsum kernel");
    }
  });
}

}  // namespace ember::cuda_detail
