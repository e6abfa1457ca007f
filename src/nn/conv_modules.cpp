// nn/conv_modules.cpp: the layers of ember/nn/conv_modules.h -- parameter set-up and init as
// PyTorch, forward on the functional forms, and PyTorch's extra_repr.
#include "ember/nn/conv_modules.h"

#include <cmath>

#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/format.h"

namespace ember::nn {

void reset_conv_parameters(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = weight.size(0) > 0 ? weight.numel() / weight.size(0) : 0;
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(bias, -bound, bound);
}

namespace {

// Checks a convolution's channel counts and kernel (the weight's `shape`); returns shape.
Shape conv_weight_shape(const char* name, int64_t in, int64_t out, int64_t groups, Shape shape) {
  EMBER_CHECK(groups > 0, "[", name, "] groups must be a positive integer, got ", groups);
  EMBER_CHECK(in % groups == 0, "[", name, "] in_channels must be divisible by groups (", in,
              " and ", groups, ")");
  EMBER_CHECK(out % groups == 0, "[", name, "] out_channels must be divisible by groups (", out,
              " and ", groups, ")");
  for (size_t i = 2; i < shape.size(); ++i)
    EMBER_CHECK(shape[i] > 0, "[", name, "] kernel_size must be positive, got ",
                shape_str(Shape(shape.begin() + 2, shape.end())));
  return shape;
}

std::string conv_repr(int64_t in, int64_t out, const std::vector<int64_t>& kernel,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& output_padding,
                      const std::vector<int64_t>& dilation, int64_t groups, bool bias) {
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    for (int64_t e : v)
      if (e != x) return false;
    return true;
  };
  std::string s = std::to_string(in) + ", " + std::to_string(out) +
                  ", kernel_size=" + fmt_tuple(kernel) + ", stride=" + fmt_tuple(stride);
  if (!all(padding, 0)) s += ", padding=" + fmt_tuple(padding);
  if (!all(dilation, 1)) s += ", dilation=" + fmt_tuple(dilation);
  if (!all(output_padding, 0)) s += ", output_padding=" + fmt_tuple(output_padding);
  if (groups != 1) s += ", groups=" + std::to_string(groups);
  if (!bias) s += ", bias=False";
  return s;
}

std::vector<int64_t> v3(Size3d s) {
  return {s.d, s.h, s.w};
}
std::vector<int64_t> v2(Size2d s) {
  return {s.h, s.w};
}

}  // namespace

Conv1dImpl::Conv1dImpl(int64_t in, int64_t out, int64_t kernel, const Conv1dOptions& o)
    : Module("Conv1d"), in_channels(in), out_channels(out), kernel_size(kernel), options(o) {
  weight = register_parameter("weight", empty(conv_weight_shape("Conv1d", in, out, o.groups,
                                                                {out, in / o.groups, kernel})));
  if (o.bias) bias = register_parameter("bias", empty({out}));
  reset_conv_parameters(weight, bias);
}
Tensor Conv1dImpl::forward(const Tensor& input) {
  return F::conv1d(input, weight, bias,
                   {.stride = options.stride,
                    .padding = options.padding,
                    .dilation = options.dilation,
                    .groups = options.groups});
}
std::string Conv1dImpl::extra_repr() const {
  return conv_repr(in_channels, out_channels, {kernel_size}, {options.stride}, {options.padding},
                   {0}, {options.dilation}, options.groups, bias.defined());
}

Conv3dImpl::Conv3dImpl(int64_t in, int64_t out, Size3d kernel, const Conv3dOptions& o)
    : Module("Conv3d"), in_channels(in), out_channels(out), kernel_size(kernel), options(o) {
  weight = register_parameter(
      "weight", empty(conv_weight_shape("Conv3d", in, out, o.groups,
                                        {out, in / o.groups, kernel.d, kernel.h, kernel.w})));
  if (o.bias) bias = register_parameter("bias", empty({out}));
  reset_conv_parameters(weight, bias);
}
Tensor Conv3dImpl::forward(const Tensor& input) {
  return F::conv3d(input, weight, bias,
                   {.stride = options.stride,
                    .padding = options.padding,
                    .dilation = options.dilation,
                    .groups = options.groups});
}
std::string Conv3dImpl::extra_repr() const {
  return conv_repr(in_channels, out_channels, v3(kernel_size), v3(options.stride),
                   v3(options.padding), {0}, v3(options.dilation), options.groups, bias.defined());
}

ConvTranspose1dImpl::ConvTranspose1dImpl(int64_t in, int64_t out, int64_t kernel,
                                         const ConvTranspose1dOptions& o)
    : Module("ConvTranspose1d"),
      in_channels(in),
      out_channels(out),
      kernel_size(kernel),
      options(o) {
  weight = register_parameter(
      "weight",
      empty(conv_weight_shape("ConvTranspose1d", in, out, o.groups, {in, out / o.groups, kernel})));
  if (o.bias) bias = register_parameter("bias", empty({out}));
  reset_conv_parameters(weight, bias);
}
Tensor ConvTranspose1dImpl::forward(const Tensor& input) {
  return F::conv_transpose1d(input, weight, bias,
                             {.stride = options.stride,
                              .padding = options.padding,
                              .output_padding = options.output_padding,
                              .groups = options.groups,
                              .dilation = options.dilation});
}
std::string ConvTranspose1dImpl::extra_repr() const {
  return conv_repr(in_channels, out_channels, {kernel_size}, {options.stride}, {options.padding},
                   {options.output_padding}, {options.dilation}, options.groups, bias.defined());
}

