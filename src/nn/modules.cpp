// nn/modules.cpp: the built-in layers.
#include "ember/nn/modules.h"

#include <cmath>
#include <sstream>

#include "ember/nn/conv_modules.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/format.h"

namespace ember::nn {

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias)
    : LinearImpl("Linear", in, out, with_bias) {}

LinearImpl::LinearImpl(std::string name, int64_t in, int64_t out, bool with_bias)
    : Module(std::move(name)), in_features(in), out_features(out) {
  EMBER_CHECK(in >= 0 && out >= 0, "[Linear] in_features and out_features must be >= 0, got ", in,
              " and ", out);
  weight = register_parameter("weight", empty({out, in}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 1 && input.size(-1) == in_features,
                   "[Linear] mat1 and mat2 shapes cannot be multiplied: input of shape ",
                   shape_str(input.sizes()), " has ", input.dim() ? input.size(-1) : 0,
                   " features but this layer expects in_features=", in_features);
  if (weight_quantized.defined()) return F::linear(input, weight_quantized, bias);
  return F::linear(input, weight, bias);
}

void LinearImpl::quantize_weight(QuantType type) {
  if (weight_quantized.defined()) {
    EMBER_CHECK(weight_quantized.type() == type, "[Linear] the weight is already quantized to ",
                quant_type_name(weight_quantized.type()));
    return;
  }
  set_quantized_weight(QuantizedTensor::quantize(weight.detach(), type));
}

void LinearImpl::set_quantized_weight(QuantizedTensor w) {
  EMBER_CHECK_KIND(Shape, w.defined() && w.rows() == out_features && w.cols() == in_features,
                   "[Linear] a quantized weight of shape ", shape_str(w.sizes()),
                   " does not fit a layer of in_features=", in_features,
                   ", out_features=", out_features);
  EMBER_CHECK(!weight_quantized.defined(), "[Linear] the weight is already quantized");
  remove_parameter("weight");
  weight = Tensor();
  weight_quantized = std::move(w);
  register_buffer("weight_quantized", weight_quantized.data());
}

std::string LinearImpl::extra_repr() const {
  return "in_features=" + std::to_string(in_features) +
         ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "True" : "False") +
         (weight_quantized.defined()
              ? std::string(", weight=") + quant_type_name(weight_quantized.type())
              : std::string());
}

void SequentialImpl::push_back_module(std::shared_ptr<Module> module) {
  register_module(std::to_string(children().size()), std::move(module));
}

void ModuleListImpl::push_back_module(std::shared_ptr<Module> module) {
  register_module(std::to_string(children().size()), std::move(module));
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& child : children()) x = child->forward(x);
  return x;
}

Tensor ReLUImpl::forward(const Tensor& input) {
  return relu(input);
}
Tensor LeakyReLUImpl::forward(const Tensor& input) {
  return leaky_relu(input, negative_slope);
}
std::string LeakyReLUImpl::extra_repr() const {
  return "negative_slope=" + fmt_double(negative_slope);
}
Tensor GELUImpl::forward(const Tensor& input) {
  return gelu(input, approximate);
}
std::string GELUImpl::extra_repr() const {
  return "approximate='" + approximate + "'";
}
Tensor SigmoidImpl::forward(const Tensor& input) {
  return sigmoid(input);
}
Tensor TanhImpl::forward(const Tensor& input) {
  return tanh(input);
}
Tensor SoftmaxImpl::forward(const Tensor& input) {
  return softmax(input, dim);
}
std::string SoftmaxImpl::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

DropoutImpl::DropoutImpl(double p) : Module("Dropout"), p(p) {
  EMBER_CHECK(p >= 0 && p <= 1, "[Dropout] dropout probability has to be between 0 and 1, but got ",
              p);
}
Tensor DropoutImpl::forward(const Tensor& input) {
  return F::dropout(input, p, is_training());
}
std::string DropoutImpl::extra_repr() const {
  return "p=" + fmt_double(p) + ", inplace=False";
}

Tensor FlattenImpl::forward(const Tensor& input) {
  return input.flatten(start_dim, end_dim);
}
std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

