// ember/nn/modules.h: the built-in layers, each an XImpl module with an X holder (as LibTorch):
// Linear, Sequential, activations, Dropout, Flatten, LayerNorm, Embedding, Identity, and the image
// layers: Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, BatchNorm1d/2d, Dropout1d/2d/3d,
// AlphaDropout, the padding layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad,
// CircularPad).
#pragma once

#include <optional>
#include <string>

#include "ember/nn/functional.h"
#include "ember/nn/module.h"
#include "ember/quantized.h"

namespace ember::nn {

// y = x W^T + b. weight: (out_features, in_features); bias: (out_features).
// Init as PyTorch: weight kaiming_uniform_(a = sqrt(5)), bias uniform(+-1/sqrt(in_features)).
class LinearImpl : public Module {
  EMBER_CLONE(LinearImpl, &LinearImpl::weight, &LinearImpl::bias, &LinearImpl::weight_quantized)
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& input) override;  // input: (..., in_features)
  std::string extra_repr() const override;
  void reset_parameters();

  // Weight-only quantization (torchao's quantize_): the weight parameter gives way to
  // weight_quantized (registered as the uint8 buffer "weight_quantized"), which forward multiplies
  // the input by, the input's dtype in and out; the bias stays. quantize_weight quantizes the
  // current weight; set_quantized_weight takes rows already quantized (a GGUF file's Q8_0 blocks)
  // of shape (out_features, in_features).
  void quantize_weight(QuantType type = QuantType::Int8);
  void set_quantized_weight(QuantizedTensor w);

  int64_t in_features, out_features;
  Tensor weight, bias;
  QuantizedTensor weight_quantized;  // defined once quantized; weight is undefined then

 protected:
  // A Linear printed under another name (MultiheadAttention's NonDynamicallyQuantizableLinear).
  LinearImpl(std::string name, int64_t in_features, int64_t out_features, bool bias);
};
EMBER_BUILTIN_MODULE(Linear);

// Runs its children in order.
class SequentialImpl : public Module {
  EMBER_CLONE(SequentialImpl)
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Modules>
  explicit SequentialImpl(Modules&&... modules) : Module("Sequential") {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <class Holder>
  void push_back(const Holder& holder) {
    push_back_module(holder.ptr());
  }
  void push_back_module(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& input) override;
  size_t size() const { return children().size(); }
  std::shared_ptr<Module> operator[](size_t i) const { return children().at(i); }
};
EMBER_BUILTIN_MODULE(Sequential);

// Holds modules under the names "0", "1", ... and has no forward of its own (PyTorch's
// ModuleList): `layers[i]` reaches one, as the module type its owner knows.
class ModuleListImpl : public Module {
  EMBER_CLONE(ModuleListImpl)
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class Holder>
  void push_back(const Holder& holder) {
    push_back_module(holder.ptr());
  }
  void push_back_module(std::shared_ptr<Module> module);
  size_t size() const { return children().size(); }
  std::shared_ptr<Module> operator[](size_t i) const { return children().at(i); }
};
EMBER_BUILTIN_MODULE(ModuleList);

class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override;
};
EMBER_BUILTIN_MODULE(ReLU);

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01)
      : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double negative_slope;
};
EMBER_BUILTIN_MODULE(LeakyReLU);

class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none")
      : Module("GELU"), approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::string approximate;
};
EMBER_BUILTIN_MODULE(GELU);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};
EMBER_BUILTIN_MODULE(Sigmoid);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};
EMBER_BUILTIN_MODULE(Tanh);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t dim;
};
EMBER_BUILTIN_MODULE(Softmax);

// Zeroes each element with probability p while training, scaling the rest by 1 / (1 - p).
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double p;
};
EMBER_BUILTIN_MODULE(Dropout);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t start_dim, end_dim;
};
EMBER_BUILTIN_MODULE(Flatten);

