// ember/nn/conv_modules.h: the convolution and resampling layers beyond Conv2d and the 2-D
// poolings, each an XImpl module with an X holder on its functional form: Conv1d, Conv3d,
// ConvTranspose1d, ConvTranspose2d, Unfold, Fold, MaxPool1d, AvgPool1d, AdaptiveAvgPool1d,
// AdaptiveMaxPool1d, AdaptiveMaxPool2d, Upsample, PixelShuffle, PixelUnshuffle, ChannelShuffle.
// Parameters have PyTorch's names and shapes, so state dicts load with strict names.
#pragma once

#include <string>

#include "ember/nn/functional.h"
#include "ember/nn/module.h"

namespace ember::nn {

using functional::AvgPool1dOptions;
using functional::FoldOptions;
using functional::MaxPool1dOptions;

// Init of every convolution as PyTorch: weight kaiming_uniform_(a = sqrt(5)), bias
// uniform(+-1/sqrt(fan_in)), fan_in = weight.size(1) times the kernel's taps.
void reset_conv_parameters(Tensor& weight, Tensor& bias);

struct Conv1dOptions {
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};
// weight: (out_channels, in_channels / groups, kernel_size); bias: (out_channels).
class Conv1dImpl : public Module {
  EMBER_CLONE(Conv1dImpl, &Conv1dImpl::weight, &Conv1dImpl::bias)
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
             const Conv1dOptions& options = {});
  Tensor forward(const Tensor& input) override;  // input: (N, in_channels, L) or (in_channels, L)
  std::string extra_repr() const override;
  int64_t in_channels, out_channels, kernel_size;
  Conv1dOptions options;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE_WITH(Conv1d, Conv1d(int64_t in_channels, int64_t out_channels,
                                         int64_t kernel_size, const Conv1dOptions& options = {})
                          : ModuleHolder(std::make_shared<Conv1dImpl>(in_channels, out_channels,
                                                                      kernel_size, options)){});

struct Conv3dOptions {
  Size3d stride = 1;
  Size3d padding = 0;
  Size3d dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};
// weight: (out_channels, in_channels / groups, kd, kh, kw); bias: (out_channels).
class Conv3dImpl : public Module {
  EMBER_CLONE(Conv3dImpl, &Conv3dImpl::weight, &Conv3dImpl::bias)
 public:
  Conv3dImpl(int64_t in_channels, int64_t out_channels, Size3d kernel_size,
             const Conv3dOptions& options = {});
  Tensor forward(const Tensor& input) override;  // input: (N, in_channels, D, H, W)
  std::string extra_repr() const override;
  int64_t in_channels, out_channels;
  Size3d kernel_size;
  Conv3dOptions options;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE_WITH(Conv3d, Conv3d(int64_t in_channels, int64_t out_channels,
                                         Size3d kernel_size, const Conv3dOptions& options = {})
                          : ModuleHolder(std::make_shared<Conv3dImpl>(in_channels, out_channels,
                                                                      kernel_size, options)){});

struct ConvTranspose1dOptions {
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  int64_t dilation = 1;
};
// weight: (in_channels, out_channels / groups, kernel_size); bias: (out_channels).
class ConvTranspose1dImpl : public Module {
  EMBER_CLONE(ConvTranspose1dImpl, &ConvTranspose1dImpl::weight, &ConvTranspose1dImpl::bias)
 public:
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                      const ConvTranspose1dOptions& options = {});
  Tensor forward(const Tensor& input) override;  // input: (N, in_channels, L)
  std::string extra_repr() const override;
  int64_t in_channels, out_channels, kernel_size;
  ConvTranspose1dOptions options;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE_WITH(
    ConvTranspose1d, ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                     const ConvTranspose1dOptions& options = {})
    : ModuleHolder(std::make_shared<ConvTranspose1dImpl>(in_channels, out_channels, kernel_size,
                                                         options)){});

struct ConvTranspose2dOptions {
  Size2d stride = 1;
  Size2d padding = 0;
  Size2d output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  Size2d dilation = 1;
};
// weight: (in_channels, out_channels / groups, kh, kw); bias: (out_channels).
class ConvTranspose2dImpl : public Module {
  EMBER_CLONE(ConvTranspose2dImpl, &ConvTranspose2dImpl::weight, &ConvTranspose2dImpl::bias)
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, Size2d kernel_size,
                      const ConvTranspose2dOptions& options = {});
  Tensor forward(const Tensor& input) override;  // input: (N, in_channels, H, W)
  std::string extra_repr() const override;
  int64_t in_channels, out_channels;
  Size2d kernel_size;
  ConvTranspose2dOptions options;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE_WITH(
    ConvTranspose2d, ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2d kernel_size,
                                     const ConvTranspose2dOptions& options = {})
    : ModuleHolder(std::make_shared<ConvTranspose2dImpl>(in_channels, out_channels, kernel_size,
                                                         options)){});

