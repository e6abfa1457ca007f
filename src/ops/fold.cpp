// ops/fold.cpp: F::unfold (im2col) and F::fold (col2im) as PyTorch's torch.nn.functional.unfold
// and fold, each the other's gradient, on the backend's im2col / col2im.
#include "autograd/function.h"
#include "ember/ops.h"
#include "ops/image_ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

// The geometry of windows of `kernel` over an (n, c, h, w) image, checked as PyTorch does.
Conv2dGeometry fold_geometry(const char* op, int64_t n, int64_t c, int64_t h, int64_t w,
                             Size2d kernel, const FoldOptions& o) {
  EMBER_CHECK(kernel.h > 0 && kernel.w > 0, "[", op,
              "] kernel_size should be greater than zero, but got (", kernel.h, ", ", kernel.w,
              ")");
  EMBER_CHECK(o.stride.h > 0 && o.stride.w > 0, "[", op,
              "] stride should be greater than zero, but got (", o.stride.h, ", ", o.stride.w, ")");
  EMBER_CHECK(o.dilation.h > 0 && o.dilation.w > 0, "[", op,
              "] dilation should be greater than zero, but got (", o.dilation.h, ", ", o.dilation.w,
              ")");
  EMBER_CHECK(o.padding.h >= 0 && o.padding.w >= 0, "[", op,
              "] padding should be non-negative, but got (", o.padding.h, ", ", o.padding.w, ")");
  Conv2dGeometry g = image::window_geometry(n, c, h, w, kernel, o.stride, o.padding, o.dilation);
  const int64_t span_h = h + 2 * g.pad_h - g.dilation_h * (kernel.h - 1) - 1;
  const int64_t span_w = w + 2 * g.pad_w - g.dilation_w * (kernel.w - 1) - 1;
  EMBER_CHECK_KIND(Shape, span_h >= 0 && span_w >= 0, "[", op, "] the ", h, "x", w,
                   " image padded by (", g.pad_h, ", ", g.pad_w,
                   ") is smaller than the dilated kernel ", g.dilation_h * (kernel.h - 1) + 1, "x",
                   g.dilation_w * (kernel.w - 1) + 1);
  g.out_h = span_h / g.stride_h + 1;
  g.out_w = span_w / g.stride_w + 1;
  return g;
}

}  // namespace

Tensor unfold(const Tensor& input, Size2d kernel, const FoldOptions& o) {
  image::check_floating("unfold", input);
  if (is_reduced_float(input.dtype())) return unfold(to_opmath(input), kernel, o).to(input.dtype());
  Tensor x = image::as_batched("unfold", input);
  Conv2dGeometry g = fold_geometry("unfold", x.size(0), x.size(1), x.size(2), x.size(3), kernel, o);
  Tensor cols = image::unfold(x, g);
  return input.dim() == 3 ? cols.squeeze(0) : cols;
}

Tensor fold(const Tensor& input, Size2d output_size, Size2d kernel, const FoldOptions& o) {
  image::check_floating("fold", input);
  if (is_reduced_float(input.dtype()))
    return fold(to_opmath(input), output_size, kernel, o).to(input.dtype());
  EMBER_CHECK_KIND(Shape, input.dim() == 2 || input.dim() == 3,
                   "[fold] Expected 2D (unbatched) or 3D (batched) input, but got input of size ",
                   shape_str(input.sizes()));
  Tensor x = input.dim() == 3 ? input : input.unsqueeze(0);
  const int64_t taps = kernel.h * kernel.w;
  EMBER_CHECK(kernel.h > 0 && kernel.w > 0, "[fold] kernel_size should be greater than zero");
  EMBER_CHECK_KIND(Shape, x.size(1) % taps == 0,
                   "[fold] Expected size of input's dimension 1 to be divisible by the product of "
                   "kernel_size (",
                   taps, "), but got input.size(1)=", x.size(1));
  EMBER_CHECK(output_size.h > 0 && output_size.w > 0,
              "[fold] output_size should be greater than zero, but got (", output_size.h, ", ",
              output_size.w, ")");
  Conv2dGeometry g =
      fold_geometry("fold", x.size(0), x.size(1) / taps, output_size.h, output_size.w, kernel, o);
  EMBER_CHECK_KIND(Shape, x.size(2) == g.out_h * g.out_w, "[fold] Given output_size=(",
                   output_size.h, ", ", output_size.w, "), kernel_size=(", kernel.h, ", ", kernel.w,
                   "), dilation=(", o.dilation.h, ", ", o.dilation.w, "), padding=(", o.padding.h,
                   ", ", o.padding.w, "), stride=(", o.stride.h, ", ", o.stride.w,
                   "), expected size of input's "
                   "dimension 2 to match the calculated number of sliding blocks ",
                   g.out_h, " * ", g.out_w, " = ", g.out_h * g.out_w,
                   ", but got input.size(2)=", x.size(2));
  Tensor image = image::fold(x, g);
  return input.dim() == 2 ? image.squeeze(0) : image;
}

}  // namespace ember::nn::functional
