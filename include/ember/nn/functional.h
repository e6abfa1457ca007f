// ember/nn/functional.h: layers and losses as functions (torch.nn.functional), with PyTorch's
// reductions and numerically stable forms.
#pragma once

#include <optional>
#include <string>

#include "ember/tensor.h"

namespace ember::nn {

// A (height, width) pair of sizes that, as PyTorch's arguments, may be given as one number for
// both: `.stride = 2` or `.stride = {2, 1}`.
struct Size2d {
  int64_t h = 0, w = 0;
  Size2d(int64_t both) : h(both), w(both) {}  // NOLINT
  Size2d(int64_t h, int64_t w) : h(h), w(w) {}
  bool operator==(const Size2d&) const = default;
};

}  // namespace ember::nn

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
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options = {});

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
                                        Reduction reduction = kMean,
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor());

// x: (..., in), weight: (out, in), bias: (out) -> (..., out)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// indices: int64 (any shape); weight: (num, dim) -> (..., dim)
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<int64_t> padding_idx = std::nullopt);

// --- image layers; input: (N, C, H, W), or (C, H, W) for one unbatched image.

struct Conv2dFuncOptions {
  Size2d stride = 1;
  Size2d padding = 0;
  Size2d dilation = 1;
  int64_t groups = 1;
};
// input: (N, C, H, W); weight: (O, C / groups, kh, kw); bias: (O) or undefined
// -> (N, O, (H + 2 ph - dh (kh - 1) - 1) / sh + 1, likewise for W). Computed as im2col + GEMM.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv2dFuncOptions& options = {});

struct MaxPool2dOptions {
  Size2d stride = 0;   // 0 (the default): the kernel size
  Size2d padding = 0;  // padding reads as -infinity
  Size2d dilation = 1;
  bool ceil_mode = false;
};
// input: (N, C, H, W) -> (N, C, oh, ow), the maximum of each window.
Tensor max_pool2d(const Tensor& input, Size2d kernel_size, const MaxPool2dOptions& options = {});

struct AvgPool2dOptions {
  Size2d stride = 0;   // 0 (the default): the kernel size
  Size2d padding = 0;  // padding reads as 0
  bool ceil_mode = false;
  bool count_include_pad = true;  // whether padding counts in each window's divisor
};
// input: (N, C, H, W) -> (N, C, oh, ow), the mean of each window.
Tensor avg_pool2d(const Tensor& input, Size2d kernel_size, const AvgPool2dOptions& options = {});
// input: (N, C, H, W) -> (N, C, oh, ow): output (i, j) averages rows floor(i H / oh) up to
// ceil((i + 1) H / oh), and likewise for columns.
Tensor adaptive_avg_pool2d(const Tensor& input, Size2d output_size);

// input: (N, C), (N, C, L) or (N, C, H, W); running_mean, running_var, weight, bias: (C) or
// undefined. Training normalizes with the batch statistics and, when the running tensors are
// given, updates them in place: running = (1 - momentum) running + momentum batch, with the
// unbiased batch variance. Otherwise normalizes with the running statistics.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5);
// input: (N, C, H, W), or (N, C, L) as PyTorch reads a 3-D input; zeroes whole channels with
// probability p while training, scaling the rest by 1 / (1 - p).
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true);

}  // namespace ember::nn::functional

namespace ember::nn {
namespace F = functional;
}  // namespace ember::nn
