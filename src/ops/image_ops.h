// ops/image_ops.h: what the image layers (conv.cpp, pooling.cpp) share -- batching of unbatched
// inputs, window geometry checks, and im2col / col2im as tensor operations.
#pragma once

#include "core/backend.h"
#include "ember/nn_ops.h"

namespace ember::image {

// input (N, C, H, W) as it is, or (C, H, W) as a batch of one; throws naming `op` for other
// ranks.
Tensor as_batched(const char* op, const Tensor& input);

// Throws naming `op` unless t is float32 or float64.
void check_floating(const char* op, const Tensor& t);

// Windows of `kernel` over an (n, c, h, w) image; out_h and out_w are the caller's to set.
Conv2dGeometry window_geometry(int64_t n, int64_t c, int64_t h, int64_t w, nn::Size2d kernel,
                               nn::Size2d stride, nn::Size2d pad, nn::Size2d dilation);
// conv2d's output size along one dim.
inline int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                             int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// image: (N, C, H, W) -> (N, C * kh * kw, oh * ow) columns, not recorded for autograd.
Tensor im2col(const Tensor& image, const Conv2dGeometry& g);
// cols: (N, C * kh * kw, oh * ow) -> (N, C, H, W), each pixel the sum of the entries read from it.
Tensor col2im(const Tensor& cols, const Conv2dGeometry& g);
// im2col recorded for autograd (its gradient is col2im).
Tensor unfold(const Tensor& image, const Conv2dGeometry& g);
// col2im recorded for autograd (its gradient is im2col); g.out_h and g.out_w are used as given.
Tensor fold(const Tensor& cols, const Conv2dGeometry& g);

}  // namespace ember::image
