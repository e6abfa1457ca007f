// ops/conv.cpp: conv2d as im2col + GEMM with a hand-written backward (col2im for the input's
// gradient, GEMMs for the weight's and the bias's), and the im2col / col2im tensor operations the
// pooling layers share.
#include "autograd/function.h"
#include "core/make_tensor.h"
#include "ember/ops.h"
#include "ops/image_ops.h"
#include "ops/op_helpers.h"

namespace ember::image {

Tensor as_batched(const char* op, const Tensor& input) {
  EMBER_CHECK_KIND(Shape, input.dim() == 3 || input.dim() == 4, "[", op,
                   "] Expected 3D (unbatched) or 4D (batched) input, but got input of size: ",
                   shape_str(input.sizes()));
  return input.dim() == 4 ? input : input.unsqueeze(0);
}

void check_floating(const char* op, const Tensor& t) {
  EMBER_CHECK_KIND(DType, t.is_floating_point(), "[", op,
                   "] expected a floating point tensor, got ", t.dtype(),
                   "; convert with .to(ember::kFloat32)");
}

Conv2dGeometry window_geometry(int64_t n, int64_t c, int64_t h, int64_t w, nn::Size2d kernel,
                               nn::Size2d stride, nn::Size2d pad, nn::Size2d dilation) {
  return {.batch = n,
          .channels = c,
          .height = h,
          .width = w,
          .kernel_h = kernel.h,
          .kernel_w = kernel.w,
          .stride_h = stride.h,
          .stride_w = stride.w,
          .pad_h = pad.h,
          .pad_w = pad.w,
          .dilation_h = dilation.h,
          .dilation_w = dilation.w};
}

Tensor im2col(const Tensor& image, const Conv2dGeometry& g) {
  Tensor src = image.contiguous();
  Tensor cols = make_tensor({g.batch, g.channels * g.kernel_h * g.kernel_w, g.out_h * g.out_w},
                            image.dtype(), image.device());
  if (cols.numel() > 0) backend_for(image).im2col(view_of(cols), view_of(src), g);
  return cols;
}

Tensor col2im(const Tensor& cols, const Conv2dGeometry& g) {
  Shape shape{g.batch, g.channels, g.height, g.width};
  if (cols.numel() == 0) return zeros(shape, {.dtype = cols.dtype(), .device = cols.device()});
  Tensor src = cols.contiguous();
  Tensor out = make_tensor(shape, cols.dtype(), cols.device());
  backend_for(cols).col2im(view_of(out), view_of(src), g);
  return out;
}

Tensor unfold(const Tensor& image, const Conv2dGeometry& g) {
  Tensor cols;
  {
    NoGradGuard no_grad;
    cols = im2col(image, g);
  }
  autograd::record("Im2ColBackward0", {&image}, cols,
                   [g](const Tensor& grad) { return std::vector<Tensor>{col2im(grad, g)}; });
  return cols;
}

Tensor fold(const Tensor& cols, const Conv2dGeometry& g) {
  Tensor image;
  {
    NoGradGuard no_grad;
    image = col2im(cols, g);
  }
  autograd::record("Col2ImBackward0", {&cols}, image,
                   [g](const Tensor& grad) { return std::vector<Tensor>{im2col(grad, g)}; });
  return image;
}

}  // namespace ember::image

