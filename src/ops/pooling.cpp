// ops/pooling.cpp: max_pool2d (the backend's window maxima and their input positions, whose
// backward adds the gradient there), avg_pool2d (window sums over unfolded columns) and
// adaptive_avg_pool2d (two averaging matrices), with PyTorch's output sizes, ceil_mode and
// padding rules.
#include <algorithm>
#include <limits>
#include <vector>

#include "autograd/function.h"
#include "core/make_tensor.h"
#include "ember/ops.h"
#include "ops/image_ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

// PyTorch's pooling_output_shape for one dim.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                    bool ceil_mode) {
  int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks a pooling's arguments and returns its geometry over x: (N, C, H, W).
Conv2dGeometry pool_geometry(const char* op, const Tensor& x, Size2d kernel, Size2d stride,
                             Size2d pad, Size2d dilation, bool ceil_mode) {
  EMBER_CHECK(kernel.h > 0 && kernel.w > 0, "[", op,
              "] kernel_size must be greater than zero, "
              "but got kernel_size=(",
              kernel.h, ", ", kernel.w, ")");
  EMBER_CHECK(stride.h > 0 && stride.w > 0, "[", op,
              "] stride must be greater than zero, but "
              "got stride=(",
              stride.h, ", ", stride.w, ")");
  EMBER_CHECK(dilation.h > 0 && dilation.w > 0, "[", op,
              "] dilation must be greater than zero, "
              "but got dilation=(",
              dilation.h, ", ", dilation.w, ")");
  int64_t eff_h = dilation.h * (kernel.h - 1) + 1, eff_w = dilation.w * (kernel.w - 1) + 1;
  EMBER_CHECK(pad.h >= 0 && pad.w >= 0 && pad.h <= eff_h / 2 && pad.w <= eff_w / 2, "[", op,
              "] pad should be at most half of effective kernel size, but got pad=(", pad.h, ", ",
              pad.w, "), kernel_size=(", kernel.h, ", ", kernel.w, ") and dilation=(", dilation.h,
              ", ", dilation.w, ")");
  Conv2dGeometry g = image::window_geometry(x.size(0), x.size(1), x.size(2), x.size(3), kernel,
                                            stride, pad, dilation);
  g.out_h = pooled_size(g.height, kernel.h, stride.h, pad.h, dilation.h, ceil_mode);
  g.out_w = pooled_size(g.width, kernel.w, stride.w, pad.w, dilation.w, ceil_mode);
  EMBER_CHECK_KIND(Shape, g.out_h >= 1 && g.out_w >= 1, "[", op, "] Given input size: (",
                   g.channels, "x", g.height, "x", g.width, "). Calculated output size: (",
                   g.channels, "x", g.out_h, "x", g.out_w, "). Output size is too small");
  return g;
}

Size2d stride_or_kernel(Size2d stride, Size2d kernel) {
  return stride == Size2d(0) ? kernel : stride;
}

Tensor unbatch_like(const Tensor& out, const Tensor& input) {
  return input.dim() == 3 ? out.squeeze(0) : out;
}

}  // namespace

Tensor max_pool2d(const Tensor& input, Size2d kernel, const MaxPool2dOptions& o) {
  image::check_floating("max_pool2d", input);
  if (is_reduced_float(input.dtype()))
    return max_pool2d(to_opmath(input), kernel, o).to(input.dtype());
  Tensor x = image::as_batched("max_pool2d", input).contiguous();
  Conv2dGeometry g = pool_geometry("max_pool2d", x, kernel, stride_or_kernel(o.stride, kernel),
                                   o.padding, o.dilation, o.ceil_mode);
  Shape out_shape{g.batch, g.channels, g.out_h, g.out_w};
  Tensor values = make_tensor(out_shape, x.dtype(), x.device());
  Tensor indices = make_tensor(out_shape, kInt64, x.device());
  if (values.numel() > 0)
    backend_for(x).max_pool2d(view_of(values), view_of(indices), view_of(x), g);
  Tensor out = unbatch_like(values, input);
  autograd::record(
      "MaxPool2DWithIndicesBackward0", {&input}, out,
      [indices, g, in_shape = input.sizes()](const Tensor& grad) {
        Tensor gy = grad.reshape({g.batch, g.channels, g.out_h, g.out_w}).contiguous();
        Tensor gx = make_tensor({g.batch, g.channels, g.height, g.width}, gy.dtype(), gy.device());
        if (gx.numel() > 0)
          backend_for(gx).max_pool2d_backward(view_of(gx), view_of(gy), view_of(indices), g);
        return std::vector<Tensor>{gx.view(in_shape)};
      });
  return out;
}

