// ops/fused_optimizer.h: the fused optimizer update as an op (PyTorch's _fused_sgd_ / _fused_adam_)
// -- what SGD and Adam share: checking gradients, then one backend optimizer_step per device and
// dtype over every parameter.
#pragma once

#include <vector>

#include "ember/tensor.h"
#include "kernels/op_params.h"

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