LayerNormImpl::LayerNormImpl(Shape shape, double eps, bool affine, bool with_bias)
    : Module("LayerNorm"), normalized_shape(std::move(shape)), eps(eps) {
  if (affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    if (with_bias) bias = register_parameter("bias", zeros(normalized_shape));
  }
}
Tensor LayerNormImpl::forward(const Tensor& input) {
  return F::layer_norm(input, normalized_shape, weight, bias, eps);
}
std::string LayerNormImpl::extra_repr() const {
  std::string shape = "(";
  for (size_t i = 0; i < normalized_shape.size(); ++i)
    shape.append(i ? ", " : "").append(std::to_string(normalized_shape[i]));
  if (normalized_shape.size() == 1) shape += ",";
  return shape + "), eps=" + fmt_double(eps) +
         ", elementwise_affine=" + (weight.defined() ? "True" : "False");
}

EmbeddingImpl::EmbeddingImpl(int64_t num, int64_t dim, std::optional<int64_t> padding,
                             std::optional<double> max_norm, double norm_type)
    : Module("Embedding"),
      num_embeddings(num),
      embedding_dim(dim),
      padding_idx(padding),
      max_norm(max_norm),
      norm_type(norm_type) {
  if (padding_idx) {
    EMBER_CHECK(*padding_idx >= -num && *padding_idx < num,
                "[Embedding] padding_idx must be within num_embeddings, got ", *padding_idx);
    if (*padding_idx < 0) *padding_idx += num;
  }
  weight = register_parameter("weight", empty({num, dim}));
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard no_grad;
    weight.select(0, *padding_idx).fill_(0);
  }
}
EmbeddingBagImpl::EmbeddingBagImpl(int64_t num, int64_t dim, const EmbeddingBagOptions& o)
    : Module("EmbeddingBag"), num_embeddings(num), embedding_dim(dim), options(o) {
  if (options.padding_idx) {
    int64_t& p = *options.padding_idx;
    EMBER_CHECK(p >= -num && p < num,
                "[EmbeddingBag] padding_idx must be within num_embeddings, got ", p);
    if (p < 0) p += num;
  }
  weight = register_parameter("weight", empty({num, dim}));
  init::normal_(weight);
  if (options.padding_idx) {
    NoGradGuard no_grad;
    weight.select(0, *options.padding_idx).fill_(0);
  }
}
Tensor EmbeddingBagImpl::forward(const Tensor& input) {
  return forward(input, Tensor());
}
Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
  return F::embedding_bag(input, weight,
                          {.offsets = offsets,
                           .mode = options.mode,
                           .per_sample_weights = per_sample_weights,
                           .include_last_offset = options.include_last_offset,
                           .padding_idx = options.padding_idx,
                           .max_norm = options.max_norm,
                           .norm_type = options.norm_type});
}
std::string EmbeddingBagImpl::extra_repr() const {
  std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (options.max_norm) s += ", max_norm=" + fmt_double(*options.max_norm);
  s += ", mode=" + options.mode;
  if (options.padding_idx) s += ", padding_idx=" + std::to_string(*options.padding_idx);
  return s;
}

