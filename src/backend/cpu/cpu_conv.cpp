// backend/cpu/cpu_conv.cpp: im2col and col2im on the CPU -- plain loops over one image plane per
// (batch, channel) pair, run in parallel over those pairs when the work is large.
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"

namespace ember {

namespace {

// Planes per thread chunk, so that a chunk moves about kGrainSize column entries.
int64_t plane_grain(const Conv2dGeometry& g) {
  int64_t per_plane = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  return std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(per_plane, 1));
}

// The output positions [lo, hi) whose tap at `offset` (ki * dilation - pad) lands inside
// [0, extent): lo * stride + offset >= 0 and (hi - 1) * stride + offset < extent.
void valid_range(int64_t offset, int64_t stride, int64_t extent, int64_t out, int64_t& lo,
                 int64_t& hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  hi = extent - offset <= 0 ? 0 : (extent - offset + stride - 1) / stride;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

// One (height, width) plane into its (kernel_h * kernel_w, out_h * out_w) columns: one row per
// kernel tap, zero where the tap reads padding.
template <class T>
void im2col_plane(T* cols, const T* image, const Conv2dGeometry& g) {
  int64_t len = g.out_h * g.out_w;
  for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
    for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
      T* row = cols + (ki * g.kernel_w + kj) * len;
      int64_t x_off = kj * g.dilation_w - g.pad_w, x_lo, x_hi;
      valid_range(x_off, g.stride_w, g.width, g.out_w, x_lo, x_hi);
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        T* out = row + oy * g.out_w;
        int64_t iy = oy * g.stride_h - g.pad_h + ki * g.dilation_h;
        if (iy < 0 || iy >= g.height) {
          std::fill(out, out + g.out_w, T(0));
          continue;
        }
        const T* in = image + iy * g.width;
        std::fill(out, out + x_lo, T(0));
        for (int64_t ox = x_lo; ox < x_hi; ++ox) out[ox] = in[ox * g.stride_w + x_off];
        std::fill(out + x_hi, out + g.out_w, T(0));
      }
    }
  }
}

// The adjoint of im2col_plane: each column entry added onto the pixel it was read from.
template <class T>
void col2im_plane(T* image, const T* cols, const Conv2dGeometry& g) {
  int64_t len = g.out_h * g.out_w;
  std::fill(image, image + g.height * g.width, T(0));
  for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
    for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
      const T* row = cols + (ki * g.kernel_w + kj) * len;
      int64_t x_off = kj * g.dilation_w - g.pad_w, x_lo, x_hi;
      valid_range(x_off, g.stride_w, g.width, g.out_w, x_lo, x_hi);
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        int64_t iy = oy * g.stride_h - g.pad_h + ki * g.dilation_h;
        if (iy < 0 || iy >= g.height) continue;
        const T* in = row + oy * g.out_w;
        T* out = image + iy * g.width;
        for (int64_t ox = x_lo; ox < x_hi; ++ox) out[ox * g.stride_w + x_off] += in[ox];
      }
    }
  }
}

void check_float(const char* op, DType dtype) {
  EMBER_CHECK_KIND(DType, dtype == kFloat32 || dtype == kFloat64, "[", op,
                   "] expected float32 or float64, got ", dtype);
}

}  // namespace

void CpuBackend::im2col(const View& cols, const View& image, const Conv2dGeometry& g) {
  check_float("im2col", image.dtype);
  int64_t plane = g.height * g.width, col_plane = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  visit_dtype(image.dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* c = static_cast<T*>(cols.data);
      const T* x = static_cast<const T*>(image.data);
      cpu::parallel_for(g.batch * g.channels, plane_grain(g), [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) im2col_plane(c + p * col_plane, x + p * plane, g);
      });
    }
  });
}

void CpuBackend::col2im(const View& image, const View& cols, const Conv2dGeometry& g) {
  check_float("col2im", image.dtype);
  int64_t plane = g.height * g.width, col_plane = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  visit_dtype(image.dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* x = static_cast<T*>(image.data);
      const T* c = static_cast<const T*>(cols.data);
      cpu::parallel_for(g.batch * g.channels, plane_grain(g), [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) col2im_plane(x + p * plane, c + p * col_plane, g);
      });
    }
  });
}

}  // namespace ember
