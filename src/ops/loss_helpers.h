// ops/loss_helpers.h: what the losses share -- applying a Reduction, checking that input and
// target have one shape.
#pragma once

#include "ember/nn_ops.h"

namespace ember::nn::functional::detail {

Tensor reduce(const Tensor& loss, Reduction reduction);
void check_same_shape(const char* op, const Tensor& input, const Tensor& target);

}  // namespace ember::nn::functional::detail
