// nn/losses.cpp: loss modules forwarding to nn/functional.h.
#include "ember/nn/losses.h"

namespace ember::nn {

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::mse_loss(input, target, reduction);
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::l1_loss(input, target, reduction);
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::cross_entropy(input, target, options);
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::nll_loss(input, target, options);
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy(input, target, reduction);
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy_with_logits(input, target, reduction, Tensor(), pos_weight);
}
Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) const {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                     zero_infinity);
}

}  // namespace ember::nn