class UnfoldImpl : public Module {
 public:
  explicit UnfoldImpl(Size2d kernel_size, const FoldOptions& options = {})
      : Module("Unfold"), kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& input) override;  // (N, C, H, W) -> (N, C kh kw, L)
  std::string extra_repr() const override;
  Size2d kernel_size;
  FoldOptions options;
};
EMBER_BUILTIN_MODULE_WITH(Unfold, Unfold(Size2d kernel_size, const FoldOptions& options = {})
                          : ModuleHolder(std::make_shared<UnfoldImpl>(kernel_size, options)){});

class FoldImpl : public Module {
 public:
  FoldImpl(Size2d output_size, Size2d kernel_size, const FoldOptions& options = {})
      : Module("Fold"), output_size(output_size), kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& input) override;  // (N, C kh kw, L) -> (N, C, output_size)
  std::string extra_repr() const override;
  Size2d output_size, kernel_size;
  FoldOptions options;
};
EMBER_BUILTIN_MODULE_WITH(
    Fold, Fold(Size2d output_size, Size2d kernel_size, const FoldOptions& options = {})
    : ModuleHolder(std::make_shared<FoldImpl>(output_size, kernel_size, options)){});

class MaxPool1dImpl : public Module {
 public:
  explicit MaxPool1dImpl(int64_t kernel_size, const MaxPool1dOptions& options = {})
      : Module("MaxPool1d"), kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& input) override;  // (N, C, L) -> (N, C, out)
  std::string extra_repr() const override;
  int64_t kernel_size;
  MaxPool1dOptions options;
};
EMBER_BUILTIN_MODULE_WITH(MaxPool1d,
                          MaxPool1d(int64_t kernel_size, const MaxPool1dOptions& options = {})
                          : ModuleHolder(std::make_shared<MaxPool1dImpl>(kernel_size, options)){});

class AvgPool1dImpl : public Module {
 public:
  explicit AvgPool1dImpl(int64_t kernel_size, const AvgPool1dOptions& options = {})
      : Module("AvgPool1d"), kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& input) override;  // (N, C, L) -> (N, C, out)
  std::string extra_repr() const override;
  int64_t kernel_size;
  AvgPool1dOptions options;
};
EMBER_BUILTIN_MODULE_WITH(AvgPool1d,
                          AvgPool1d(int64_t kernel_size, const AvgPool1dOptions& options = {})
                          : ModuleHolder(std::make_shared<AvgPool1dImpl>(kernel_size, options)){});

// The adaptive poolings: output_size fixed, windows as adaptive_avg_pool2d's.
class AdaptiveAvgPool1dImpl : public Module {
 public:
  explicit AdaptiveAvgPool1dImpl(int64_t output_size)
      : Module("AdaptiveAvgPool1d"), output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t output_size;
};
EMBER_BUILTIN_MODULE(AdaptiveAvgPool1d);

class AdaptiveMaxPool1dImpl : public Module {
 public:
  explicit AdaptiveMaxPool1dImpl(int64_t output_size)
      : Module("AdaptiveMaxPool1d"), output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t output_size;
};
EMBER_BUILTIN_MODULE(AdaptiveMaxPool1d);

class AdaptiveMaxPool2dImpl : public Module {
 public:
  explicit AdaptiveMaxPool2dImpl(Size2d output_size)
      : Module("AdaptiveMaxPool2d"), output_size(output_size) {}
  AdaptiveMaxPool2dImpl(int64_t output_h, int64_t output_w)
      : AdaptiveMaxPool2dImpl(Size2d(output_h, output_w)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Size2d output_size;
};
EMBER_BUILTIN_MODULE(AdaptiveMaxPool2d);

// F::interpolate as a layer: size or scale_factor, mode, align_corners.
class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(F::InterpolateFuncOptions options)
      : Module("Upsample"), options(std::move(options)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  F::InterpolateFuncOptions options;
};
EMBER_BUILTIN_MODULE(Upsample);

class PixelShuffleImpl : public Module {
 public:
  explicit PixelShuffleImpl(int64_t upscale_factor)
      : Module("PixelShuffle"), upscale_factor(upscale_factor) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t upscale_factor;
};
EMBER_BUILTIN_MODULE(PixelShuffle);

class PixelUnshuffleImpl : public Module {
 public:
  explicit PixelUnshuffleImpl(int64_t downscale_factor)
      : Module("PixelUnshuffle"), downscale_factor(downscale_factor) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t downscale_factor;
};
EMBER_BUILTIN_MODULE(PixelUnshuffle);

class ChannelShuffleImpl : public Module {
 public:
  explicit ChannelShuffleImpl(int64_t groups) : Module("ChannelShuffle"), groups(groups) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t groups;
};
EMBER_BUILTIN_MODULE(ChannelShuffle);

}  // namespace ember::nn
