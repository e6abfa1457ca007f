// ember/nn/utils.h: torch.nn.utils's gradient clipping, applied to the .grad of parameters in
// place (parameters without a gradient are skipped).
#pragma once

#include <vector>

#include "ember/tensor.h"

namespace ember::nn::utils {

// Scales every gradient by max_norm / (total + 1e-6) when the total norm (the norm_type norm of
// all gradients together; inf for the largest magnitude) exceeds max_norm. Returns the total norm
// (float32 0-dim on the gradients' device; 0 with no gradients). With error_if_nonfinite, a NaN or
// infinite total is an error and nothing is changed.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
// Clamps every gradient to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace ember::nn::utils
