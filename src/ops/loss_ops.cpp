// ops/loss_ops.cpp: the losses with a backward of their own -- mse_loss (one node for equal shapes
// and dtypes, the composite formula otherwise) and binary_cross_entropy (PyTorch's gradients) --
// and the reduction and shape check every loss shares.
#include "autograd/function.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ops/loss_helpers.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace detail {

Tensor reduce(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return loss.sum();
    case Reduction::Mean:
      break;
  }
  return loss.mean();
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  EMBER_CHECK_KIND(Shape, input.sizes() == target.sizes(), "[", op, "] Using a target size (",
                   shape_str(target.sizes()), ") that is different to the input size (",
                   shape_str(input.sizes()), ") is not supported; reshape the target to match");
}

}  // namespace detail

using detail::check_same_shape;
using detail::reduce;

namespace {

// -(y log x + (1 - y) log(1 - x)) element-wise, logs clamped at -100, with PyTorch's gradients
// (binary_cross_entropy_backward): d/dx = (x - y) / max(x (1 - x), 1e-12) and d/dy = -logit(x).
// The chain rule through the clamped logs would give 0 / 0 = NaN at x = 0 and x = 1, which a
// saturated float32 sigmoid produces.
Tensor bce_elementwise(const Tensor& x, const Tensor& y) {
  Tensor loss;
  {
    NoGradGuard no_grad;
    loss = -(y * clamp(log(x), -100.0) + (1 - y) * clamp(log(1 - x), -100.0));
  }
  autograd::record("BinaryCrossEntropyBackward0", {&x, &y}, loss,
                   [sx = autograd::SavedTensor(x), sy = autograd::SavedTensor(y),
                    x_grad = x.requires_grad(), y_grad = y.requires_grad(), x_dtype = x.dtype(),
                    y_dtype = y.dtype()](const Tensor& g) -> std::vector<Tensor> {
                     Tensor x = sx.unpack(), y = sy.unpack(), gx, gy;
                     if (x_grad) gx = (g * (x - y) / clamp((1 - x) * x, 1e-12)).to(x_dtype);
                     if (y_grad) gy = (g * (log(1 - x) - log(x))).to(y_dtype);
                     return {gx, gy};
                   });
  return loss;
}

}  // namespace

// One node for the whole loss, as PyTorch's MseLossBackward0: d = input - target is kept, and
// backward is d * 2g (/ numel for the mean). Broadcasting shapes or mixed dtypes take the
// composite path.
Tensor mse_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  const Tensor input = autocast_float32(input_in), target = autocast_float32(target_in);
  if (input.sizes() != target.sizes() || input.dtype() != target.dtype()) {
    Tensor d = input - target;
    return reduce(d * d, reduction);
  }
  Tensor d, loss;
  {
    NoGradGuard no_grad;
    d = input - target;
    loss = reduce(d * d, reduction);
  }
  double scale = reduction == Reduction::Mean ? 2.0 / static_cast<double>(input.numel()) : 2.0;
  autograd::record("MseLossBackward0", {&input, &target}, loss,
                   [d, scale, input_grad = input.requires_grad(),
                    target_grad = target.requires_grad()](const Tensor& g) -> std::vector<Tensor> {
                     Tensor gi = d * (g * scale);
                     return {input_grad ? gi : Tensor(), target_grad ? -gi : Tensor()};
                   });
  return loss;
}

Tensor binary_cross_entropy(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                            const Tensor& weight_in) {
  const Tensor input = autocast_float32(input_in), target = autocast_float32(target_in),
               weight = autocast_float32(weight_in);
  check_same_shape("binary_cross_entropy", input, target);
  if (input.numel() > 0) {
    NoGradGuard no_grad;
    EMBER_CHECK(input.min().item<double>() >= 0 && input.max().item<double>() <= 1,
                "[binary_cross_entropy] all elements of input should be between 0 and 1; pass "
                "logits to binary_cross_entropy_with_logits instead");
  }
  Tensor loss = bce_elementwise(input, target);
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

}  // namespace ember::nn::functional
