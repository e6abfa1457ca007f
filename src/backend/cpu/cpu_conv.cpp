// backend/cpu/cpu_conv.cpp: the window kernels of the image layers on the CPU -- im2col, col2im
// and max pooling (each window's maximum and its flat input position in one pass; the backward
// adds each output's gradient there) -- plain loops over one image plane per (batch, channel)
// pair, run in parallel over those pairs when the work is large.
#include <algorithm>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_loops.h"
#include "kernels/op_tables.h"

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

// The first tap of a window starting at `start` that lies at or after 0 (a division only where
// the window starts in padding).
inline int64_t first_tap(int64_t start, int64_t dilation) {
  return start >= 0 ? 0 : (-start + dilation - 1) / dilation;
}

// The taps [lo, hi) of a window starting at `start` (may be negative: padding) that land inside
// [0, extent): start + k * dilation in range.
void tap_range(int64_t start, int64_t dilation, int64_t kernel, int64_t extent, int64_t& lo,
               int64_t& hi) {
  lo = first_tap(start, dilation);
  hi = start >= extent ? 0 : std::min(kernel, (extent - start + dilation - 1) / dilation);
  hi = std::max(hi, lo);
}

// One comparison of a max-pool window: v, at flat position at, replaces the maximum so far (b at
// position a) when greater, or when NaN while b is not. Bitwise, not short-circuit, and selects:
// no branch on the data. v != v: NaN.
template <class T>
inline void pool_step(T v, int64_t at, T& b, int64_t& a) {
  const bool take = ((v > b) | (v != v)) & (b == b);
  b = cpu::select(take, v, b);
  a = cpu::select(take, at, a);
}

// One tap of a row of windows: outputs [lo, hi) compare in[ox * stride] (flat position
// at + ox * stride) with their maximum so far. Locals and restrict keep the loop free of reloads.
template <class T>
void pool_tap(const T* __restrict in, int64_t at, int64_t stride, int64_t lo, int64_t hi,
              T* __restrict best, int64_t* __restrict best_at) {
  for (int64_t ox = lo; ox < hi; ++ox) {
    T b = best[ox];
    int64_t a = best_at[ox];
    pool_step(in[ox * stride], at + ox * stride, b, a);
    best[ox] = b;
    best_at[ox] = a;
  }
}

// pool_tap for windows of width 2 and stride 2: output ox compares in[2 ox], then in[2 ox + 1].
template <class T>
void pool_pairs(const T* __restrict in, int64_t at, int64_t n, T* __restrict best,
                int64_t* __restrict best_at) {
  for (int64_t ox = 0; ox < n; ++ox) {
    T b = best[ox];
    int64_t a = best_at[ox];
    pool_step(in[2 * ox], at + 2 * ox, b, a);
    pool_step(in[2 * ox + 1], at + 2 * ox + 1, b, a);
    best[ox] = b;
    best_at[ox] = a;
  }
}

