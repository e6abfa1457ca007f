// ember/nn_ops.h: the neural-network ops with a backward of their own -- linear, layer_norm,
// mse_loss, binary_cross_entropy, conv2d and the 2-D poolings -- and the argument types they take.
// They are ops (src/ops/), and torch.nn.functional's names for them are their names:
// ember/nn/functional.h includes this.
#pragma once

#include <cstdint>
#include <tuple>

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

// A (depth, height, width) triple, likewise given as one number for all three or as three.
struct Size3d {
  int64_t d = 0, h = 0, w = 0;
  Size3d(int64_t all) : d(all), h(all), w(all) {}  // NOLINT
  Size3d(int64_t d, int64_t h, int64_t w) : d(d), h(h), w(w) {}
  bool operator==(const Size3d&) const = default;
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

// x: (..., *normalized_shape); weight, bias: normalized_shape or undefined -> x's shape. Each
// slice over the normalized dims is normalized by its mean and biased variance (plus eps).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

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

// (ops/conv_variants.cpp) The other convolutions, on conv2d and fold. conv1d: input (N, C, L),
// weight (O, C / groups, k) -> (N, O, (L + 2 p - d (k - 1) - 1) / s + 1). conv3d: input
// (N, C, D, H, W), weight (O, C / groups, kd, kh, kw) -> (N, O, od, oh, ow), each as conv2d's.
// Unbatched inputs (without N) are taken as in PyTorch.
struct Conv1dFuncOptions {
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
};
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv1dFuncOptions& options = {});
struct Conv3dFuncOptions {
  Size3d stride = 1;
  Size3d padding = 0;
  Size3d dilation = 1;
  int64_t groups = 1;
};
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv3dFuncOptions& options = {});

// The transposed convolutions (the gradient of conv2d / conv1d with respect to its input):
// input (N, C, H, W), weight (C, O / groups, kh, kw), bias (O) -> (N, O, oh, ow) with
// oh = (H - 1) s - 2 p + d (kh - 1) + output_padding + 1, likewise for W; conv_transpose1d on
// (N, C, L) with weight (C, O / groups, k).
struct ConvTranspose2dFuncOptions {
  Size2d stride = 1;
  Size2d padding = 0;
  Size2d output_padding = 0;  // must be smaller than stride or dilation
  int64_t groups = 1;
  Size2d dilation = 1;
};
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const ConvTranspose2dFuncOptions& options = {});
struct ConvTranspose1dFuncOptions {
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t output_padding = 0;
  int64_t groups = 1;
  int64_t dilation = 1;
};
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const ConvTranspose1dFuncOptions& options = {});

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

// (ops/pool_variants.cpp) The 1-D poolings, as the 2-D ones over an image one row high:
// input (N, C, L) or (C, L) -> (N, C, out); options as the 2-D ones' with one number each.
struct MaxPool1dOptions {
  int64_t stride = 0;  // 0 (the default): the kernel size
  int64_t padding = 0;
  int64_t dilation = 1;
  bool ceil_mode = false;
};
Tensor max_pool1d(const Tensor& input, int64_t kernel_size, const MaxPool1dOptions& options = {});
struct AvgPool1dOptions {
  int64_t stride = 0;  // 0 (the default): the kernel size
  int64_t padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;
};
Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, const AvgPool1dOptions& options = {});
Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size);
// Adaptive max pooling: the windows of adaptive_avg_pool2d, each one's maximum; the _with_indices
// forms also give its flat position in the input plane (y W + x; for 1-D the position in L).
Tensor adaptive_max_pool2d(const Tensor& input, Size2d output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            Size2d output_size);
Tensor adaptive_max_pool1d(const Tensor& input, int64_t output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            int64_t output_size);

struct FoldOptions {
  Size2d dilation = 1;
  Size2d padding = 0;
  Size2d stride = 1;
};
// unfold (im2col): input (N, C, H, W) -> (N, C kh kw, L), column l holding the l-th window
// (windows row by row, L = oh ow as conv2d's output). fold (col2im), its adjoint: input
// (N, C kh kw, L) -> (N, C, output_size), each pixel the sum of every column entry that reads
// it. Either takes an unbatched input (without N).
Tensor unfold(const Tensor& input, Size2d kernel_size, const FoldOptions& options = {});
Tensor fold(const Tensor& input, Size2d output_size, Size2d kernel_size,
            const FoldOptions& options = {});

}  // namespace ember::nn::functional
