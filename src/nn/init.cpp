// nn/init.cpp: torch.nn.init's initialisers, computing fans and gains as PyTorch does.
#include "ember/nn/init.h"

#include <cmath>

#include "ember/ops.h"

namespace ember::nn::init {

namespace {

std::pair<double, double> fans(const Tensor& t, const char* op) {
  EMBER_CHECK_KIND(Shape, t.dim() >= 2, "[", op,
                   "] Fan in and fan out can not be computed for "
                   "tensor with fewer than 2 dimensions (got shape ",
                   shape_str(t.sizes()), ")");
  double receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= static_cast<double>(t.size(d));
  return {static_cast<double>(t.size(1)) * receptive, static_cast<double>(t.size(0)) * receptive};
}

double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nl, const char* op) {
  auto [fan_in, fan_out] = fans(t, op);
  double fan = mode == FanMode::FanIn ? fan_in : fan_out;
  return calculate_gain(nl, a) / std::sqrt(fan);
}

thread_local int skip_init_depth = 0;

}  // namespace

SkipInitGuard::SkipInitGuard() {
  ++skip_init_depth;
}
SkipInitGuard::~SkipInitGuard() {
  --skip_init_depth;
}
bool SkipInitGuard::active() {
  return skip_init_depth > 0;
}

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::Linear:
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3.0;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU:
      return std::sqrt(2.0 / (1 + param * param));
  }
  return 1.0;
}

Tensor uniform_(Tensor tensor, double a, double b) {
  if (SkipInitGuard::active()) return tensor;
  NoGradGuard no_grad;
  return ember::uniform_(tensor, a, b);
}

Tensor normal_(Tensor tensor, double mean, double std) {
  if (SkipInitGuard::active()) return tensor;
  NoGradGuard no_grad;
  return ember::normal_(tensor, mean, std);
}

Tensor constant_(Tensor tensor, double value) {
  if (SkipInitGuard::active()) return tensor;
  NoGradGuard no_grad;
  return tensor.fill_(value);
}

Tensor zeros_(Tensor tensor) {
  return constant_(tensor, 0);
}
Tensor ones_(Tensor tensor) {
  return constant_(tensor, 1);
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_");
  return init::uniform_(tensor, -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  return init::normal_(tensor, 0, kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_"));
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = fans(tensor, "xavier_uniform_");
  double bound = gain * std::sqrt(6.0 / (fan_in + fan_out));
  return init::uniform_(tensor, -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = fans(tensor, "xavier_normal_");
  return init::normal_(tensor, 0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
}

}  // namespace ember::nn::init