// One plane's window maxima, a row of outputs at a time: for each tap in row-major order, every
// output whose window has that tap inside the input compares it (branch-free selects, so random
// data costs no mispredictions). As PyTorch: each output starts from -inf at its window's first
// position inside the input, a later value wins when greater, and the first NaN wins for good.
// best and best_at hold out_w entries.
template <class T>
void max_pool_plane(T* values, int64_t* indices, const T* x, const Conv2dGeometry& g, T* best,
                    int64_t* best_at) {
  // The usual 2-wide windows side by side, all inside the input along the width.
  const bool pairs = g.kernel_w == 2 && g.stride_w == 2 && g.dilation_w == 1 && g.pad_w == 0 &&
                     2 * g.out_w <= g.width;
  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    const int64_t y0 = oy * g.stride_h - g.pad_h;
    int64_t ky_lo, ky_hi;
    tap_range(y0, g.dilation_h, g.kernel_h, g.height, ky_lo, ky_hi);
    const int64_t first_row = (y0 + ky_lo * g.dilation_h) * g.width;
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      const int64_t x0 = ox * g.stride_w - g.pad_w;
      best[ox] = -std::numeric_limits<T>::infinity();
      best_at[ox] = first_row + x0 + first_tap(x0, g.dilation_w) * g.dilation_w;
    }
    for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
      const int64_t row = (y0 + ky * g.dilation_h) * g.width;
      if (pairs) {  // both taps of every window at once: interleaved loads that vectorize
        pool_pairs(x + row, row, g.out_w, best, best_at);
        continue;
      }
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
        const int64_t x_off = kx * g.dilation_w - g.pad_w;
        int64_t lo, hi;
        valid_range(x_off, g.stride_w, g.width, g.out_w, lo, hi);
        pool_tap(x + row + x_off, row + x_off, g.stride_w, lo, hi, best, best_at);
      }
    }
    std::copy_n(best, g.out_w, values + oy * g.out_w);
    std::copy_n(best_at, g.out_w, indices + oy * g.out_w);
  }
}

}  // namespace

void CpuBackend::im2col(const View& cols, const View& image, const Conv2dGeometry& g) {
  int64_t plane = g.height * g.width, col_plane = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  dispatch_kind<OpKind::Float>(image.dtype, "im2col", [&]<class T>() {
    T* c = static_cast<T*>(cols.data);
    const T* x = static_cast<const T*>(image.data);
    cpu::parallel_for(g.batch * g.channels, plane_grain(g), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) im2col_plane(c + p * col_plane, x + p * plane, g);
    });
  });
}

void CpuBackend::col2im(const View& image, const View& cols, const Conv2dGeometry& g) {
  int64_t plane = g.height * g.width, col_plane = g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  dispatch_kind<OpKind::Float>(image.dtype, "col2im", [&]<class T>() {
    T* x = static_cast<T*>(image.data);
    const T* c = static_cast<const T*>(cols.data);
    cpu::parallel_for(g.batch * g.channels, plane_grain(g), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) col2im_plane(x + p * plane, c + p * col_plane, g);
    });
  });
}

void CpuBackend::max_pool2d(const View& values, const View& indices, const View& image,
                            const Conv2dGeometry& g) {
  const int64_t plane = g.height * g.width, out_plane = g.out_h * g.out_w;
  dispatch_kind<OpKind::Float>(image.dtype, "max_pool2d", [&]<class T>() {
    T* v = static_cast<T*>(values.data);
    int64_t* idx = static_cast<int64_t*>(indices.data);
    const T* x = static_cast<const T*>(image.data);
    cpu::parallel_for(g.batch * g.channels, plane_grain(g), [&](int64_t b, int64_t e) {
      std::vector<T> best(g.out_w);
      std::vector<int64_t> best_at(g.out_w);
      for (int64_t p = b; p < e; ++p)
        max_pool_plane(v + p * out_plane, idx + p * out_plane, x + p * plane, g, best.data(),
                       best_at.data());
    });
  });
}

void CpuBackend::max_pool2d_backward(const View& grad_image, const View& grad_out,
                                     const View& indices, const Conv2dGeometry& g) {
  const int64_t plane = g.height * g.width, out_plane = g.out_h * g.out_w;
  dispatch_kind<OpKind::Float>(grad_image.dtype, "max_pool2d_backward", [&]<class T>() {
    T* gx = static_cast<T*>(grad_image.data);
    const T* gy = static_cast<const T*>(grad_out.data);
    const int64_t* idx = static_cast<const int64_t*>(indices.data);
    cpu::parallel_for(g.batch * g.channels, plane_grain(g), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        T* dst = gx + p * plane;
        std::fill_n(dst, plane, T(0));
        const T* src = gy + p * out_plane;
        const int64_t* at = idx + p * out_plane;
        for (int64_t i = 0; i < out_plane; ++i) dst[at[i]] += src[i];
      }
    });
  });
}

}  // namespace ember
