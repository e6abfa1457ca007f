// nn/group_norms.cpp: rms_norm, group_norm and instance_norm (torch.nn.functional), composed of
// means and element-wise ops; statistics of 16-bit inputs are taken in float32 and the result
// rounded once. softmin is softmax of the negated input.
#include <limits>

#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {
// The trailing dims of x matching `shape`, as reduction dims; throws when they do not match.
Shape trailing_dims(const char* op, const Tensor& x, const Shape& shape) {
  const auto k = static_cast<int64_t>(shape.size());
  bool fits = k <= x.dim();
  for (int64_t i = 0; fits && i < k; ++i)
    fits = x.size(x.dim() - k + i) == shape[static_cast<size_t>(i)];
  EMBER_CHECK_KIND(Shape, fits, "[", op, "] Given normalized_shape=", shape_str(shape),
                   ", expected input with shape [*, ", shape_str(shape),
                   "], but got input of size ", shape_str(x.sizes()));
  Shape dims;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
  return dims;
}
}  // namespace

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  if (is_reduced_float(x.dtype()))
    return rms_norm(to_opmath(x), normalized_shape, to_opmath(weight), eps).to(x.dtype());
  Shape dims = trailing_dims("rms_norm", x, normalized_shape);
  // PyTorch's default eps is the input dtype's machine epsilon.
  double e = eps.value_or(x.dtype() == kFloat64 ? std::numeric_limits<double>::epsilon()
                                                : std::numeric_limits<float>::epsilon());
  Tensor y = x * rsqrt(mean(x * x, dims, true) + e);
  return weight.defined() ? y * weight : y;
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  EMBER_CHECK_KIND(Shape, x.dim() >= 2,
                   "[group_norm] Expected at least 2 dimensions for input "
                   "tensor but received ",
                   x.dim());
  const int64_t n = x.size(0), c = x.size(1);
  EMBER_CHECK_KIND(Shape, num_groups > 0 && c % num_groups == 0,
                   "[group_norm] Expected number of "
                   "channels in input to be divisible by num_groups, but got input of shape ",
                   shape_str(x.sizes()), " and num_groups=", num_groups);
  if (is_reduced_float(x.dtype()))
    return group_norm(to_opmath(x), num_groups, to_opmath(weight), to_opmath(bias), eps)
        .to(x.dtype());
  Tensor g = x.reshape({n, num_groups, -1});
  Tensor centered = g - mean(g, {2}, true);
  Tensor y = (centered * rsqrt(mean(centered * centered, {2}, true) + eps)).view(x.sizes());
  // Per-channel affine: weight and bias (C) broadcast over (N, C, *).
  Shape channel(static_cast<size_t>(x.dim()), 1);
  channel[1] = c;
  if (weight.defined()) y = y * weight.view(channel);
  if (bias.defined()) y = y + bias.view(channel);
  return y;
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  EMBER_CHECK_KIND(Shape, x.dim() >= 3, "[instance_norm] expected (N, C, *) input, got ",
                   shape_str(x.sizes()));
  return group_norm(x, x.size(1), weight, bias, eps);
}

Tensor softmin(const Tensor& x, int64_t dim) {
  return softmax(-x, dim);
}

Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta, double k) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 3,
                   "[local_response_norm] Expected 3D or higher dimensionality input (got ",
                   input.dim(), " dimensions)");
  EMBER_CHECK(size > 0, "[local_response_norm] size must be positive, got ", size);
  const int64_t c = input.size(1), before = size / 2, after = (size - 1) / 2;
  Tensor sq = input * input;
  Shape pad_shape = input.sizes();
  const auto opts = TensorOptions{.dtype = input.dtype(), .device = input.device()};
  pad_shape[1] = before;
  Tensor lead = zeros(pad_shape, opts);
  pad_shape[1] = after;
  Tensor padded = cat({lead, sq, zeros(pad_shape, opts)}, 1);  // (N, C + size - 1, *)
  Tensor window = padded.narrow(1, 0, c);
  for (int64_t j = 1; j < size; ++j) window = window + padded.narrow(1, j, c);
  return input / pow(window * (alpha / static_cast<double>(size)) + k, beta);
}

}  // namespace ember::nn::functional
