// ember/nn_ops.h: the neural-network ops with a backward of their own -- linear, mse_loss,
// binary_cross_entropy, conv2d and the 2-D poolings -- and the argument types they take. They are
// ops (src/ops/), and torch.nn.functional's names for them are their names: ember/nn/functional.h
// includes this.
#pragma once

#include <cstdint>

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

// input: probabilities in [0, 1]; logs are clamped at -100 as in PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = kMean,
                            const Tensor& weight = Tensor());

// x: (..., in), weight: (out, in), bias: (out) -> (..., out)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

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

}  // namespace ember::nn::functional
