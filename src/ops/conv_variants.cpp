// ops/conv_variants.cpp: conv1d and conv3d on conv2d (a 1-D input is an image one row high; a
// 3-D input's depth windows are stacked into channels), and the transposed convolutions as one
// GEMM per group followed by fold (col2im), PyTorch's output sizes; autograd comes with the ops
// they are made of.
#include "autograd/function.h"
#include "ember/ops.h"
#include "ops/image_ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

// input with `dims` spatial dims, batched or not: the batched form.
Tensor batched(const char* op, const Tensor& input, int64_t dims) {
  EMBER_CHECK_KIND(Shape, input.dim() == dims + 1 || input.dim() == dims + 2, "[", op,
                   "] Expected ", dims + 1, "D (unbatched) or ", dims + 2,
                   "D (batched) input, but got input of size: ", shape_str(input.sizes()));
  return input.dim() == dims + 2 ? input : input.unsqueeze(0);
}

void check_weight(const char* op, const Tensor& weight, int64_t dims, const char* layout) {
  EMBER_CHECK_KIND(Shape, weight.dim() == dims + 2, "[", op, "] weight must be ", dims + 2, "-D ",
                   layout, ", got shape ", shape_str(weight.sizes()));
}

void check_channels(const char* op, const Tensor& x, int64_t expected, int64_t groups,
                    const Tensor& weight) {
  EMBER_CHECK(groups > 0, "[", op, "] non-positive groups is not supported, got groups=", groups);
  EMBER_CHECK_KIND(Shape, x.size(1) == expected, "[", op, "] Given groups=", groups,
                   ", weight of size ", shape_str(weight.sizes()), ", expected input",
                   shape_str(x.sizes()), " to have ", expected, " channels, but got ", x.size(1),
                   " channels instead");
}

// One spatial dim's checks: positive stride and dilation, padding >= 0, window inside the input.
void check_dim(const char* op, const char* what, int64_t in, int64_t k, int64_t s, int64_t p,
               int64_t d) {
  EMBER_CHECK(s > 0 && d > 0 && p >= 0, "[", op, "] ", what,
              ": stride and dilation must be positive and padding non-negative, got stride=", s,
              ", padding=", p, ", dilation=", d);
  EMBER_CHECK_KIND(Shape, in + 2 * p >= d * (k - 1) + 1, "[", op, "] ", what,
                   ": the padded input size ", in + 2 * p, " is smaller than the dilated kernel ",
                   d * (k - 1) + 1, "; pad the input or use a smaller kernel");
}

