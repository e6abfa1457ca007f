// backend/cuda/cuda_copy.cu: same-device copies (strided, broadcasting, dtype-converting) and
// fills. A dense copy of one dtype is a cudaMemcpyAsync; everything else one strided kernel.
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/scalar_math.h"

namespace ember::cuda_detail {

namespace {

template <class To, class From>
__global__ void copy_strided(To* out, const From* in, OffsetCalc<2> oc, int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    int64_t off[2];
    oc.offsets(i, off);
    out[off[0]] = math::cast<To>(in[off[1]]);
  }
}

template <class T>
__global__ void fill_strided(T* out, OffsetCalc<1> oc, int64_t n, T value) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    int64_t off[1];
    oc.offsets(i, off);
    out[off[0]] = value;
  }
}

}  // namespace

void launch_copy(const View& dst, const View& src) {
  int64_t n = dst.numel();
  if (n == 0) return;
  OffsetCalc<2> oc = make_offset_calc<2>({&dst, &src});
  cudaStream_t stream = current_stream();
  if (dst.dtype == src.dtype && oc.all_contiguous()) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, n * element_size(dst.dtype),
                                     cudaMemcpyDeviceToDevice, stream),
                     "copy (cuda)");
    return;
  }
  visit_dtype(dst.dtype, [&]<class To>() {
    visit_dtype(src.dtype, [&]<class From>() {
      EMBER_CUDA_LAUNCH(blocks_for(n), kThreads, 0, stream, copy_strided<To, From>)
      (static_cast<To*>(dst.data), static_cast<const From*>(src.data), oc, n);
      EMBER_CUDA_CHECK_LAUNCH("copy kernel");
    });
  });
}

void launch_fill(const View& dst, const Scalar& value) {
  int64_t n = dst.numel();
  if (n == 0) return;
  OffsetCalc<1> oc = make_offset_calc<1>({&dst});
  visit_dtype(dst.dtype, [&]<class T>() {
    EMBER_CUDA_LAUNCH(blocks_for(n), kThreads, 0, current_stream(), fill_strided<T>)
    (static_cast<T*>(dst.data), oc, n, value.to<T>());
    EMBER_CUDA_CHECK_LAUNCH("fill kernel");
  });
}

}  // namespace ember::cuda_detail
