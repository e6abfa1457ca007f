// backend/cuda/cuda_search.cu: searchsorted -- one thread per value, each a binary search of its
// sorted row (kernels/search.h, the CPU's comparisons).
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/search.h"

namespace ember::cuda_detail {

namespace {

template <class T, class A>
__global__ void search_values(int64_t* out, const T* sorted, const T* values, int64_t total,
                              int64_t m, int64_t k, bool shared, bool right) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = kernels::search_row<A>(sorted + (shared ? 0 : (i / k) * m), m,
                                    static_cast<A>(values[i]), right);
}

}  // namespace

void launch_searchsorted(const View& dst, const View& sorted, const View& values, bool right) {
  const int64_t m = sorted.sizes.empty() ? 1 : sorted.sizes.back();
  const int64_t k = values.sizes.empty() ? 1 : values.sizes.back();
  const int64_t total = values.numel();
  if (k == 0 || total == 0) return;
  visit_dtype(values.dtype, [&]<class T>() {
    using A = std::conditional_t<is_reduced_float_v<T>, float, T>;
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), search_values<T, A>)
    (static_cast<int64_t*>(dst.data), static_cast<const T*>(sorted.data),
     static_cast<const T*>(values.data), total, m, k, sorted.numel() == m, right);
    EMBER_CUDA_CHECK_LAUNCH("searchsorted kernel");
  });
}

}  // namespace ember::cuda_detail