BilinearImpl::BilinearImpl(int64_t in1, int64_t in2, int64_t out, bool with_bias)
    : Module("Bilinear"), in1_features(in1), in2_features(in2), out_features(out) {
  EMBER_CHECK(in1 > 0 && in2 > 0 && out >= 0,
              "[Bilinear] in1_features and in2_features must be positive, got ", in1, " and ", in2);
  weight = register_parameter("weight", empty({out, in1, in2}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  const double bound = 1.0 / std::sqrt(static_cast<double>(in1));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}
Tensor BilinearImpl::forward(const Tensor& x1, const Tensor& x2) const {
  return F::bilinear(x1, x2, weight, bias);
}
std::string BilinearImpl::extra_repr() const {
  return "in1_features=" + std::to_string(in1_features) +
         ", in2_features=" + std::to_string(in2_features) +
         ", out_features=" + std::to_string(out_features) + ", bias=" + fmt_bool(bias.defined());
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  if (weight_quantized.defined()) return F::embedding(indices, weight_quantized, output_dtype);
  return F::embedding(indices, weight, padding_idx, max_norm, norm_type);
}

void EmbeddingImpl::quantize_weight(QuantType type) {
  if (weight_quantized.defined()) {
    EMBER_CHECK(weight_quantized.type() == type, "[Embedding] the weight is already quantized to ",
                quant_type_name(weight_quantized.type()));
    return;
  }
  set_quantized_weight(QuantizedTensor::quantize(weight.detach(), type), weight.dtype());
}

void EmbeddingImpl::set_quantized_weight(QuantizedTensor w, DType dtype) {
  EMBER_CHECK_KIND(Shape, w.defined() && w.rows() == num_embeddings && w.cols() == embedding_dim,
                   "[Embedding] a quantized weight of shape ", shape_str(w.sizes()),
                   " does not fit a table of ", num_embeddings, " x ", embedding_dim);
  EMBER_CHECK(!weight_quantized.defined(), "[Embedding] the weight is already quantized");
  EMBER_CHECK(!max_norm,
              "[Embedding] a table with max_norm renormalizes its rows in place and "
              "cannot be quantized");
  remove_parameter("weight");
  weight = Tensor();
  weight_quantized = std::move(w);
  output_dtype = dtype;
  register_buffer("weight_quantized", weight_quantized.data());
}
std::string EmbeddingImpl::extra_repr() const {
  std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx) s += ", padding_idx=" + std::to_string(*padding_idx);
  if (max_norm) s += ", max_norm=" + fmt_double(*max_norm);
  return s;
}

Conv2dImpl::Conv2dImpl(int64_t in, int64_t out, Size2d kernel, const Conv2dOptions& o)
    : Module("Conv2d"), in_channels(in), out_channels(out), kernel_size(kernel), options(o) {
  EMBER_CHECK(o.groups > 0, "[Conv2d] groups must be a positive integer, got ", o.groups);
  EMBER_CHECK(in % o.groups == 0, "[Conv2d] in_channels must be divisible by groups (", in, " and ",
              o.groups, ")");
  EMBER_CHECK(out % o.groups == 0, "[Conv2d] out_channels must be divisible by groups (", out,
              " and ", o.groups, ")");
  EMBER_CHECK(kernel.h > 0 && kernel.w > 0, "[Conv2d] kernel_size must be positive, got ",
              fmt_pair(kernel));
  weight = register_parameter("weight", empty({out, in / o.groups, kernel.h, kernel.w}));
  if (o.bias) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  reset_conv_parameters(weight, bias);
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return F::conv2d(input, weight, bias,
                   {.stride = options.stride,
                    .padding = options.padding,
                    .dilation = options.dilation,
                    .groups = options.groups});
}

std::string Conv2dImpl::extra_repr() const {
  std::string s = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                  ", kernel_size=" + fmt_pair(kernel_size) + ", stride=" + fmt_pair(options.stride);
  if (options.padding != Size2d(0)) s += ", padding=" + fmt_pair(options.padding);
  if (options.dilation != Size2d(1)) s += ", dilation=" + fmt_pair(options.dilation);
  if (options.groups != 1) s += ", groups=" + std::to_string(options.groups);
  if (!bias.defined()) s += ", bias=False";
  return s;
}

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return F::max_pool2d(input, kernel_size, options);
}
std::string MaxPool2dImpl::extra_repr() const {
  return "kernel_size=" + fmt_size(kernel_size) +
         ", stride=" + fmt_size(options.stride == Size2d(0) ? kernel_size : options.stride) +
         ", padding=" + fmt_size(options.padding) + ", dilation=" + fmt_size(options.dilation) +
         ", ceil_mode=" + fmt_bool(options.ceil_mode);
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return F::avg_pool2d(input, kernel_size, options);
}
std::string AvgPool2dImpl::extra_repr() const {
  return "kernel_size=" + fmt_size(kernel_size) +
         ", stride=" + fmt_size(options.stride == Size2d(0) ? kernel_size : options.stride) +
         ", padding=" + fmt_size(options.padding);
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool2d(input, output_size);
}
std::string AdaptiveAvgPool2dImpl::extra_repr() const {
  return "output_size=" + fmt_size(output_size);
}