// Normalizes over the trailing normalized_shape dims; weight ones and bias zeros when affine.
class LayerNormImpl : public Module {
  EMBER_CLONE(LayerNormImpl, &LayerNormImpl::weight, &LayerNormImpl::bias)
 public:
  // bias = false: a weight only (PyTorch 2.1's LayerNorm(bias=False)).
  explicit LayerNormImpl(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                         bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Shape normalized_shape;
  double eps;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE(LayerNorm);

// A lookup table: indices (any shape, int64) -> (..., embedding_dim). weight ~ N(0, 1); the
// padding_idx row starts at zero and gets no gradient.
// max_norm: rows looked up are first rescaled in place to at most that norm (F::embedding).
class EmbeddingImpl : public Module {
  EMBER_CLONE(EmbeddingImpl, &EmbeddingImpl::weight, &EmbeddingImpl::weight_quantized)
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim,
                std::optional<int64_t> padding_idx = std::nullopt,
                std::optional<double> max_norm = std::nullopt, double norm_type = 2.0);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  // As LinearImpl's: the table stored quantized (buffer "weight_quantized"), each looked-up row
  // dequantized to the dtype the weight had (output_dtype). A tied lm_head may multiply by it.
  void quantize_weight(QuantType type = QuantType::Int8);
  void set_quantized_weight(QuantizedTensor w, DType output_dtype = kFloat32);
  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;
  std::optional<double> max_norm;
  double norm_type;
  Tensor weight;
  QuantizedTensor weight_quantized;
  DType output_dtype = kFloat32;  // of the rows looked up in weight_quantized
};
EMBER_BUILTIN_MODULE(Embedding);

struct EmbeddingBagOptions {
  std::string mode = "mean";  // "sum", "mean" or "max"
  std::optional<double> max_norm{};
  double norm_type = 2.0;
  bool include_last_offset = false;
  std::optional<int64_t> padding_idx{};
};
// Bags of embeddings reduced (F::embedding_bag). weight: (num_embeddings, embedding_dim) ~ N(0, 1),
// the padding_idx row zero.
class EmbeddingBagImpl : public Module {
  EMBER_CLONE(EmbeddingBagImpl, &EmbeddingBagImpl::weight)
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim,
                   const EmbeddingBagOptions& options = {});
  // input: (B, L), or (M) with offsets (B) -> (B, embedding_dim).
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& input, const Tensor& offsets,
                 const Tensor& per_sample_weights = Tensor());
  std::string extra_repr() const override;
  int64_t num_embeddings, embedding_dim;
  EmbeddingBagOptions options;
  Tensor weight;
};
EMBER_BUILTIN_MODULE_WITH(
    EmbeddingBag, EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim,
                               const EmbeddingBagOptions& options = {})
    : ModuleHolder(std::make_shared<EmbeddingBagImpl>(num_embeddings, embedding_dim, options)){});

// y = x1^T A x2 + b. weight: (out_features, in1_features, in2_features), bias: (out_features),
// both uniform(+-1/sqrt(in1_features)) as PyTorch.
class BilinearImpl : public Module {
  EMBER_CLONE(BilinearImpl, &BilinearImpl::weight, &BilinearImpl::bias)
 public:
  BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x1, const Tensor& x2) const;  // (..., in1), (..., in2) -> (..., out)
  std::string extra_repr() const override;
  int64_t in1_features, in2_features, out_features;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE(Bilinear);

struct Conv2dOptions {
  Size2d stride = 1;
  Size2d padding = 0;
  Size2d dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

// 2-D convolution. weight: (out_channels, in_channels / groups, kh, kw); bias: (out_channels).
// Init as PyTorch: weight kaiming_uniform_(a = sqrt(5)), bias uniform(+-1/sqrt(fan_in)) with
// fan_in = in_channels / groups * kh * kw.
class Conv2dImpl : public Module {
  EMBER_CLONE(Conv2dImpl, &Conv2dImpl::weight, &Conv2dImpl::bias)
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, Size2d kernel_size,
             const Conv2dOptions& options = {});
  Tensor forward(const Tensor& input) override;  // input: (N, in_channels, H, W)
  std::string extra_repr() const override;
  void reset_parameters();