ConvTranspose2dImpl::ConvTranspose2dImpl(int64_t in, int64_t out, Size2d kernel,
                                         const ConvTranspose2dOptions& o)
    : Module("ConvTranspose2d"),
      in_channels(in),
      out_channels(out),
      kernel_size(kernel),
      options(o) {
  weight = register_parameter("weight",
                              empty(conv_weight_shape("ConvTranspose2d", in, out, o.groups,
                                                      {in, out / o.groups, kernel.h, kernel.w})));
  if (o.bias) bias = register_parameter("bias", empty({out}));
  reset_conv_parameters(weight, bias);
}
Tensor ConvTranspose2dImpl::forward(const Tensor& input) {
  return F::conv_transpose2d(input, weight, bias,
                             {.stride = options.stride,
                              .padding = options.padding,
                              .output_padding = options.output_padding,
                              .groups = options.groups,
                              .dilation = options.dilation});
}
std::string ConvTranspose2dImpl::extra_repr() const {
  return conv_repr(in_channels, out_channels, v2(kernel_size), v2(options.stride),
                   v2(options.padding), v2(options.output_padding), v2(options.dilation),
                   options.groups, bias.defined());
}

namespace {
std::string fold_repr(Size2d kernel, const FoldOptions& o) {
  return "kernel_size=" + fmt_size(kernel) + ", dilation=" + fmt_size(o.dilation) +
         ", padding=" + fmt_size(o.padding) + ", stride=" + fmt_size(o.stride);
}
}  // namespace

Tensor UnfoldImpl::forward(const Tensor& input) {
  return F::unfold(input, kernel_size, options);
}
std::string UnfoldImpl::extra_repr() const {
  return fold_repr(kernel_size, options);
}
Tensor FoldImpl::forward(const Tensor& input) {
  return F::fold(input, output_size, kernel_size, options);
}
std::string FoldImpl::extra_repr() const {
  return "output_size=" + fmt_size(output_size) + ", " + fold_repr(kernel_size, options);
}

Tensor MaxPool1dImpl::forward(const Tensor& input) {
  return F::max_pool1d(input, kernel_size, options);
}
std::string MaxPool1dImpl::extra_repr() const {
  return "kernel_size=" + std::to_string(kernel_size) +
         ", stride=" + std::to_string(options.stride == 0 ? kernel_size : options.stride) +
         ", padding=" + std::to_string(options.padding) +
         ", dilation=" + std::to_string(options.dilation) +
         ", ceil_mode=" + fmt_bool(options.ceil_mode);
}
Tensor AvgPool1dImpl::forward(const Tensor& input) {
  return F::avg_pool1d(input, kernel_size, options);
}
std::string AvgPool1dImpl::extra_repr() const {
  return "kernel_size=" + fmt_tuple({kernel_size}) +
         ", stride=" + fmt_tuple({options.stride == 0 ? kernel_size : options.stride}) +
         ", padding=" + fmt_tuple({options.padding});
}
Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool1d(input, output_size);
}
std::string AdaptiveAvgPool1dImpl::extra_repr() const {
  return "output_size=" + std::to_string(output_size);
}
Tensor AdaptiveMaxPool1dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool1d(input, output_size);
}
std::string AdaptiveMaxPool1dImpl::extra_repr() const {
  return "output_size=" + std::to_string(output_size);
}
Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool2d(input, output_size);
}
std::string AdaptiveMaxPool2dImpl::extra_repr() const {
  return "output_size=" + fmt_size(output_size);
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  return F::interpolate(input, options);
}
std::string UpsampleImpl::extra_repr() const {
  std::string s;
  if (!options.size.empty()) {
    s = "size=" +
        (options.size.size() == 1 ? std::to_string(options.size[0]) : fmt_tuple(options.size));
  } else if (options.scale_factor.size() == 1) {
    s = "scale_factor=" + fmt_double(options.scale_factor[0]);
  } else {
    s = "scale_factor=(";
    for (size_t i = 0; i < options.scale_factor.size(); ++i)
      s += (i ? ", " : "") + fmt_double(options.scale_factor[i]);
    s += ")";
  }
  return s + ", mode=" + options.mode;
}

Tensor PixelShuffleImpl::forward(const Tensor& input) {
  return F::pixel_shuffle(input, upscale_factor);
}
std::string PixelShuffleImpl::extra_repr() const {
  return "upscale_factor=" + std::to_string(upscale_factor);
}
Tensor PixelUnshuffleImpl::forward(const Tensor& input) {
  return F::pixel_unshuffle(input, downscale_factor);
}
std::string PixelUnshuffleImpl::extra_repr() const {
  return "downscale_factor=" + std::to_string(downscale_factor);
}
Tensor ChannelShuffleImpl::forward(const Tensor& input) {
  return F::channel_shuffle(input, groups);
}
std::string ChannelShuffleImpl::extra_repr() const {
  return "groups=" + std::to_string(groups);
}

}  // namespace ember::nn
