// optim/param_update.h: what SGD and Adam share -- gathering the parameters that have gradients
// and handing them to the device's fused optimizer_step, one call per device and dtype.
#pragma once

#include <vector>

#include "core/backend.h"
#include "ember/optim/optimizer.h"

namespace ember::optim::detail {

// A parameter with a gradient, its state tensors (up to three), ready for optimizer_step.
struct Update {
  Tensor param, grad;
  Tensor state[3];
};

// Checks that grad fits param and returns it contiguous.
Tensor checked_grad(const char* op, const Tensor& param);

// Runs the fused step over `updates` (grouped by device and dtype).
void run(const OptimizerStep& step, const std::vector<Update>& updates);

}  // namespace ember::optim::detail
