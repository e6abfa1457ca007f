// backend/optim_update.h: one element of the fused SGD and Adam/AdamW updates, with PyTorch's
// order of operations, shared by the CPU loops and the CUDA kernel. The coefficients are
// converted from the step's doubles once per call (or thread), not per element.
#pragma once

#include <cmath>

#include "core/backend.h"
#include "ops/scalar_math.h"

namespace ember::optim_update {

template <class T>
struct SgdCoeffs {
  T lr, wd, momentum, damp;
  explicit EMBER_HOST_DEVICE SgdCoeffs(const OptimizerStep& s)
      : lr(static_cast<T>(s.lr)),
        wd(static_cast<T>(s.weight_decay)),
        momentum(static_cast<T>(s.momentum)),
        damp(static_cast<T>(1 - s.dampening)) {}
};

// p -= lr * d, d the (decayed, momentum-filtered) gradient; buf is the momentum buffer (unused
// without momentum).
template <class T>
EMBER_HOST_DEVICE inline void sgd(const OptimizerStep& s, const SgdCoeffs<T>& c, T& p, T g,
                                  T* buf) {
  T d = s.maximize ? -g : g;
  if (s.weight_decay != 0) d += c.wd * p;
  if (s.momentum != 0) {
    *buf = s.first_step ? d : c.momentum * *buf + c.damp * d;
    d = s.nesterov ? d + c.momentum * *buf : *buf;
  }
  p -= c.lr * d;
}

template <class T>
struct AdamCoeffs {
  T wd, decay, w1, b2, w2, step_size, bc2_sqrt, eps;
  explicit EMBER_HOST_DEVICE AdamCoeffs(const OptimizerStep& s)
      : wd(static_cast<T>(s.weight_decay)),
        decay(static_cast<T>(1 - s.lr * s.weight_decay)),
        w1(static_cast<T>(1 - s.beta1)),
        b2(static_cast<T>(s.beta2)),
        w2(static_cast<T>(1 - s.beta2)),
        step_size(static_cast<T>(s.lr / s.bias_correction1)),
        bc2_sqrt(static_cast<T>(std::sqrt(s.bias_correction2))),
        eps(static_cast<T>(s.eps)) {}
};

// Adam (or AdamW with decoupled weight decay) on one element: m = exp_avg, v = exp_avg_sq, vmax =
// max_exp_avg_sq (amsgrad only).
template <class T>
EMBER_HOST_DEVICE inline void adam(const OptimizerStep& s, const AdamCoeffs<T>& c, T& p, T g, T& m,
                                   T& v, T* vmax) {
  T d = s.maximize ? -g : g;
  if (s.decoupled_weight_decay)
    p *= c.decay;
  else if (s.weight_decay != 0)
    d += c.wd * p;
  // exp_avg.lerp_(grad, 1 - beta1), as torch.lerp computes it.
  m = c.w1 < T(0.5) ? m + c.w1 * (d - m) : d - (d - m) * (T(1) - c.w1);
  v = v * c.b2 + c.w2 * d * d;
  T second = v;
  if (s.amsgrad) {
    *vmax = *vmax < v ? v : *vmax;  // std::max(vmax, v)
    second = *vmax;
  }
  T denom = std::sqrt(second) / c.bc2_sqrt + c.eps;
  p += -c.step_size * (m / denom);
}

}  // namespace ember::optim_update