BatchNormImplBase::BatchNormImplBase(std::string name, int64_t num_features,
                                     const BatchNormOptions& o)
    : Module(std::move(name)), num_features(num_features), options(o) {
  EMBER_CHECK(num_features >= 0, "[", this->name(), "] num_features must be >= 0, got ",
              num_features);
  if (o.affine) {
    weight = register_parameter("weight", empty({num_features}));
    bias = register_parameter("bias", empty({num_features}));
  }
  if (o.track_running_stats) {
    running_mean = register_buffer("running_mean", empty({num_features}));
    running_var = register_buffer("running_var", empty({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, {.dtype = kInt64}));
  }
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (!options.affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  check_input(input);
  EMBER_CHECK_KIND(Shape, input.size(1) == num_features, "[", name(), "] expected input with ",
                   num_features, " channels (dim 1), got input of shape ",
                   shape_str(input.sizes()));
  double momentum = options.momentum.value_or(0.0);
  bool use_batch_stats = is_training() || !options.track_running_stats;
  if (is_training() && options.track_running_stats) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    // Without a momentum the running statistics are the cumulative average over batches.
    if (!options.momentum) momentum = 1.0 / num_batches_tracked.item<double>();
  }
  bool update = is_training() && options.track_running_stats;
  return F::batch_norm(input, update || !use_batch_stats ? running_mean : Tensor(),
                       update || !use_batch_stats ? running_var : Tensor(), weight, bias,
                       use_batch_stats, momentum, options.eps);
}

std::string BatchNormImplBase::extra_repr() const {
  return std::to_string(num_features) + ", eps=" + fmt_double(options.eps) +
         ", momentum=" + (options.momentum ? fmt_double(*options.momentum) : "None") +
         ", affine=" + fmt_bool(options.affine) +
         ", track_running_stats=" + fmt_bool(options.track_running_stats);
}

void BatchNorm1dImpl::check_input(const Tensor& input) const {
  EMBER_CHECK_KIND(Shape, input.dim() == 2 || input.dim() == 3,
                   "[BatchNorm1d] expected 2D or 3D "
                   "input (got ",
                   input.dim(), "D input of shape ", shape_str(input.sizes()), ")");
}

void BatchNorm2dImpl::check_input(const Tensor& input) const {
  EMBER_CHECK_KIND(Shape, input.dim() == 4, "[BatchNorm2d] expected 4D input (got ", input.dim(),
                   "D input of shape ", shape_str(input.sizes()), ")");
}

Dropout2dImpl::Dropout2dImpl(double p) : Module("Dropout2d"), p(p) {
  EMBER_CHECK(p >= 0 && p <= 1,
              "[Dropout2d] dropout probability has to be between 0 and 1, but "
              "got ",
              p);
}
Tensor Dropout2dImpl::forward(const Tensor& input) {
  return F::dropout2d(input, p, is_training());
}
std::string Dropout2dImpl::extra_repr() const {
  return "p=" + fmt_double(p) + ", inplace=False";
}

#define EMBER_DROPOUT_MODULE(Name, fn)                                                          \
  Name##Impl::Name##Impl(double p) : Module(#Name), p(p) {                                      \
    EMBER_CHECK_KIND(Value, p >= 0 && p <= 1,                                                   \
                     "[" #Name "] dropout probability has to be between 0 and 1, but got ", p); \
  }                                                                                             \
  Tensor Name##Impl::forward(const Tensor& input) {                                             \
    return F::fn(input, p, is_training());                                                      \
  }                                                                                             \
  std::string Name##Impl::extra_repr() const {                                                  \
    return "p=" + fmt_double(p) + ", inplace=False";                                            \
  }
EMBER_DROPOUT_MODULE(Dropout1d, dropout1d)
EMBER_DROPOUT_MODULE(Dropout3d, dropout3d)
EMBER_DROPOUT_MODULE(AlphaDropout, alpha_dropout)
#undef EMBER_DROPOUT_MODULE

PadImpl::PadImpl(const char* name, std::vector<int64_t> p, size_t sides, std::string mode,
                 double value)
    : Module(name), padding(std::move(p)), mode(std::move(mode)), value(value) {
  if (padding.size() == 1) padding.assign(sides, padding[0]);
  EMBER_CHECK_KIND(Shape, padding.size() == sides, "[", name, "] padding takes 1 or ", sides,
                   " amounts, got ", padding.size());
}
Tensor PadImpl::forward(const Tensor& input) {
  return F::pad(input, padding, mode, value);
}
std::string PadImpl::extra_repr() const {
  std::string s = "(";
  for (size_t i = 0; i < padding.size(); ++i) s += (i ? ", " : "") + std::to_string(padding[i]);
  s += ")";
  if (name() == "ConstantPad2d") s += ", value=" + fmt_double(value);
  return s;
}

}  // namespace ember::nn
