// nn/more_losses.cpp: the losses of torch.nn.functional composed of element-wise ops and
// reductions (autograd follows): smooth_l1, huber, kl_div, poisson_nll, gaussian_nll,
// margin_ranking, hinge_embedding, cosine_embedding, triplet_margin and multilabel_soft_margin,
// with PyTorch's formulas and defaults.
#include <cmath>
#include <numbers>

#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/loss_helpers.h"

namespace ember::nn::functional {

using detail::reduce;

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  EMBER_CHECK_KIND(Value, beta >= 0, "[smooth_l1_loss] beta must be non-negative, got ", beta);
  Tensor d = abs(input - target);
  if (beta == 0) return reduce(d, reduction);
  return reduce(where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  EMBER_CHECK_KIND(Value, delta > 0, "[huber_loss] delta must be positive, got ", delta);
  Tensor d = abs(input - target);
  return reduce(where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  Tensor loss;
  if (log_target) {
    loss = exp(target) * (target - input);
  } else {
    // target log(target), 0 where target is 0 (xlogy), without a NaN gradient there.
    Tensor safe = where(target > 0, target, 1.0);
    loss = where(target > 0, target * (log(safe) - input), -target * input);
  }
  return reduce(loss, reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction reduction) {
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's term target log(target) - target + log(2 pi target) / 2, where target > 1.
    Tensor safe = where(target > 1, target, 1.0);
    Tensor stirling = safe * log(safe) - safe + 0.5 * log(2 * std::numbers::pi * safe);
    loss = loss + where(target > 1, stirling, 0.0);
  }
  return reduce(loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var0, bool full,
                         double eps, Reduction reduction) {
  // var may lack input's last dim (one variance per sample) or have it as 1 (broadcast).
  Tensor var = var0.dim() == input.dim() - 1 ? var0.unsqueeze(-1) : var0;
  EMBER_CHECK_KIND(
      Shape,
      var.dim() == input.dim() && broadcast_shapes(var.sizes(), input.sizes()) == input.sizes(),
      "[gaussian_nll_loss] var of shape ", shape_str(var0.sizes()), " does not fit input ",
      shape_str(input.sizes()),
      ": give it input's shape, input's without the last dim, or a last dim of 1");
  {
    NoGradGuard no_grad;
    EMBER_CHECK_KIND(Value, var.numel() == 0 || min(var).item<double>() >= 0,
                     "[gaussian_nll_loss] var has negative entry/entries");
  }
  // Clamped at eps for the value only: the gradient passes as if unclamped (PyTorch clamps
  // under no_grad).
  Tensor clamped = var + (clamp(var.detach(), eps, std::nullopt) - var.detach());
  Tensor d = input - target;
  Tensor loss = 0.5 * (log(clamped) + d * d / clamped);
  if (full) loss = loss + 0.5 * std::log(2 * std::numbers::pi);
  return reduce(loss, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, Reduction reduction) {
  return reduce(clamp(-target * (input1 - input2) + margin, 0.0, std::nullopt), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            Reduction reduction) {
  Tensor margin_part = where(target != 1, clamp(margin - input, 0.0, std::nullopt), 0.0);
  Tensor self_part = where(target != -1, input, 0.0);
  return reduce(margin_part + self_part, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, Reduction reduction) {
  EMBER_CHECK_KIND(Shape, input1.dim() == 1 || input1.dim() == 2,
                   "[cosine_embedding_loss] expected 1-D or 2-D inputs, got ",
                   shape_str(input1.sizes()));
  const double kEps = 1e-12;
  const int64_t dim = input1.dim() - 1;
  Tensor prod = sum(input1 * input2, {dim});
  Tensor m1 = sum(input1 * input1, {dim}) + kEps, m2 = sum(input2 * input2, {dim}) + kEps;
  Tensor cos = prod / sqrt(m1 * m2);
  Tensor loss =
      where(target == 1, 1 - cos, where(target == -1, clamp(cos - margin, 0.0, std::nullopt), 0.0));
  return reduce(loss, reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction reduction) {
  Tensor d_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor d_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps));
  return reduce(clamp(margin + d_pos - d_neg, 0.0, std::nullopt), reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction) {
  Tensor loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input));
  if (weight.defined()) loss = loss * weight;
  const int64_t classes = input.dim() == 0 ? 1 : input.size(-1);
  return reduce(sum(loss, {input.dim() == 0 ? 0 : -1}) / static_cast<double>(classes), reduction);
}

}  // namespace ember::nn::functional
