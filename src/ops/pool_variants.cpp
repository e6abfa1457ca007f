// ops/pool_variants.cpp: the 1-D poolings on the 2-D ones (an image one row high), and adaptive
// max pooling as two separable passes (a window's maximum is the maximum over its rows of each
// row's maximum), each a gather of the windows' taps and a max over them.
#include <algorithm>
#include <vector>

#include "ember/ops.h"
#include "ops/image_ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

Tensor as_row_image(const char* op, const Tensor& input) {
  EMBER_CHECK_KIND(Shape, input.dim() == 2 || input.dim() == 3, "[", op,
                   "] Expected 2D (unbatched) or 3D (batched) input, but got input of size: ",
                   shape_str(input.sizes()));
  return input.unsqueeze(-2);
}

// Adaptive windows of `in` positions into `out`: (out, taps) positions, window i covering
// floor(i in / out) up to ceil((i + 1) in / out), shorter windows repeating their last position.
Tensor window_taps(int64_t in, int64_t out, const Device& device, int64_t& taps) {
  taps = 0;
  for (int64_t i = 0; i < out; ++i)
    taps = std::max(taps, ((i + 1) * in + out - 1) / out - i * in / out);
  std::vector<int64_t> pos;
  pos.reserve(out * taps);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t t = 0; t < taps; ++t) pos.push_back(std::min(start + t, end - 1));
  }
  return from_vector(pos, Shape{out * taps}, {.dtype = kInt64, .device = device});
}

// Maximum over the adaptive windows along dim d of x: (values, positions along d).
std::tuple<Tensor, Tensor> adaptive_max_along(const Tensor& x, int64_t d, int64_t out) {
  int64_t taps = 0;
  Tensor pos = window_taps(x.size(d), out, x.device(), taps);
  Shape split = x.sizes();
  split[d] = out;
  split.insert(split.begin() + d + 1, taps);
  auto [values, which] = x.index_select(d, pos).view(split).max(d + 1);
  // The chosen tap's position, pos[i, which]: pos as (1.., out, taps, 1..) against which.
  Shape lookup(x.dim() + 1, 1);
  lookup[d] = out;
  lookup[d + 1] = taps;
  Shape expand_to = which.sizes();
  expand_to.insert(expand_to.begin() + d + 1, taps);
  Tensor positions =
      pos.view(lookup).expand(expand_to).gather(d + 1, which.unsqueeze(d + 1)).squeeze(d + 1);
  return {values, positions};
}

}  // namespace

Tensor max_pool1d(const Tensor& input, int64_t kernel, const MaxPool1dOptions& o) {
  Tensor y = max_pool2d(as_row_image("max_pool1d", input), {1, kernel},
                        {.stride = {1, o.stride == 0 ? kernel : o.stride},
                         .padding = {0, o.padding},
                         .dilation = {1, o.dilation},
                         .ceil_mode = o.ceil_mode});
  return y.squeeze(-2);
}

Tensor avg_pool1d(const Tensor& input, int64_t kernel, const AvgPool1dOptions& o) {
  Tensor y = avg_pool2d(as_row_image("avg_pool1d", input), {1, kernel},
                        {.stride = {1, o.stride == 0 ? kernel : o.stride},
                         .padding = {0, o.padding},
                         .ceil_mode = o.ceil_mode,
                         .count_include_pad = o.count_include_pad});
  return y.squeeze(-2);
}

Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size) {
  return adaptive_avg_pool2d(as_row_image("adaptive_avg_pool1d", input), {1, output_size})
      .squeeze(-2);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            Size2d output_size) {
  image::check_floating("adaptive_max_pool2d", input);
  Tensor x = image::as_batched("adaptive_max_pool2d", input);
  EMBER_CHECK(output_size.h > 0 && output_size.w > 0,
              "[adaptive_max_pool2d] output_size must be positive, got (", output_size.h, ", ",
              output_size.w, ")");
  EMBER_CHECK_KIND(Shape, x.size(1) > 0 && x.size(2) > 0 && x.size(3) > 0,
                   "[adaptive_max_pool2d] Expected input to have non-zero size for non-batch "
                   "dimensions, but input has sizes ",
                   shape_str(input.sizes()));
  auto [by_cols, cols] = adaptive_max_along(x, 3, output_size.w);       // (N, C, H, ow)
  auto [values, rows] = adaptive_max_along(by_cols, 2, output_size.h);  // (N, C, oh, ow)
  Tensor indices = rows * x.size(3) + cols.gather(2, rows);
  if (input.dim() == 3) return {values.squeeze(0), indices.squeeze(0)};
  return {values, indices};
}

Tensor adaptive_max_pool2d(const Tensor& input, Size2d output_size) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, output_size));
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            int64_t output_size) {
  auto [values, indices] = adaptive_max_pool2d_with_indices(
      as_row_image("adaptive_max_pool1d", input), {1, output_size});
  return {values.squeeze(-2), indices.squeeze(-2)};
}

Tensor adaptive_max_pool1d(const Tensor& input, int64_t output_size) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, output_size));
}

}  // namespace ember::nn::functional
