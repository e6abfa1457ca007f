// ember/nn/functional.h: layers and losses as functions (torch.nn.functional), with PyTorch's
// reductions and numerically stable forms.
#pragma once

#include <optional>
#include <string>

#include "ember/tensor.h"

namespace ember::nn::functional {

enum class Reduction { None, Mean, Sum };
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;

// input, target: same shape (broadcasting is allowed, as in PyTorch).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);

struct CrossEntropyOptions {
  Reduction reduction = kMean;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  Tensor weight = Tensor();  // per-class weights (C)
};
// input: (N, C) or (C) or (N, C, d1, ...) logits; target: int64 class indices (N) / () / (N, d1,
// ...). Computed from log_softmax, so large logits are safe.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options = {});

struct NllLossOptions {
  Reduction reduction = kMean;
  int64_t ignore_index = -100;
  Tensor weight = Tensor();
};
// log_probs: (N, C) / (C) / (N, C, d1, ...); target as for cross_entropy.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const NllLossOptions& options = {});

// input: probabilities in [0, 1]; logs are clamped at -100 as in PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                            const Tensor& weight = Tensor());
// input: logits; stable for any magnitude. pos_weight scales the positive term per class.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        Reduction reduction = kMean, const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor());

// x: (..., in), weight: (out, in), bias: (out) -> (..., out)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// indices: int64 (any shape); weight: (num, dim) -> (..., dim)
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt);

}  // namespace ember::nn::functional

namespace ember::nn {
namespace F = functional;
}  // namespace ember::nn
