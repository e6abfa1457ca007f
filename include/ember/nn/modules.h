// ember/nn/modules.h: the built-in layers, each an XImpl module with an X holder (as LibTorch):
// Linear, Sequential, activations, Dropout, Flatten, LayerNorm, Embedding, Identity.
#pragma once

#include <optional>
#include <string>

#include "ember/nn/module.h"

namespace ember::nn {

// y = x W^T + b. weight: (out_features, in_features); bias: (out_features).
// Init as PyTorch: weight kaiming_uniform_(a = sqrt(5)), bias uniform(+-1/sqrt(in_features)).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& input) override;  // input: (..., in_features)
  std::string extra_repr() const override;
  void reset_parameters();

  int64_t in_features, out_features;
  Tensor weight, bias;
};
EMBER_MODULE(Linear);

// Runs its children in order.
class SequentialImpl : public Module {
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
EMBER_MODULE(Sequential);

class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override;
};
EMBER_MODULE(ReLU);

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01)
      : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double negative_slope;
};
EMBER_MODULE(LeakyReLU);

class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none")
      : Module("GELU"), approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::string approximate;
};
EMBER_MODULE(GELU);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};
EMBER_MODULE(Sigmoid);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};
EMBER_MODULE(Tanh);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t dim;
};
EMBER_MODULE(Softmax);

// Zeroes each element with probability p while training, scaling the rest by 1 / (1 - p).
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double p;
};
EMBER_MODULE(Dropout);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t start_dim, end_dim;
};
EMBER_MODULE(Flatten);

// Normalizes over the trailing normalized_shape dims; weight ones and bias zeros when affine.
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Shape normalized_shape;
  double eps;
  Tensor weight, bias;
};
EMBER_MODULE(LayerNorm);

// A lookup table: indices (any shape, int64) -> (..., embedding_dim). weight ~ N(0, 1); the
// padding_idx row starts at zero and gets no gradient.
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim,
                std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;
  Tensor weight;
};
EMBER_MODULE(Embedding);

class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};
EMBER_MODULE(Identity);

}  // namespace ember::nn