namespace ember::nn::functional {

namespace {

void check_conv_args(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Conv2dFuncOptions& o) {
  EMBER_CHECK_KIND(Shape, weight.dim() == 4,
                   "[conv2d] weight must be 4-D (out_channels, "
                   "in_channels / groups, kh, kw), got shape ",
                   shape_str(weight.sizes()));
  EMBER_CHECK(o.groups > 0, "[conv2d] non-positive groups is not supported, got groups=", o.groups);
  EMBER_CHECK(o.stride.h > 0 && o.stride.w > 0,
              "[conv2d] non-positive stride is not supported, "
              "got stride=(",
              o.stride.h, ", ", o.stride.w, ")");
  EMBER_CHECK(o.padding.h >= 0 && o.padding.w >= 0,
              "[conv2d] negative padding is not supported, "
              "got padding=(",
              o.padding.h, ", ", o.padding.w, ")");
  EMBER_CHECK(o.dilation.h > 0 && o.dilation.w > 0,
              "[conv2d] dilation should be greater than "
              "zero, got dilation=(",
              o.dilation.h, ", ", o.dilation.w, ")");
  int64_t out_channels = weight.size(0);
  EMBER_CHECK_KIND(Shape, out_channels % o.groups == 0, "[conv2d] out_channels (weight of size ",
                   shape_str(weight.sizes()), ") must be divisible by groups=", o.groups);
  EMBER_CHECK_KIND(Shape, x.size(1) == weight.size(1) * o.groups,
                   "[conv2d] Given groups=", o.groups, ", weight of size ",
                   shape_str(weight.sizes()), ", expected input", shape_str(x.sizes()), " to have ",
                   weight.size(1) * o.groups, " channels, but got ", x.size(1),
                   " channels instead");
  EMBER_CHECK_KIND(DType,
                   weight.dtype() == x.dtype() && (!bias.defined() || bias.dtype() == x.dtype()),
                   "[conv2d] Input type (", x.dtype(), ") and weight type (", weight.dtype(),
                   bias.defined() ? ") and bias type (" : "",
                   bias.defined() ? dtype_name(bias.dtype()) : "", ") should be the same");
  if (bias.defined())
    EMBER_CHECK_KIND(Shape, bias.dim() == 1 && bias.size(0) == out_channels,
                     "[conv2d] Given "
                     "weight of size ",
                     shape_str(weight.sizes()), ", expected bias to be 1-D with ", out_channels,
                     " elements, but got bias of size ", shape_str(bias.sizes()));
  int64_t ph = x.size(2) + 2 * o.padding.h, pw = x.size(3) + 2 * o.padding.w;
  int64_t kh = o.dilation.h * (weight.size(2) - 1) + 1,
          kw = o.dilation.w * (weight.size(3) - 1) + 1;
  EMBER_CHECK_KIND(Shape, ph >= kh && pw >= kw,
                   "[conv2d] Calculated padded input size per "
                   "channel: (",
                   ph, " x ", pw, "). Kernel size: (", kh, " x ", kw,
                   "). Kernel size can't be greater than actual input size (input of size ",
                   shape_str(x.sizes()), ")");
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              const Conv2dFuncOptions& o) {
  if (bias.defined())
    common_device("conv2d", {&input, &weight, &bias});
  else
    common_device("conv2d", {&input, &weight});
  image::check_floating("conv2d", input);
  if (std::vector<Tensor> low; autocast_lower_all({&input, &weight, &bias}, low))
    return conv2d(low[0], low[1], low[2], o);
  if (is_reduced_float(input.dtype())) {
    autocast_detail::Suspend no_autocast;
    return conv2d(to_opmath(input), to_opmath(weight), to_opmath(bias), o).to(input.dtype());
  }
  Tensor x = image::as_batched("conv2d", input);
  check_conv_args(x, weight, bias, o);

  int64_t n = x.size(0), groups = o.groups, out_c = weight.size(0);
  Conv2dGeometry g =
      image::window_geometry(n, x.size(1), x.size(2), x.size(3), {weight.size(2), weight.size(3)},
                             o.stride, o.padding, o.dilation);
  g.out_h = image::conv_out_size(g.height, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  g.out_w = image::conv_out_size(g.width, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  int64_t len = g.out_h * g.out_w, k_group = weight.size(1) * g.kernel_h * g.kernel_w;

  Tensor cols, out;
  {
    NoGradGuard no_grad;
    cols = image::im2col(x, g);  // (N, C * kh * kw, L)
    // Per group: (O / G, K / G) weights times (K / G, L) columns.
    out = matmul(weight.reshape({groups, out_c / groups, k_group}),
                 cols.view({n, groups, k_group, len}))
              .view({n, out_c, g.out_h, g.out_w});
    if (bias.defined()) out.add_(bias.view({out_c, 1, 1}));
    if (input.dim() == 3) out = out.squeeze(0);
  }
  auto backward = [cols, sw = autograd::SavedTensor(weight), g, groups, in_shape = input.sizes(),
                   need_x = input.requires_grad(), need_w = weight.requires_grad(),
                   has_bias = bias.defined(),
                   need_b = bias.defined() && bias.requires_grad()](const Tensor& grad) {
    Tensor w = sw.unpack();
    int64_t n = g.batch, out_c = w.size(0), len = g.out_h * g.out_w;
    int64_t k_group = w.size(1) * g.kernel_h * g.kernel_w;
    Tensor g4 = grad.reshape({n, groups, out_c / groups, len});
    Tensor gx, gw, gb;
    if (need_x) {
      Tensor gcols = matmul(w.reshape({groups, out_c / groups, k_group}).transpose(1, 2), g4);
      gx = image::col2im(gcols.view({n, groups * k_group, len}), g).view(in_shape);
    }
    if (need_w) {
      // Sum over the batch inside one GEMM per group: (O / G, N L) times (N L, K / G).
      Tensor go = g4.permute({1, 2, 0, 3}).reshape({groups, out_c / groups, n * len});
      Tensor gc = cols.view({n, groups, k_group, len})
                      .permute({1, 2, 0, 3})
                      .reshape({groups, k_group, n * len});
      gw = bmm(go, gc.transpose(1, 2)).view(w.sizes());
    }
    if (!has_bias) return std::vector<Tensor>{gx, gw};
    if (need_b) gb = g4.sum({0, 3}).view({out_c});
    return std::vector<Tensor>{gx, gw, gb};
  };
  if (bias.defined())
    autograd::record("ConvolutionBackward0", {&input, &weight, &bias}, out, backward);
  else
    autograd::record("ConvolutionBackward0", {&input, &weight}, out, backward);
  return out;
}

}  // namespace ember::nn::functional
