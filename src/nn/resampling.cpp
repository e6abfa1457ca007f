// nn/resampling.cpp: F::interpolate (nearest, nearest-exact, linear, bilinear, bicubic,
// trilinear and area, PyTorch's source-coordinate rules) as separable passes, one spatial dim at
// a time, each a gather of every output's taps and their weighted sum; and the reshuffles
// pixel_shuffle, pixel_unshuffle and channel_shuffle as views and one permuted copy.
#include <cmath>
#include <vector>

#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

// One dim's resampling: output position i reads taps index[i * taps + t] weighted by
// weight[i * taps + t] (no weights: one tap, a copy).
struct Taps {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

// PyTorch's area_pixel_compute_scale: the source step per output step.
double source_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners)
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
  if (scale && *scale > 0) return 1.0 / *scale;
  return static_cast<double>(in) / static_cast<double>(out);
}

Taps nearest_taps(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  // PyTorch computes the nearest scale and index in float32.
  const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                      : static_cast<float>(in) / static_cast<float>(out);
  Taps t;
  for (int64_t i = 0; i < out; ++i) {
    const float at = exact ? (static_cast<float>(i) + 0.5f) * s : static_cast<float>(i) * s;
    t.index.push_back(std::min(static_cast<int64_t>(std::floor(at)), in - 1));
  }
  return t;
}

Taps linear_taps(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  const double s = source_scale(in, out, align, scale);
  Taps t{.taps = 2, .index = {}, .weight = {}};
  for (int64_t i = 0; i < out; ++i) {
    double src = align ? s * static_cast<double>(i) : s * (static_cast<double>(i) + 0.5) - 0.5;
    if (src < 0) src = 0;
    const auto i0 = static_cast<int64_t>(src);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const double lambda = src - static_cast<double>(i0);
    t.index.insert(t.index.end(), {i0, i1});
    t.weight.insert(t.weight.end(), {1 - lambda, lambda});
  }
  return t;
}

Taps cubic_taps(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  constexpr double A = -0.75;  // PyTorch's (and OpenCV's) cubic convolution coefficient
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };       // |x| <= 1
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  const double s = source_scale(in, out, align, scale);
  Taps t{.taps = 4, .index = {}, .weight = {}};
  for (int64_t i = 0; i < out; ++i) {
    const double src =
        align ? s * static_cast<double>(i) : s * (static_cast<double>(i) + 0.5) - 0.5;
    const double base = std::floor(src), f = src - base;
    const auto b = static_cast<int64_t>(base);
    for (int64_t k = -1; k <= 2; ++k) t.index.push_back(std::clamp<int64_t>(b + k, 0, in - 1));
    t.weight.insert(t.weight.end(), {far(f + 1), near(f), near(1 - f), far(2 - f)});
  }
  return t;
}

// x resampled along dim d to `out` positions by t.
Tensor resample_dim(const Tensor& x, int64_t d, int64_t out, const Taps& t) {
  Tensor index = from_vector(t.index, Shape{out * t.taps}, {.dtype = kInt64, .device = x.device()});
  Tensor picked = x.index_select(d, index);
  if (t.weight.empty()) return picked;
  Shape split = x.sizes();
  split[d] = out;
  split.insert(split.begin() + d + 1, t.taps);
  Shape wshape(split.size(), 1);
  wshape[d] = out;
  wshape[d + 1] = t.taps;
  Tensor w = from_vector(t.weight, wshape, {.dtype = x.dtype(), .device = x.device()});
  return (picked.view(split) * w).sum({d + 1});
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  const std::string& mode = o.mode;
  EMBER_CHECK_KIND(Shape, input.dim() >= 3 && input.dim() <= 5,
                   "[interpolate] expects a 3-D, 4-D or 5-D input (N, C, spatial...), got shape ",
                   shape_str(input.sizes()));
  const int64_t dims = input.dim() - 2;
  const bool interpolating =
      mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
  EMBER_CHECK(interpolating || mode == "nearest" || mode == "nearest-exact" || mode == "area",
              "[interpolate] unknown mode '", mode,
              "'; use nearest, nearest-exact, linear, bilinear, bicubic, trilinear or area");
  EMBER_CHECK(interpolating || !o.align_corners,
              "[interpolate] align_corners option can only be set with the interpolating modes: "
              "linear | bilinear | bicubic | trilinear");
  const int64_t want = mode == "linear"                          ? 1
                       : mode == "bilinear" || mode == "bicubic" ? 2
                       : mode == "trilinear"                     ? 3
                                                                 : dims;
  EMBER_CHECK_KIND(Shape, want == dims, "[interpolate] mode '", mode, "' expects a ", want + 2,
                   "-D input, got shape ", shape_str(input.sizes()));
  // The weighted sums of 16-bit inputs are taken in float32 and rounded once.
  if ((interpolating || mode == "area") && is_reduced_float(input.dtype()))
    return interpolate(to_opmath(input), o).to(input.dtype());
  EMBER_CHECK(o.size.empty() != o.scale_factor.empty(),
              "[interpolate] give exactly one of size and scale_factor");
  auto per_dim = [&](const auto& v, const char* what) {
    EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == dims, "[interpolate] ", what,
                " must have 1 or ", dims, " entries for a ", input.dim(), "-D input, got ",
                v.size());
    return [&v](int64_t i) { return v.size() == 1 ? v[0] : v[i]; };
  };
  std::vector<int64_t> out(dims);
  std::vector<std::optional<double>> scales(dims);
  if (!o.size.empty()) {
    auto size = per_dim(o.size, "size");
    for (int64_t i = 0; i < dims; ++i) out[i] = size(i);
  } else {
    auto factor = per_dim(o.scale_factor, "scale_factor");
    for (int64_t i = 0; i < dims; ++i) {
      EMBER_CHECK(factor(i) > 0, "[interpolate] scale_factor must be positive, got ", factor(i));
      out[i] = static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + i)) * factor(i)));
      if (!o.recompute_scale_factor.value_or(false)) scales[i] = factor(i);
    }
  }
  for (int64_t i = 0; i < dims; ++i)
    EMBER_CHECK_KIND(Shape, out[i] > 0 && input.size(2 + i) > 0,
                     "[interpolate] input and output sizes should be greater than 0, but got "
                     "input ",
                     shape_str(input.sizes()), " and output size ", out[i], " for spatial dim ", i);
  EMBER_CHECK_KIND(DType, mode.starts_with("nearest") || input.is_floating_point(),
                   "[interpolate] mode '", mode, "' needs a floating input, got ", input.dtype());
  if (mode == "area") {
    EMBER_CHECK_KIND(Shape, dims <= 2,
                     "[interpolate] mode 'area' supports 3-D and 4-D inputs, got shape ",
                     shape_str(input.sizes()));
    return dims == 1 ? adaptive_avg_pool1d(input, out[0])
                     : adaptive_avg_pool2d(input, {out[0], out[1]});
  }
  const bool align = o.align_corners.value_or(false);
  Tensor y = input;
  for (int64_t i = dims - 1; i >= 0; --i) {
    const int64_t in = input.size(2 + i);
    Taps t = mode == "nearest"         ? nearest_taps(in, out[i], scales[i], false)
             : mode == "nearest-exact" ? nearest_taps(in, out[i], scales[i], true)
             : mode == "bicubic"       ? cubic_taps(in, out[i], align, scales[i])
                                       : linear_taps(in, out[i], align, scales[i]);
    y = resample_dim(y, 2 + i, out[i], t);
  }
  return y;
}

