// nn/normalization.cpp: batch_norm (batch statistics with in-place running-stat updates while
// training, running statistics otherwise) and dropout2d, composed from tensor ops.
#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

void check_channel_tensor(const char* what, const Tensor& t, int64_t channels) {
  if (!t.defined()) return;
  EMBER_CHECK_KIND(Shape, t.numel() == channels, "[batch_norm] ", what, " should contain ",
                   channels, " elements not ", t.numel(), " (got shape ", shape_str(t.sizes()),
                   ")");
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 2,
                   "[batch_norm] expected input of shape (N, C, ...), "
                   "got ",
                   shape_str(input.sizes()));
  EMBER_CHECK_KIND(DType, input.is_floating_point(),
                   "[batch_norm] expected a floating-point "
                   "input, got ",
                   input.dtype());
  if (is_reduced_float(input.dtype())) {
    // float16 and bfloat16 normalize in float32 and round once; 16-bit running statistics are
    // updated through float32 copies.
    Tensor mean32 = to_opmath(running_mean), var32 = to_opmath(running_var);
    Tensor y = batch_norm(to_opmath(input), mean32, var32, to_opmath(weight), to_opmath(bias),
                          training, momentum, eps)
                   .to(input.dtype());
    if (training) {
      NoGradGuard no_grad;
      for (auto [stat, wide] : {std::pair{running_mean, mean32}, std::pair{running_var, var32}})
        if (stat.defined() && !stat.is_same(wide)) stat.detach().copy_(wide);
    }
    return y;
  }
  int64_t channels = input.size(1);
  check_channel_tensor("running_mean", running_mean, channels);
  check_channel_tensor("running_var", running_var, channels);
  check_channel_tensor("weight", weight, channels);
  check_channel_tensor("bias", bias, channels);
  EMBER_CHECK(running_mean.defined() == running_var.defined(),
              "[batch_norm] running_mean and "
              "running_var must both be given or both be undefined");
  for (const Tensor* t : {&running_mean, &running_var, &weight, &bias})
    if (t->defined()) common_device("batch_norm", {&input, t});

  Shape dims{0}, channel_shape(input.dim(), 1);  // statistics over all dims but C
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  channel_shape[1] = channels;
  Tensor y;
  if (training || !running_mean.defined()) {
    int64_t count = channels == 0 ? 0 : input.numel() / channels;
    EMBER_CHECK(count > 1,
                "[batch_norm] Expected more than 1 value per channel when training, "
                "got input size ",
                shape_str(input.sizes()));
    Tensor mean = input.mean(dims, true);
    Tensor centered = input - mean;
    Tensor var = (centered * centered).mean(dims, true);  // biased, for normalizing
    y = centered * rsqrt(var + eps);
    if (training && running_mean.defined()) {
      NoGradGuard no_grad;
      double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      Tensor rm = running_mean, rv = running_var;
      rm.mul_(1 - momentum).add_(mean.view({channels}) * momentum);
      rv.mul_(1 - momentum).add_(var.view({channels}) * (momentum * unbias));
    }
  } else {
    y = (input - running_mean.view(channel_shape)) * rsqrt(running_var.view(channel_shape) + eps);
  }
  if (weight.defined()) y = y * weight.view(channel_shape);
  if (bias.defined()) y = y + bias.view(channel_shape);
  return y;
}

Tensor dropout2d(const Tensor& input, double p, bool training) {
  EMBER_CHECK(p >= 0 && p <= 1,
              "[dropout2d] dropout probability has to be between 0 and 1, but "
              "got ",
              p);
  EMBER_CHECK_KIND(Shape, input.dim() == 3 || input.dim() == 4,
                   "[dropout2d] expected a 3-D or "
                   "4-D input, got shape ",
                   shape_str(input.sizes()));
  if (!training || p == 0) return input;
  // One draw per (N, C) channel, broadcast over the spatial dims.
  Shape mask_shape(input.dim(), 1);
  mask_shape[0] = input.size(0);
  mask_shape[1] = input.size(1);
  if (p == 1) return input * 0.0;
  Tensor keep =
      (rand(mask_shape, {.dtype = input.dtype(), .device = input.device()}) >= p).to(input.dtype());
  return input * (keep * (1.0 / (1.0 - p)));
}

}  // namespace ember::nn::functional