Tensor unbatch(const Tensor& out, const Tensor& input, int64_t dims) {
  return input.dim() == dims + 1 ? out.squeeze(0) : out;
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              const Conv1dFuncOptions& o) {
  Tensor x = batched("conv1d", input, 1);
  check_weight("conv1d", weight, 1, "(out_channels, in_channels / groups, k)");
  check_channels("conv1d", x, weight.size(1) * o.groups, o.groups, weight);
  check_dim("conv1d", "length", x.size(2), weight.size(2), o.stride, o.padding, o.dilation);
  Tensor y = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias,
                    {.stride = {1, o.stride},
                     .padding = {0, o.padding},
                     .dilation = {1, o.dilation},
                     .groups = o.groups});
  return unbatch(y.squeeze(2), input, 1);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              const Conv3dFuncOptions& o) {
  Tensor x = batched("conv3d", input, 3);
  check_weight("conv3d", weight, 3, "(out_channels, in_channels / groups, kd, kh, kw)");
  check_channels("conv3d", x, weight.size(1) * o.groups, o.groups, weight);
  const int64_t n = x.size(0), c = x.size(1), kd = weight.size(2), out_c = weight.size(0);
  check_dim("conv3d", "depth", x.size(2), kd, o.stride.d, o.padding.d, o.dilation.d);
  check_dim("conv3d", "height", x.size(3), weight.size(3), o.stride.h, o.padding.h, o.dilation.h);
  check_dim("conv3d", "width", x.size(4), weight.size(4), o.stride.w, o.padding.w, o.dilation.w);
  if (o.padding.d > 0) {
    Tensor zero = zeros({n, c, o.padding.d, x.size(3), x.size(4)},
                        {.dtype = x.dtype(), .device = x.device()});
    x = cat({zero, x, zero}, 2);
  }
  const int64_t out_d = (x.size(2) - o.dilation.d * (kd - 1) - 1) / o.stride.d + 1;
  // Depth window z's taps stacked after each channel: (N od, C kd, H, W), channel c kd + tap.
  std::vector<int64_t> taps;
  taps.reserve(out_d * kd);
  for (int64_t z = 0; z < out_d; ++z)
    for (int64_t t = 0; t < kd; ++t) taps.push_back(z * o.stride.d + t * o.dilation.d);
  Tensor index = from_vector(taps, Shape{out_d * kd}, {.dtype = kInt64, .device = x.device()});
  Tensor stacked = x.index_select(2, index)
                       .view({n, c, out_d, kd, x.size(3), x.size(4)})
                       .permute({0, 2, 1, 3, 4, 5})
                       .reshape({n * out_d, c * kd, x.size(3), x.size(4)});
  Tensor w2 = weight.reshape({out_c, weight.size(1) * kd, weight.size(3), weight.size(4)});
  Tensor y = conv2d(stacked, w2, bias,
                    {.stride = {o.stride.h, o.stride.w},
                     .padding = {o.padding.h, o.padding.w},
                     .dilation = {o.dilation.h, o.dilation.w},
                     .groups = o.groups});  // (N od, O, oh, ow)
  y = y.view({n, out_d, out_c, y.size(2), y.size(3)}).permute({0, 2, 1, 3, 4}).contiguous();
  return unbatch(y, input, 3);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvTranspose2dFuncOptions& o) {
  if (bias.defined())
    common_device("conv_transpose2d", {&input, &weight, &bias});
  else
    common_device("conv_transpose2d", {&input, &weight});
  image::check_floating("conv_transpose2d", input);
  if (std::vector<Tensor> low; autocast_lower_all({&input, &weight, &bias}, low))
    return conv_transpose2d(low[0], low[1], low[2], o);
  if (is_reduced_float(input.dtype())) {
    autocast_detail::Suspend no_autocast;
    return conv_transpose2d(to_opmath(input), to_opmath(weight), to_opmath(bias), o)
        .to(input.dtype());
  }
  Tensor x = batched("conv_transpose2d", input, 2);
  check_weight("conv_transpose2d", weight, 2, "(in_channels, out_channels / groups, kh, kw)");
  EMBER_CHECK(o.groups > 0,
              "[conv_transpose2d] non-positive groups is not supported, got groups=", o.groups);
  EMBER_CHECK_KIND(Shape, x.size(1) == weight.size(0) && weight.size(0) % o.groups == 0,
                   "[conv_transpose2d] Given transposed=1, weight of size ",
                   shape_str(weight.sizes()), ", expected input", shape_str(x.sizes()), " to have ",
                   weight.size(0), " channels (divisible by groups=", o.groups, "), but got ",
                   x.size(1), " channels instead");
  EMBER_CHECK_KIND(DType,
                   weight.dtype() == x.dtype() && (!bias.defined() || bias.dtype() == x.dtype()),
                   "[conv_transpose2d] Input type (", x.dtype(), ") and weight type (",
                   weight.dtype(), ") should be the same");
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), groups = o.groups;
  const int64_t kh = weight.size(2), kw = weight.size(3), out_c = weight.size(1) * groups;
  EMBER_CHECK(o.stride.h > 0 && o.stride.w > 0 && o.dilation.h > 0 && o.dilation.w > 0 &&
                  o.padding.h >= 0 && o.padding.w >= 0,
              "[conv_transpose2d] stride and dilation must be positive and padding "
              "non-negative");
  EMBER_CHECK(o.output_padding.h >= 0 && o.output_padding.w >= 0 &&
                  (o.output_padding.h < o.stride.h || o.output_padding.h < o.dilation.h) &&
                  (o.output_padding.w < o.stride.w || o.output_padding.w < o.dilation.w),
              "[conv_transpose2d] output padding must be smaller than either stride or "
              "dilation, but got output_padding=(",
              o.output_padding.h, ", ", o.output_padding.w, "), stride=(", o.stride.h, ", ",
              o.stride.w, "), dilation=(", o.dilation.h, ", ", o.dilation.w, ")");
  if (bias.defined())
    EMBER_CHECK_KIND(Shape, bias.dim() == 1 && bias.size(0) == out_c,
                     "[conv_transpose2d] expected bias to be 1-D with ", out_c,
                     " elements, but got bias of size ", shape_str(bias.sizes()));
  Conv2dGeometry g = image::window_geometry(
      n, out_c,
      (h - 1) * o.stride.h - 2 * o.padding.h + o.dilation.h * (kh - 1) + o.output_padding.h + 1,
      (w - 1) * o.stride.w - 2 * o.padding.w + o.dilation.w * (kw - 1) + o.output_padding.w + 1,
      {kh, kw}, o.stride, o.padding, o.dilation);
  g.out_h = h;  // the input is the convolution's output
  g.out_w = w;
  EMBER_CHECK_KIND(Shape, g.height > 0 && g.width > 0, "[conv_transpose2d] Given input size ",
                   shape_str(x.sizes()), " and weight ", shape_str(weight.sizes()),
                   ", the calculated output size (", g.height, " x ", g.width,
                   ") is too small; reduce padding");
  // Per group: (O / G kh kw, C / G) weights times (C / G, H W) inputs -> columns to fold.
  const int64_t taps = weight.size(1) * kh * kw;
  Tensor wt = weight.reshape({groups, c / groups, taps}).transpose(1, 2);
  Tensor cols =
      matmul(wt, x.reshape({n, groups, c / groups, h * w})).reshape({n, groups * taps, h * w});
  Tensor y = image::fold(cols, g);
  if (bias.defined()) y = y + bias.view({out_c, 1, 1});
  return unbatch(y, input, 2);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvTranspose1dFuncOptions& o) {
  Tensor x = batched("conv_transpose1d", input, 1);
  check_weight("conv_transpose1d", weight, 1, "(in_channels, out_channels / groups, k)");
  Tensor y = conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias,
                              {.stride = {1, o.stride},
                               .padding = {0, o.padding},
                               .output_padding = {0, o.output_padding},
                               .groups = o.groups,
                               .dilation = {1, o.dilation}});
  return unbatch(y.squeeze(2), input, 1);
}

}  // namespace ember::nn::functional
