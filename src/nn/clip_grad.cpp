// nn/clip_grad.cpp: clip_grad_norm_ and clip_grad_value_ (torch.nn.utils), without autograd.
#include <cmath>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/nn/utils.h"
#include "ember/ops.h"

namespace ember::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return zeros({});
  const Device device = grads[0].device();
  // Each gradient's norm in float32 (16-bit ones too), then the norm of those norms.
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) {
    EMBER_CHECK_KIND(Device, g.device() == device,
                     "[clip_grad_norm_] expected every gradient on one device, found ", device,
                     " and ", g.device());
    norms.push_back(linalg::vector_norm(g.to(kFloat32), norm_type));
  }
  Tensor total = linalg::vector_norm(stack(norms), norm_type);
  if (error_if_nonfinite) {
    double t = total.item<double>();
    EMBER_CHECK_KIND(Value, std::isfinite(t), "[clip_grad_norm_] The total norm of order ",
                     norm_type, " for gradients from `parameters` is non-finite (", t,
                     "), so it cannot be clipped. To disable this error and scale the gradients "
                     "by the non-finite norm anyway, set `error_if_nonfinite=false`");
  }
  // clamp(max_norm / (total + 1e-6), max=1): scaling by 1 leaves the gradients as they are.
  Tensor coef = clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
  for (Tensor g : grads) g.mul_(coef.to(g.dtype()));
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (Tensor g = p.grad(); g.defined()) g.clamp_(-clip_value, clip_value);
}

}  // namespace ember::nn::utils
