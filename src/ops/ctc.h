// ops/ctc.h: the CTC forward-backward op behind F::ctc_loss (nn/ctc_loss.cpp), with PyTorch's
// gradient recorded as its own backward.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn::functional::detail {

// log_probs: (T, N, C) floating, log-softmaxed over C; targets: N rows of max_target_length
// labels (host, row-major, row n's first target_lengths[n] used); input_lengths (N) in [0, T] and
// target_lengths (N) in [0, max_target_length] (host, checked by the caller) -> (N) negative
// log-likelihoods, inf where no alignment exists (0 with zero_infinity).
// The gradient is PyTorch's: exp(log_probs) minus each class's posterior, that is the gradient
// with respect to the logits under log_softmax; 0 beyond each input length, NaN for an infinite
// loss (0 with zero_infinity); a -inf log-probability gets 0 rather than NaN.
Tensor ctc_negative_log_likelihood(const Tensor& log_probs, const std::vector<int64_t>& targets,
                                   int64_t max_target_length,
                                   const std::vector<int64_t>& input_lengths,
                                   const std::vector<int64_t>& target_lengths, int64_t blank,
                                   bool zero_infinity);

}  // namespace ember::nn::functional::detail
