// nn/activations.cpp: the activation layers of ember/nn/activations.h and the functional forms
// it adds (compositions of where, tanh, sigmoid and chunk).
#include "ember/nn/activations.h"

#include "ember/nn/functional.h"
#include "nn/format.h"
#include "ops/op_helpers.h"

namespace ember::nn {

namespace functional {

Tensor hardshrink(const Tensor& x, double lambd) {
  return where(gt(abs(x), lambd), x, 0.0);
}
Tensor softshrink(const Tensor& x, double lambd) {
  EMBER_CHECK_KIND(Value, lambd >= 0, "[softshrink] lambd must be >= 0, got ", lambd);
  // 16-bit inputs compute in float32 and round once, as PyTorch's kernels.
  if (is_reduced_float(x.dtype())) return softshrink(to_opmath(x), lambd).to(x.dtype());
  return where(gt(x, lambd), x - lambd, where(lt(x, -lambd), x + lambd, 0.0));
}
Tensor tanhshrink(const Tensor& x) {
  if (is_reduced_float(x.dtype())) return tanhshrink(to_opmath(x)).to(x.dtype());
  return x - tanh(x);
}
Tensor threshold(const Tensor& x, double threshold, double value) {
  return where(gt(x, threshold), x, value);
}
Tensor glu(const Tensor& x, int64_t dim) {
  EMBER_CHECK_KIND(Shape, x.dim() > 0, "[glu] does not take a 0-dim tensor");
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  EMBER_CHECK_KIND(Shape, d >= 0 && d < x.dim() && x.size(d) % 2 == 0, "[glu] halving dimension ",
                   dim, " needs an even size, got shape ", shape_str(x.sizes()));
  std::vector<Tensor> halves = chunk(x, 2, d);
  return halves[0] * sigmoid(halves[1]);
}
Tensor prelu(const Tensor& x, const Tensor& weight) {
  EMBER_CHECK_KIND(Shape, weight.dim() == 1, "[prelu] weight must be 1-D, got shape ",
                   shape_str(weight.sizes()));
  Tensor w = weight;
  if (weight.numel() != 1) {
    EMBER_CHECK_KIND(Shape, x.dim() >= 2 && x.size(1) == weight.numel(), "[prelu] ", weight.numel(),
                     " weights need an input with as many channels (dim 1), got ",
                     shape_str(x.sizes()));
    Shape s(static_cast<size_t>(x.dim()), 1);
    s[1] = weight.numel();
    w = weight.reshape(s);
  }
  return where(gt(x, 0), x, w * x);
}

}  // namespace functional

ActivationImpl::ActivationImpl(const char* name, std::function<Tensor(const Tensor&)> f,
                               std::string repr)
    : Module(name), f_(std::move(f)), repr_(std::move(repr)) {}
Tensor ActivationImpl::forward(const Tensor& input) {
  return f_(input);
}
std::string ActivationImpl::extra_repr() const {
  return repr_;
}

namespace F = functional;

SiLUImpl::SiLUImpl() : ActivationImpl("SiLU", [](const Tensor& x) { return F::silu(x); }) {}
MishImpl::MishImpl() : ActivationImpl("Mish", [](const Tensor& x) { return F::mish(x); }) {}
SELUImpl::SELUImpl() : ActivationImpl("SELU", [](const Tensor& x) { return F::selu(x); }) {}
ReLU6Impl::ReLU6Impl() : ActivationImpl("ReLU6", [](const Tensor& x) { return F::relu6(x); }) {}
HardswishImpl::HardswishImpl()
    : ActivationImpl("Hardswish", [](const Tensor& x) { return F::hardswish(x); }) {}
HardsigmoidImpl::HardsigmoidImpl()
    : ActivationImpl("Hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x); }) {}
LogSigmoidImpl::LogSigmoidImpl()
    : ActivationImpl("LogSigmoid", [](const Tensor& x) { return F::logsigmoid(x); }) {}
SoftsignImpl::SoftsignImpl()
    : ActivationImpl("Softsign", [](const Tensor& x) { return F::softsign(x); }) {}
TanhshrinkImpl::TanhshrinkImpl()
    : ActivationImpl("Tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); }) {}
ELUImpl::ELUImpl(double alpha)
    : ActivationImpl(
          "ELU", [alpha](const Tensor& x) { return F::elu(x, alpha); },
          "alpha=" + fmt_double(alpha)) {}
CELUImpl::CELUImpl(double alpha)
    : ActivationImpl(
          "CELU", [alpha](const Tensor& x) { return F::celu(x, alpha); },
          "alpha=" + fmt_double(alpha)) {}
SoftplusImpl::SoftplusImpl(double beta, double threshold)
    : ActivationImpl(
          "Softplus",
          [beta, threshold](const Tensor& x) { return F::softplus(x, beta, threshold); },
          "beta=" + fmt_double(beta) + ", threshold=" + fmt_double(threshold)) {}
HardtanhImpl::HardtanhImpl(double min_val, double max_val)
    : ActivationImpl(
          "Hardtanh",
          [min_val, max_val](const Tensor& x) { return F::hardtanh(x, min_val, max_val); },
          "min_val=" + fmt_double(min_val) + ", max_val=" + fmt_double(max_val)) {}
HardshrinkImpl::HardshrinkImpl(double lambd)
    : ActivationImpl(
          "Hardshrink", [lambd](const Tensor& x) { return F::hardshrink(x, lambd); },
          fmt_double(lambd)) {}
SoftshrinkImpl::SoftshrinkImpl(double lambd)
    : ActivationImpl(
          "Softshrink", [lambd](const Tensor& x) { return F::softshrink(x, lambd); },
          fmt_double(lambd)) {}
ThresholdImpl::ThresholdImpl(double threshold, double value)
    : ActivationImpl(
          "Threshold",
          [threshold, value](const Tensor& x) { return F::threshold(x, threshold, value); },
          "threshold=" + fmt_double(threshold) + ", value=" + fmt_double(value)) {}
GLUImpl::GLUImpl(int64_t dim)
    : ActivationImpl(
          "GLU", [dim](const Tensor& x) { return F::glu(x, dim); }, "dim=" + std::to_string(dim)) {}
SoftminImpl::SoftminImpl(int64_t dim)
    : ActivationImpl(
          "Softmin", [dim](const Tensor& x) { return F::softmin(x, dim); },
          "dim=" + std::to_string(dim)) {}
LogSoftmaxImpl::LogSoftmaxImpl(int64_t dim)
    : ActivationImpl(
          "LogSoftmax", [dim](const Tensor& x) { return log_softmax(x, dim); },
          "dim=" + std::to_string(dim)) {}

PReLUImpl::PReLUImpl(int64_t num_parameters, double init) : Module("PReLU") {
  EMBER_CHECK_KIND(Value, num_parameters > 0, "[PReLU] num_parameters must be positive, got ",
                   num_parameters);
  weight = register_parameter("weight", full({num_parameters}, init));
}
Tensor PReLUImpl::forward(const Tensor& input) {
  return F::prelu(input, weight);
}
std::string PReLUImpl::extra_repr() const {
  return "num_parameters=" + std::to_string(weight.numel());
}

}  // namespace ember::nn