namespace {

// input (*, C, H, W) split into (*, split...), its last dims permuted by perm (relative to the
// first split dim) and reshaped to (*, out...).
Tensor reshuffle(const Tensor& input, const Shape& split_tail, const std::vector<int64_t>& perm,
                 const Shape& out_tail) {
  Shape split(input.sizes().begin(), input.sizes().end() - 3), out = split;
  const auto lead = static_cast<int64_t>(split.size());
  split.insert(split.end(), split_tail.begin(), split_tail.end());
  out.insert(out.end(), out_tail.begin(), out_tail.end());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < lead; ++i) order.push_back(i);
  for (int64_t p : perm) order.push_back(lead + p);
  return input.reshape(split).permute(order).reshape(out);
}

}  // namespace

Tensor pixel_shuffle(const Tensor& input, int64_t r) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 3,
                   "[pixel_shuffle] expects input with at least 3 dims (*, C r^2, H, W), got ",
                   shape_str(input.sizes()));
  EMBER_CHECK(r > 0, "[pixel_shuffle] upscale_factor must be positive, got ", r);
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  EMBER_CHECK_KIND(Shape, c % (r * r) == 0, "[pixel_shuffle] expects its input's channel dim (", c,
                   ") to be divisible by the square of upscale_factor (", r * r, ")");
  // (C, r, r, H, W) -> (C, H, r, W, r)
  return reshuffle(input, {c / (r * r), r, r, h, w}, {0, 3, 1, 4, 2}, {c / (r * r), h * r, w * r});
}

Tensor pixel_unshuffle(const Tensor& input, int64_t r) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 3,
                   "[pixel_unshuffle] expects input with at least 3 dims (*, C, H r, W r), got ",
                   shape_str(input.sizes()));
  EMBER_CHECK(r > 0, "[pixel_unshuffle] downscale_factor must be positive, got ", r);
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  EMBER_CHECK_KIND(Shape, h % r == 0 && w % r == 0, "[pixel_unshuffle] expects height (", h,
                   ") and width (", w, ") to be divisible by downscale_factor (", r, ")");
  // (C, H, r, W, r) -> (C, r, r, H, W)
  return reshuffle(input, {c, h / r, r, w / r, r}, {0, 2, 4, 1, 3}, {c * r * r, h / r, w / r});
}

Tensor channel_shuffle(const Tensor& input, int64_t groups) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 3,
                   "[channel_shuffle] expects input with at least 3 dims (N, C, *), got ",
                   shape_str(input.sizes()));
  EMBER_CHECK(groups > 0, "[channel_shuffle] groups must be positive, got ", groups);
  const int64_t c = input.size(1);
  EMBER_CHECK_KIND(Shape, c % groups == 0, "[channel_shuffle] number of channels (", c,
                   ") must be divisible by groups (", groups, ")");
  Shape split = input.sizes();
  split[1] = c / groups;
  split.insert(split.begin() + 1, groups);
  return input.reshape(split).transpose(1, 2).reshape(input.sizes());
}

}  // namespace ember::nn::functional
