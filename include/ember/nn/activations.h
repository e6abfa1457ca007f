// ember/nn/activations.h: the activation layers beyond ReLU, LeakyReLU, GELU, Sigmoid, Tanh and
// Softmax (ember/nn/modules.h) -- each a module applying its F:: function with PyTorch's
// arguments (shown by extra_repr) -- and PReLU with its learned slope, plus the functional
// forms that had none: hardshrink, softshrink, tanhshrink, threshold, glu, prelu.
#pragma once

#include <functional>
#include <string>

#include "ember/nn/module.h"
#include "ember/ops.h"

namespace ember::nn {

namespace functional {
// hardshrink: x where |x| > lambd, else 0; softshrink: x moved toward 0 by lambd (0 within it);
// tanhshrink: x - tanh(x); threshold: x where x > threshold, else value; glu: a * sigmoid(b) of
// the halves of dim; prelu: x where x > 0, else weight * x, weight (1) or (C) on dim 1.
Tensor hardshrink(const Tensor& x, double lambd = 0.5);
Tensor softshrink(const Tensor& x, double lambd = 0.5);
Tensor tanhshrink(const Tensor& x);
Tensor threshold(const Tensor& x, double threshold, double value);
Tensor glu(const Tensor& x, int64_t dim = -1);
Tensor prelu(const Tensor& x, const Tensor& weight);
}  // namespace functional

// A layer applying a fixed function, described by `repr` in extra_repr.
class ActivationImpl : public Module {
 public:
  ActivationImpl(const char* name, std::function<Tensor(const Tensor&)> f, std::string repr = "");
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  std::function<Tensor(const Tensor&)> f_;
  std::string repr_;
};

#define EMBER_ACTIVATION(Name, ...)          \
  class Name##Impl : public ActivationImpl { \
   public:                                   \
    explicit Name##Impl(__VA_ARGS__);        \
  };                                         \
  EMBER_BUILTIN_MODULE(Name)
EMBER_ACTIVATION(SiLU);
EMBER_ACTIVATION(Mish);
EMBER_ACTIVATION(SELU);
EMBER_ACTIVATION(ReLU6);
EMBER_ACTIVATION(Hardswish);
EMBER_ACTIVATION(Hardsigmoid);
EMBER_ACTIVATION(LogSigmoid);
EMBER_ACTIVATION(Softsign);
EMBER_ACTIVATION(Tanhshrink);
EMBER_ACTIVATION(ELU, double alpha = 1.0);
EMBER_ACTIVATION(CELU, double alpha = 1.0);
EMBER_ACTIVATION(Softplus, double beta = 1.0, double threshold = 20.0);
EMBER_ACTIVATION(Hardtanh, double min_val = -1.0, double max_val = 1.0);
EMBER_ACTIVATION(Hardshrink, double lambd = 0.5);
EMBER_ACTIVATION(Softshrink, double lambd = 0.5);
EMBER_ACTIVATION(Threshold, double threshold, double value);
EMBER_ACTIVATION(GLU, int64_t dim = -1);
EMBER_ACTIVATION(Softmin, int64_t dim);
EMBER_ACTIVATION(LogSoftmax, int64_t dim);
#undef EMBER_ACTIVATION

// PReLU: a learned negative slope, one (num_parameters 1) or one per channel, initialized to
// `init`; its parameter is `weight`, as PyTorch's.
class PReLUImpl : public Module {
  EMBER_CLONE(PReLUImpl, &PReLUImpl::weight)
 public:
  explicit PReLUImpl(int64_t num_parameters = 1, double init = 0.25);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight;
};
EMBER_BUILTIN_MODULE(PReLU);

}  // namespace ember::nn
