// nn/modules.cpp: the built-in layers.
#include "ember/nn/modules.h"

#include <cmath>
#include <sstream>

#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {
std::string fmt_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias)
    : Module("Linear"), in_features(in), out_features(out) {
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
  return F::linear(input, weight, bias);
}

std::string LinearImpl::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" +
         std::to_string(out_features) + ", bias=" + (bias.defined() ? "True" : "False");
}

void SequentialImpl::push_back_module(std::shared_ptr<Module> module) {
  register_module(std::to_string(children().size()), std::move(module));
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& child : children()) x = child->forward(x);
  return x;
}

Tensor ReLUImpl::forward(const Tensor& input) { return relu(input); }
Tensor LeakyReLUImpl::forward(const Tensor& input) { return leaky_relu(input, negative_slope); }
std::string LeakyReLUImpl::extra_repr() const { return "negative_slope=" + fmt_double(negative_slope); }
Tensor GELUImpl::forward(const Tensor& input) { return gelu(input, approximate); }
std::string GELUImpl::extra_repr() const { return "approximate='" + approximate + "'"; }
Tensor SigmoidImpl::forward(const Tensor& input) { return sigmoid(input); }
Tensor TanhImpl::forward(const Tensor& input) { return tanh(input); }
Tensor SoftmaxImpl::forward(const Tensor& input) { return softmax(input, dim); }
std::string SoftmaxImpl::extra_repr() const { return "dim=" + std::to_string(dim); }

DropoutImpl::DropoutImpl(double p) : Module("Dropout"), p(p) {
  EMBER_CHECK(p >= 0 && p <= 1, "[Dropout] dropout probability has to be between 0 and 1, but got ",
              p);
}
Tensor DropoutImpl::forward(const Tensor& input) { return F::dropout(input, p, is_training()); }
std::string DropoutImpl::extra_repr() const { return "p=" + fmt_double(p) + ", inplace=False"; }

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(start_dim, end_dim); }
std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

LayerNormImpl::LayerNormImpl(Shape shape, double eps, bool affine)
    : Module("LayerNorm"), normalized_shape(std::move(shape)), eps(eps) {
  if (affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", zeros(normalized_shape));
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

EmbeddingImpl::EmbeddingImpl(int64_t num, int64_t dim, std::optional<int64_t> padding)
    : Module("Embedding"), num_embeddings(num), embedding_dim(dim), padding_idx(padding) {
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
Tensor EmbeddingImpl::forward(const Tensor& indices) { return F::embedding(indices, weight, padding_idx); }
std::string EmbeddingImpl::extra_repr() const {
  std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx) s += ", padding_idx=" + std::to_string(*padding_idx);
  return s;
}

}  // namespace ember::nn
