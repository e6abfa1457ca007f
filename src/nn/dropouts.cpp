// nn/dropouts.cpp: the dropout variants beyond dropout and dropout2d -- dropout1d and dropout3d
// (whole channels of (N, C, L) / (N, C, D, H, W) inputs, or their unbatched forms, zeroed
// together) and alpha_dropout (SELU's: dropped elements take SELU's negative saturation and an
// affine map keeps mean 0 and variance 1).
#include <cmath>

#include "ember/nn/functional.h"
#include "ember/ops.h"

namespace ember::nn::functional {

namespace {

void check_p(const char* op, double p) {
  EMBER_CHECK_KIND(Value, p >= 0 && p <= 1, "[", op,
                   "] dropout probability has to be between 0 and 1, but got ", p);
}

// Zeroes each channel with probability p: `spatial` dims follow the channel dim, which has a batch
// dim before it unless the input is unbatched (spatial + 1 dims).
Tensor channel_dropout(const char* op, const Tensor& input, double p, bool training,
                       int64_t spatial) {
  check_p(op, p);
  EMBER_CHECK_KIND(Shape, input.dim() == spatial + 1 || input.dim() == spatial + 2, "[", op,
                   "] expected a ", spatial + 1, "-D (unbatched) or ", spatial + 2,
                   "-D (batched) input, got shape ", shape_str(input.sizes()));
  if (!training || p == 0) return input;
  if (p == 1) return input * 0.0;
  Shape mask = input.sizes();
  for (int64_t d = input.dim() - spatial; d < input.dim(); ++d) mask[d] = 1;
  const Tensor keep =
      ge(rand(mask, {.dtype = kFloat32, .device = input.device()}), p).to(input.dtype());
  return input * keep * (1.0 / (1.0 - p));
}

}  // namespace

Tensor dropout1d(const Tensor& input, double p, bool training) {
  return channel_dropout("dropout1d", input, p, training, 1);
}

Tensor dropout3d(const Tensor& input, double p, bool training) {
  return channel_dropout("dropout3d", input, p, training, 3);
}

Tensor alpha_dropout(const Tensor& x, double p, bool training) {
  check_p("alpha_dropout", p);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  // -selu's scale * alpha, and the affine map a (x or alpha') + b of PyTorch's alpha_dropout.
  constexpr double kAlpha = -1.7580993408473766;
  const double a = 1.0 / std::sqrt((1 - p) * (1 + p * kAlpha * kAlpha));
  const double b = -a * kAlpha * p;
  const Tensor keep =
      ge(rand(x.sizes(), {.dtype = kFloat32, .device = x.device()}), p).to(x.dtype());
  return (x * keep + (1.0 - keep) * kAlpha) * a + b;
}

}  // namespace ember::nn::functional