  int64_t in_channels, out_channels;
  Size2d kernel_size;
  Conv2dOptions options;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE_WITH(Conv2d, Conv2d(int64_t in_channels, int64_t out_channels,
                                         Size2d kernel_size, const Conv2dOptions& options = {})
                          : ModuleHolder(std::make_shared<Conv2dImpl>(in_channels, out_channels,
                                                                      kernel_size, options)){});

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(Size2d kernel_size, const F::MaxPool2dOptions& options = {})
      : Module("MaxPool2d"), kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& input) override;  // input: (N, C, H, W)
  std::string extra_repr() const override;
  Size2d kernel_size;
  F::MaxPool2dOptions options;
};
EMBER_BUILTIN_MODULE_WITH(MaxPool2d,
                          MaxPool2d(Size2d kernel_size, const F::MaxPool2dOptions& options = {})
                          : ModuleHolder(std::make_shared<MaxPool2dImpl>(kernel_size, options)){});

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(Size2d kernel_size, const F::AvgPool2dOptions& options = {})
      : Module("AvgPool2d"), kernel_size(kernel_size), options(options) {}
  Tensor forward(const Tensor& input) override;  // input: (N, C, H, W)
  std::string extra_repr() const override;
  Size2d kernel_size;
  F::AvgPool2dOptions options;
};
EMBER_BUILTIN_MODULE_WITH(AvgPool2d,
                          AvgPool2d(Size2d kernel_size, const F::AvgPool2dOptions& options = {})
                          : ModuleHolder(std::make_shared<AvgPool2dImpl>(kernel_size, options)){});

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(Size2d output_size)
      : Module("AdaptiveAvgPool2d"), output_size(output_size) {}
  AdaptiveAvgPool2dImpl(int64_t output_h, int64_t output_w)
      : AdaptiveAvgPool2dImpl(Size2d(output_h, output_w)) {}
  Tensor forward(const Tensor& input) override;  // input: (N, C, H, W)
  std::string extra_repr() const override;
  Size2d output_size;
};
EMBER_BUILTIN_MODULE(AdaptiveAvgPool2d);

struct BatchNormOptions {
  double eps = 1e-5;
  // Weight of each batch in the running statistics; unset: their cumulative average.
  std::optional<double> momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;
};

// Batch normalization over channel dim 1: weight ones and bias zeros (affine); buffers
// running_mean zeros, running_var ones and num_batches_tracked (int64) when tracking. Training
// normalizes with batch statistics and updates the running ones; eval uses the running ones.
class BatchNormImplBase : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_running_stats();
  void reset_parameters();

  int64_t num_features;
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 protected:
  BatchNormImplBase(std::string name, int64_t num_features, const BatchNormOptions& options);
  // Throws unless the input's rank suits the layer.
  virtual void check_input(const Tensor& input) const = 0;
};

// input: (N, C) or (N, C, L).
class BatchNorm1dImpl : public BatchNormImplBase {
  EMBER_CLONE(BatchNorm1dImpl, &BatchNorm1dImpl::weight, &BatchNorm1dImpl::bias,
              &BatchNorm1dImpl::running_mean, &BatchNorm1dImpl::running_var,
              &BatchNorm1dImpl::num_batches_tracked)
 public:
  explicit BatchNorm1dImpl(int64_t num_features, const BatchNormOptions& options = {})
      : BatchNormImplBase("BatchNorm1d", num_features, options) {}

 protected:
  void check_input(const Tensor& input) const override;
};
EMBER_BUILTIN_MODULE_WITH(BatchNorm1d,
                          BatchNorm1d(int64_t num_features, const BatchNormOptions& options)
                          : ModuleHolder(std::make_shared<BatchNorm1dImpl>(num_features,
                                                                           options)){});