Tensor avg_pool2d(const Tensor& input, Size2d kernel, const AvgPool2dOptions& o) {
  image::check_floating("avg_pool2d", input);
  if (is_reduced_float(input.dtype()))
    return avg_pool2d(to_opmath(input), kernel, o).to(input.dtype());
  Tensor x = image::as_batched("avg_pool2d", input);
  Conv2dGeometry g = pool_geometry("avg_pool2d", x, kernel, stride_or_kernel(o.stride, kernel),
                                   o.padding, 1, o.ceil_mode);
  int64_t n = g.batch, c = g.channels, taps = g.kernel_h * g.kernel_w, len = g.out_h * g.out_w;
  // Each window's divisor: its extent clipped to the padded input (count_include_pad), or to the
  // input itself.
  std::vector<double> divisor(len);
  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      int64_t y0 = oy * g.stride_h - g.pad_h, x0 = ox * g.stride_w - g.pad_w;
      int64_t y1 = std::min(y0 + g.kernel_h, g.height + g.pad_h);
      int64_t x1 = std::min(x0 + g.kernel_w, g.width + g.pad_w);
      if (!o.count_include_pad) {
        y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
        y1 = std::min(y1, g.height), x1 = std::min(x1, g.width);
      }
      divisor[oy * g.out_w + ox] = static_cast<double>((y1 - y0) * (x1 - x0));
    }
  }
  Tensor div_t = from_vector(divisor, Shape{len}, {.dtype = x.dtype(), .device = x.device()});
  Tensor sums = image::unfold(x, g).view({n, c, taps, len}).sum({2});
  return unbatch_like((sums / div_t).view({n, c, g.out_h, g.out_w}), input);
}

namespace {

// (out, in): row i averages inputs floor(i in / out) up to ceil((i + 1) in / out).
Tensor averaging_matrix(int64_t out, int64_t in, const Tensor& like) {
  std::vector<double> m(out * in, 0.0);
  for (int64_t i = 0; i < out; ++i) {
    int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t j = start; j < end; ++j) m[i * in + j] = 1.0 / static_cast<double>(end - start);
  }
  return from_vector(m, Shape{out, in}, {.dtype = like.dtype(), .device = like.device()});
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, Size2d output_size) {
  image::check_floating("adaptive_avg_pool2d", input);
  if (is_reduced_float(input.dtype()))
    return adaptive_avg_pool2d(to_opmath(input), output_size).to(input.dtype());
  Tensor x = image::as_batched("adaptive_avg_pool2d", input);
  EMBER_CHECK(output_size.h > 0 && output_size.w > 0,
              "[adaptive_avg_pool2d] output_size must "
              "be positive, got (",
              output_size.h, ", ", output_size.w, ")");
  EMBER_CHECK_KIND(Shape, x.size(1) > 0 && x.size(2) > 0 && x.size(3) > 0,
                   "[adaptive_avg_pool2d] "
                   "Expected input to have non-zero size for non-batch dimensions, but input has "
                   "sizes ",
                   shape_str(input.sizes()));
  // The windows are separable: average the columns, then the rows.
  Tensor rows = averaging_matrix(output_size.h, x.size(2), x);
  Tensor cols = averaging_matrix(output_size.w, x.size(3), x);
  Tensor by_cols = matmul(x, cols.t()).transpose(2, 3).contiguous();    // (N, C, ow, H)
  Tensor out = matmul(by_cols, rows.t()).transpose(2, 3).contiguous();  // (N, C, oh, ow)
  return unbatch_like(out, input);
}

}  // namespace ember::nn::functional
