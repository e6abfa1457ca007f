// kernels/optim_update.h: one element of the fused SGD and Adam/AdamW updates, with PyTorch's
// order of operations, shared by the CPU loops and the CUDA kernel. The coefficients are
// converted from the step's doubles once per call (or thread), not per element.
#pragma once

#include <cmath>

#include "kernels/op_params.h"
#include "kernels/scalar_math.h"

namespace ember::optim_update {

template <class T>
struct SgdCoeffs {
  T lr, wd, momentum, damp;
  explicit EMBER_HOST_DEVICE SgdCoeffs(const SgdStep& s)
      : lr(static_cast<T>(s.lr)),
        wd(static_cast<T>(s.weight_decay)),
        momentum(static_cast<T>(s.momentum)),
        damp(static_cast<T>(1 - s.dampening)) {}
};

// p -= lr * d, d the (decayed, momentum-filtered) gradient; buf is the momentum buffer (read only
// when kMomentum, i.e. s.momentum != 0). Options that are the same for every element are selects,
// not branches, and the one that decides whether buf is touched is a template parameter: the CPU
// loop over this function then has no control flow and vectorizes.
template <bool kMomentum, class T>
EMBER_HOST_DEVICE inline void sgd(const SgdStep& s, const SgdCoeffs<T>& c, T& p, T g, T* buf) {
  T d = s.maximize ? -g : g;
  T decayed = d + c.wd * p;
  d = s.weight_decay != 0 ? decayed : d;
  if constexpr (kMomentum) {
    *buf = s.first_step ? d : c.momentum * *buf + c.damp * d;
    d = s.nesterov ? d + c.momentum * *buf : *buf;
  }
  p -= c.lr * d;
}

template <class T>
struct AdamCoeffs {
  T wd, decay, w1, b2, w2, step_size, bc2_sqrt, eps;
  // Whether L2 weight decay applies (decided once: `a && b` per element would be control flow).
  bool l2;
  explicit EMBER_HOST_DEVICE AdamCoeffs(const AdamStep& s)
      : wd(static_cast<T>(s.weight_decay)),
        decay(static_cast<T>(1 - s.lr * s.weight_decay)),
        w1(static_cast<T>(1 - s.beta1)),
        b2(static_cast<T>(s.beta2)),
        w2(static_cast<T>(1 - s.beta2)),
        step_size(static_cast<T>(s.lr / s.bias_correction1)),
        bc2_sqrt(static_cast<T>(std::sqrt(s.bias_correction2))),
        eps(static_cast<T>(s.eps)),
        l2(!s.decoupled_weight_decay && s.weight_decay != 0) {}
};

// Adam (or AdamW with decoupled weight decay) on one element: m = exp_avg, v = exp_avg_sq, vmax =
// max_exp_avg_sq (read only when kAmsgrad, i.e. s.amsgrad). As in sgd, per-step options are
// selects and kAmsgrad a template parameter, so the CPU loop vectorizes.
template <bool kAmsgrad, class T>
EMBER_HOST_DEVICE inline void adam(const AdamStep& s, const AdamCoeffs<T>& c, T& p, T g, T& m, T& v,
                                   T* vmax) {
  T d = s.maximize ? -g : g;
  T decayed_p = p * c.decay;
  T decayed_d = d + c.wd * p;
  p = s.decoupled_weight_decay ? decayed_p : p;
  d = c.l2 ? decayed_d : d;
  // exp_avg.lerp_(grad, 1 - beta1), as torch.lerp computes it.
  m = c.w1 < T(0.5) ? m + c.w1 * (d - m) : d - (d - m) * (T(1) - c.w1);
  v = v * c.b2 + c.w2 * d * d;
  T second = v;
  if constexpr (kAmsgrad) {
    *vmax = *vmax < v ? v : *vmax;  // std::max(vmax, v)
    second = *vmax;
  }
  T denom = std::sqrt(second) / c.bc2_sqrt + c.eps;
  p += -c.step_size * (m / denom);
}

}  // namespace ember::optim_update