// input: (N, C, H, W).
class BatchNorm2dImpl : public BatchNormImplBase {
  EMBER_CLONE(BatchNorm2dImpl, &BatchNorm2dImpl::weight, &BatchNorm2dImpl::bias,
              &BatchNorm2dImpl::running_mean, &BatchNorm2dImpl::running_var,
              &BatchNorm2dImpl::num_batches_tracked)
 public:
  explicit BatchNorm2dImpl(int64_t num_features, const BatchNormOptions& options = {})
      : BatchNormImplBase("BatchNorm2d", num_features, options) {}

 protected:
  void check_input(const Tensor& input) const override;
};
EMBER_BUILTIN_MODULE_WITH(BatchNorm2d,
                          BatchNorm2d(int64_t num_features, const BatchNormOptions& options)
                          : ModuleHolder(std::make_shared<BatchNorm2dImpl>(num_features,
                                                                           options)){});

// Zeroes whole channels with probability p while training, scaling the rest by 1 / (1 - p).
class Dropout2dImpl : public Module {
 public:
  explicit Dropout2dImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;  // input: (N, C, H, W)
  std::string extra_repr() const override;
  double p;
};
EMBER_BUILTIN_MODULE(Dropout2d);

// Dropout1d, Dropout3d (whole channels) and AlphaDropout (for SELU), as F::dropout1d,
// F::dropout3d and F::alpha_dropout while training.
class Dropout1dImpl : public Module {
 public:
  explicit Dropout1dImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;  // input: (N, C, L) or (C, L)
  std::string extra_repr() const override;
  double p;
};
EMBER_BUILTIN_MODULE(Dropout1d);

class Dropout3dImpl : public Module {
 public:
  explicit Dropout3dImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;  // input: (N, C, D, H, W) or (C, D, H, W)
  std::string extra_repr() const override;
  double p;
};
EMBER_BUILTIN_MODULE(Dropout3d);

class AlphaDropoutImpl : public Module {
 public:
  explicit AlphaDropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double p;
};
EMBER_BUILTIN_MODULE(AlphaDropout);

// Padding layers on F::pad: padding is one amount for every side or (left, right[, top,
// bottom]). The 2d forms pad the last two dims of (N, C, H, W) or (C, H, W), the 1d ones the last.
class PadImpl : public Module {
 public:
  PadImpl(const char* name, std::vector<int64_t> padding, size_t sides, std::string mode,
          double value = 0);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::vector<int64_t> padding;
  std::string mode;
  double value;
};
#define EMBER_PAD_MODULE(Name, sides, mode)                  \
  class Name##Impl : public PadImpl {                        \
   public:                                                   \
    explicit Name##Impl(std::vector<int64_t> padding)        \
        : PadImpl(#Name, std::move(padding), sides, mode) {} \
  };                                                         \
  EMBER_BUILTIN_MODULE(Name)
EMBER_PAD_MODULE(ZeroPad1d, 2, "constant");
EMBER_PAD_MODULE(ZeroPad2d, 4, "constant");
EMBER_PAD_MODULE(ReflectionPad1d, 2, "reflect");
EMBER_PAD_MODULE(ReflectionPad2d, 4, "reflect");
EMBER_PAD_MODULE(ReplicationPad1d, 2, "replicate");
EMBER_PAD_MODULE(ReplicationPad2d, 4, "replicate");
EMBER_PAD_MODULE(CircularPad1d, 2, "circular");
EMBER_PAD_MODULE(CircularPad2d, 4, "circular");
#undef EMBER_PAD_MODULE
// ConstantPad1d/2d: the value given.
class ConstantPad2dImpl : public PadImpl {
 public:
  ConstantPad2dImpl(std::vector<int64_t> padding, double value)
      : PadImpl("ConstantPad2d", std::move(padding), 4, "constant", value) {}
};
EMBER_BUILTIN_MODULE(ConstantPad2d);

class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};
EMBER_BUILTIN_MODULE(Identity);

}  // namespace ember::nn
