// backend/cuda/cuda_conv.cu: im2col and col2im for convolution and pooling, and max pooling.
// im2col runs one thread per column entry; col2im one thread per image pixel summing the entries
// that read it (a gather, so no atomics and a deterministic result). Max pooling runs one thread
// per output; its backward one thread per input pixel, gathering the gradients of the outputs
// whose maximum it was (deterministic too).
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_loops.cuh"
#include "kernels/op_tables.h"

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

// Max pooling, as the CPU's: -inf at the window's first position inside the input, a later
// value wins when greater, the first NaN wins for good; index = flat position in the plane.
template <class T>
__global__ void max_pool2d_kernel(T* values, int64_t* indices, const T* image, Conv2dGeometry g,
                                  int64_t total) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += stride) {
    int64_t ox = idx % g.out_w, oy = (idx / g.out_w) % g.out_h, plane = idx / (g.out_w * g.out_h);
    const T* x = image + plane * g.height * g.width;
    int64_t y0 = oy * g.stride_h - g.pad_h, x0 = ox * g.stride_w - g.pad_w;
    int64_t ky_lo = y0 >= 0 ? 0 : (-y0 + g.dilation_h - 1) / g.dilation_h;
    int64_t kx_lo = x0 >= 0 ? 0 : (-x0 + g.dilation_w - 1) / g.dilation_w;
    T best = -static_cast<T>(INFINITY);
    int64_t best_at = (y0 + ky_lo * g.dilation_h) * g.width + x0 + kx_lo * g.dilation_w;
    bool nan = false;
    for (int64_t ky = ky_lo; ky < g.kernel_h && !nan; ++ky) {
      int64_t iy = y0 + ky * g.dilation_h;
      if (iy >= g.height) break;
      for (int64_t kx = kx_lo; kx < g.kernel_w; ++kx) {
        int64_t ix = x0 + kx * g.dilation_w;
        if (ix >= g.width) break;
        T v = x[iy * g.width + ix];
        if (v > best || isnan(v)) {
          best = v;
          best_at = iy * g.width + ix;
          if (isnan(v)) {
            nan = true;
            break;
          }
        }
      }
    }
    values[idx] = best;
    indices[idx] = best_at;
  }
}

// Smallest q with q * d >= n, for any sign of n (d > 0).
__device__ int64_t ceil_div(int64_t n, int64_t d) {
  return n >= 0 ? (n + d - 1) / d : -((-n) / d);
}

template <class T>
__global__ void max_pool2d_backward_kernel(T* grad_image, const T* grad_out, const int64_t* indices,
                                           Conv2dGeometry g, int64_t total) {
  int64_t len = g.out_h * g.out_w;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += stride) {
    int64_t ix = idx % g.width, iy = (idx / g.width) % g.height, plane = idx / (g.width * g.height);
    int64_t at = iy * g.width + ix;
    // Outputs whose window spans this pixel: oy * stride_h - pad_h <= iy and
    // oy * stride_h - pad_h + (kernel_h - 1) * dilation_h >= iy.
    int64_t oy_lo =
        max(int64_t{0}, ceil_div(iy + g.pad_h - (g.kernel_h - 1) * g.dilation_h, g.stride_h));
    int64_t oy_hi = min(g.out_h - 1, (iy + g.pad_h) / g.stride_h);
    int64_t ox_lo =
        max(int64_t{0}, ceil_div(ix + g.pad_w - (g.kernel_w - 1) * g.dilation_w, g.stride_w));
    int64_t ox_hi = min(g.out_w - 1, (ix + g.pad_w) / g.stride_w);
    const int64_t* ind = indices + plane * len;
    const T* gy = grad_out + plane * len;
    T acc = 0;
    for (int64_t oy = oy_lo; oy <= oy_hi; ++oy)
      for (int64_t ox = ox_lo; ox <= ox_hi; ++ox)
        if (ind[oy * g.out_w + ox] == at) acc += gy[oy * g.out_w + ox];
    grad_image[idx] = acc;
  }
}

}  // namespace

void launch_im2col(const View& cols, const View& image, const Conv2dGeometry& g) {
  int64_t total = g.batch * g.channels * g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  dispatch_kind<OpKind::Float>(image.dtype, "im2col", [&]<class T>() {
    if (total == 0) return;
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), im2col_kernel<T>)
    (static_cast<T*>(cols.data), static_cast<const T*>(image.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("im2col kernel");
  });
}

void launch_col2im(const View& image, const View& cols, const Conv2dGeometry& g) {
  int64_t total = g.batch * g.channels * g.height * g.width;
  dispatch_kind<OpKind::Float>(image.dtype, "col2im", [&]<class T>() {
    if (total == 0) return;
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), col2im_kernel<T>)
    (static_cast<T*>(image.data), static_cast<const T*>(cols.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("col2im kernel");
  });
}

void launch_max_pool2d(const View& values, const View& indices, const View& image,
                       const Conv2dGeometry& g) {
  int64_t total = g.batch * g.channels * g.out_h * g.out_w;
  dispatch_kind<OpKind::Float>(image.dtype, "max_pool2d", [&]<class T>() {
    if (total == 0) return;
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(), max_pool2d_kernel<T>)
    (static_cast<T*>(values.data), static_cast<int64_t*>(indices.data),
     static_cast<const T*>(image.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("max_pool2d kernel");
  });
}

void launch_max_pool2d_backward(const View& grad_image, const View& grad_out, const View& indices,
                                const Conv2dGeometry& g) {
  int64_t total = g.batch * g.channels * g.height * g.width;
  dispatch_kind<OpKind::Float>(grad_image.dtype, "max_pool2d_backward", [&]<class T>() {
    if (total == 0) return;
    EMBER_CUDA_LAUNCH(blocks_for(total), kThreads, 0, current_stream(),
                      max_pool2d_backward_kernel<T>)
    (static_cast<T*>(grad_image.data), static_cast<const T*>(grad_out.data),
     static_cast<const int64_t*>(indices.data), g, total);
    EMBER_CUDA_CHECK_LAUNCH("max_pool2d backward kernel");
  });
}

}  // namespace ember::cuda_detail
