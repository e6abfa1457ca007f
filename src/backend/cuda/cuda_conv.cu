// backend/cuda/cuda_conv.cu: im2col and col2im for convolution and pooling. im2col runs one
// thread per column entry; col2im one thread per image pixel summing the entries that read it (a
// gather, so no atomics and a deterministic result).
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"

namespace ember::cuda_detail {

namespace {

template <class T>
__global__ void im2col_kernel(T* cols, const T* image, Conv2dGeometry g, int64_t total) {
  int64_t len = g.out_h * g.out_w, taps = g.kernel_h * g.kernel_w;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += stride) {
    int64_t pos = idx % len, tap = (idx / len) % taps, plane = idx / (len * taps);
    int64_t oy = pos / g.out_w, ox = pos % g.out_w, ki = tap / g.kernel_w, kj = tap % g.kernel_w;
    int64_t iy = oy * g.stride_h - g.pad_h + ki * g.dilation_h;
    int64_t ix = ox * g.stride_w - g.pad_w + kj * g.dilation_w;
    bool inside = iy >= 0 && iy < g.height && ix >= 0 && ix < g.width;
    cols[idx] = inside ? image[(plane * g.height + iy) * g.width + ix] : T(0);
  }
}

template <class T>
__global__ void col2im_kernel(T* image, const T* cols, Conv2dGeometry g, int64_t total) {
  int64_t len = g.out_h * g.out_w, taps = g.kernel_h * g.kernel_w;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += stride) {
    int64_t ix = idx % g.width, iy = (idx / g.width) % g.height, plane = idx / (g.width * g.height);
    const T* c = cols + plane * taps * len;
    T acc = 0;
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      int64_t ty = iy + g.pad_h - ki * g.dilation_h;  // = oy * stride_h
      if (ty < 0 || ty % g.stride_h != 0) continue;
      int64_t oy = ty / g.stride_h;
      if (oy >= g.out_h) continue;
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        int64_t tx = ix + g.pad_w - kj * g.dilation_w;
        if (tx < 0 || tx % g.stride_w != 0) continue;
        int64_t ox = tx / g.stride_w;
        if (ox >= g.out_w) continue;
        acc += c[(ki * g.kernel_w + kj) * len + oy * g.out_w + ox];
      }
    }
    image[idx] = acc;
  }
}

void check_float(const char* op, DType dtype) {
  EMBER_CHECK_KIND(DType, is_floating_point(dtype), "[", op, "] expected float32 or float64, got ",
                   dtype);
}

}  // namespace

void launch_im2col(const View& cols, const View& image, const Conv2dGeometry& g) {
  check_float("im2col", image.dtype);
  int64_t total = g.batch * g.channels * g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  if (total == 0) return;
  auto run = [&]<class T>() {
    im2col_kernel<T><<<blocks_for(total), kThreads, 0, current_stream()>>>(
        static_cast<T*>(cols.data), static_cast<const T*>(image.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("im2col kernel");
  };
  if (image.dtype == kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
}

void launch_col2im(const View& image, const View& cols, const Conv2dGeometry& g) {
  check_float("col2im", image.dtype);
  int64_t total = g.batch * g.channels * g.height * g.width;
  if (total == 0) return;
  auto run = [&]<class T>() {
    col2im_kernel<T><<<blocks_for(total), kThreads, 0, current_stream()>>>(
        static_cast<T*>(image.data), static_cast<const T*>(cols.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("col2im kernel");
  };
  if (image.dtype == kFloat32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
}

}  // namespace ember::cuda_detail
