// ops/fused_optimizer.h: the fused optimizer update as an op (PyTorch's _fused_sgd_ / _fused_adam_)
// -- what SGD and Adam share: checking gradients, then one backend sgd_step or adam_step per
// device over every parameter.
#pragma once

#include <optional>
#include <vector>

#include "ember/tensor.h"
#include "kernels/op_params.h"

namespace ember::optim::detail {

// A parameter with a gradient, its state tensors (up to three), ready for a fused step.
struct Update {
  Tensor param, grad;
  Tensor state[3];
};

// The dtype of a parameter's state: `requested` if set -- only float32 for a float16 or bfloat16
// parameter, or the parameter's own dtype -- else the parameter's.
DType state_dtype(const char* op, const Tensor& param, std::optional<DType> requested);

// Checks that grad fits param and returns it contiguous.
Tensor checked_grad(const char* op, const Tensor& param);

// Runs the fused step over `updates`, one backend call per device: SGD's state[0] is the momentum
// buffer; Adam's are exp_avg, exp_avg_sq and max_exp_avg_sq.
void run(const SgdStep& step, const std::vector<Update>& updates);
void run(const AdamStep& step, const std::vector<Update>& updates);

}  // namespace ember::optim::detail
