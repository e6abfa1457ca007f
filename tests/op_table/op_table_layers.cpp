// tests/op_table/op_table_layers.cpp: the op table's rows of the layer functions -- the other
// convolutions, unfold/fold, the 1-D and adaptive poolings, interpolate, the shuffles, pad,
// embedding_bag, bilinear, the normalizations and distances, the activations of
// ember/nn/activations.h, the losses beyond MSE and cross-entropy, ctc_loss and the recurrent
// layers. Losses, norms, distances and activations have formula references; the layers whose
// formula is the implementation itself are compared with themselves in float64 here (every dtype,
// layout and device against that, and gradcheck), and with PyTorch's values in
// tests/test_math_fixtures.cpp.
#include <cmath>
#include <cstdint>

#include "op_table/row_builders.h"

namespace ember::op_table {

namespace {

namespace F = nn::functional;
using R = ResultDtype;
using Inputs = std::vector<Tensor>;

int64_t num(const OpArgs& a, size_t i) {
  return static_cast<int64_t>(a.numbers.at(i));
}
std::vector<int64_t> nums_from(const OpArgs& a, size_t first) {
  std::vector<int64_t> out;
  for (size_t i = first; i < a.numbers.size(); ++i) out.push_back(num(a, i));
  return out;
}
// An int64 tensor of `values` on the device of `like`.
Tensor ints_like(const std::vector<int64_t>& values, const Shape& shape, const Tensor& like) {
  return from_vector<int64_t>(values, shape).to(like.device());
}
// (C) viewed as (1, C, 1, ...) against a tensor of `dims` dims.
Tensor per_channel(const Tensor& v, int64_t dims) {
  Shape s(static_cast<size_t>(dims), 1);
  s[1] = v.numel();
  return v.reshape(s);
}

OpRow self_row(std::string name, std::string variant, Call call, std::vector<InputSpec> inputs,
               std::vector<std::vector<Shape>> samples, OpArgs args = {}) {
  return other(std::move(name), std::move(variant), std::move(call), std::move(inputs),
               std::move(samples), kFloats, R::Same, true, std::move(args));
}
OpRow formula_row(std::string name, std::string variant, Call call, Call ref,
                  std::vector<InputSpec> inputs, std::vector<std::vector<Shape>> samples,
                  OpArgs args = {}) {
  OpRow r = self_row(std::move(name), std::move(variant), std::move(call), std::move(inputs),
                     std::move(samples), std::move(args));
  r.composite_ref = std::move(ref);
  return r;
}

// --- convolutions, unfold and fold

void add_convolutions(std::vector<OpRow>& rows) {
  // numbers: stride, padding, dilation, groups.
  const Call conv1 = [](const Inputs& x, const OpArgs& a) {
    return F::conv1d(
        x[0], x[1], x[2],
        {.stride = num(a, 0), .padding = num(a, 1), .dilation = num(a, 2), .groups = num(a, 3)});
  };
  rows.push_back(self_row("conv1d", "", conv1, {value(), value(), value()},
                          {{{1, 2, 7}, {3, 2, 3}, {3}}, {{2, 5}, {3, 2, 2}, {3}}},
                          {.numbers = {1, 1, 1, 1}}));
  rows.push_back(self_row("conv1d", "stride_dilation_groups", conv1, {value(), value(), value()},
                          {{{2, 4, 9}, {2, 2, 3}, {2}}}, {.numbers = {2, 1, 2, 2}}));
  const Call conv3 = [](const Inputs& x, const OpArgs& a) {
    return F::conv3d(
        x[0], x[1], x[2],
        {.stride = num(a, 0), .padding = num(a, 1), .dilation = num(a, 2), .groups = num(a, 3)});
  };
  rows.push_back(self_row("conv3d", "", conv3, {value(), value(), value()},
                          {{{1, 2, 4, 4, 3}, {2, 2, 2, 2, 2}, {2}}}, {.numbers = {1, 1, 1, 1}}));
  rows.push_back(self_row("conv3d", "stride_dilation_groups", conv3, {value(), value(), value()},
                          {{{1, 4, 5, 3, 3}, {2, 2, 2, 2, 1}, {2}}}, {.numbers = {2, 0, 2, 2}}));
  // numbers: stride, padding, output_padding, groups, dilation.
  const Call transpose1 = [](const Inputs& x, const OpArgs& a) {
    return F::conv_transpose1d(x[0], x[1], x[2],
                               {.stride = num(a, 0),
                                .padding = num(a, 1),
                                .output_padding = num(a, 2),
                                .groups = num(a, 3),
                                .dilation = num(a, 4)});
  };
  rows.push_back(self_row("conv_transpose1d", "", transpose1, {value(), value(), value()},
                          {{{1, 2, 5}, {2, 3, 3}, {3}}, {{2, 4}, {2, 1, 2}, {1}}},
                          {.numbers = {1, 0, 0, 1, 1}}));
  rows.push_back(self_row("conv_transpose1d", "stride_output_padding_groups", transpose1,
                          {value(), value(), value()}, {{{2, 4, 4}, {4, 1, 3}, {2}}},
                          {.numbers = {2, 1, 1, 2, 1}}));
  const Call transpose2 = [](const Inputs& x, const OpArgs& a) {
    return F::conv_transpose2d(x[0], x[1], x[2],
                               {.stride = num(a, 0),
                                .padding = num(a, 1),
                                .output_padding = num(a, 2),
                                .groups = num(a, 3),
                                .dilation = num(a, 4)});
  };
  rows.push_back(self_row("conv_transpose2d", "", transpose2, {value(), value(), value()},
                          {{{1, 2, 3, 4}, {2, 3, 2, 2}, {3}}}, {.numbers = {1, 0, 0, 1, 1}}));
  rows.push_back(self_row("conv_transpose2d", "stride_output_padding_groups_dilation", transpose2,
                          {value(), value(), value()}, {{{1, 4, 3, 3}, {4, 1, 2, 3}, {2}}},
                          {.numbers = {2, 1, 1, 2, 2}}));
  // unfold numbers: kernel (2), dilation, padding, stride.
  rows.push_back(self_row("unfold", "",
                          [](const Inputs& x, const OpArgs& a) {
                            return F::unfold(
                                x[0], {num(a, 0), num(a, 1)},
                                {.dilation = num(a, 2), .padding = num(a, 3), .stride = num(a, 4)});
                          },
                          {value()}, {{{1, 2, 4, 5}}, {{2, 4, 4}}}, {.numbers = {2, 3, 1, 1, 2}}));
  // fold numbers: output size (2), kernel (2), dilation, padding, stride.
  const Call fold = [](const Inputs& x, const OpArgs& a) {
    return F::fold(x[0], {num(a, 0), num(a, 1)}, {num(a, 2), num(a, 3)},
                   {.dilation = num(a, 4), .padding = num(a, 5), .stride = num(a, 6)});
  };
  rows.push_back(self_row("fold", "", fold, {value()}, {{{1, 8, 12}}, {{8, 12}}},
                          {.numbers = {4, 5, 2, 2, 1, 0, 1}}));
  rows.push_back(self_row("fold", "padding_stride", fold, {value()}, {{{2, 8, 9}}},
                          {.numbers = {4, 5, 2, 2, 1, 1, 2}}));
}

// --- poolings

void add_poolings(std::vector<OpRow>& rows) {
  // numbers: kernel, stride, padding, dilation, ceil_mode.
  const Call max1 = [](const Inputs& x, const OpArgs& a) {
    return F::max_pool1d(x[0], num(a, 0),
                         {.stride = num(a, 1),
                          .padding = num(a, 2),
                          .dilation = num(a, 3),
                          .ceil_mode = num(a, 4) != 0});
  };
  rows.push_back(self_row("max_pool1d", "", max1, {value()}, {{{1, 2, 9}}, {{2, 7}}},
                          {.numbers = {3, 2, 1, 1, 0}}));
  rows.push_back(self_row("max_pool1d", "dilation_ceil_mode", max1, {value()}, {{{2, 3, 10}}},
                          {.numbers = {2, 2, 0, 2, 1}}));
  // numbers: kernel, stride, padding, ceil_mode, count_include_pad.
  const Call avg1 = [](const Inputs& x, const OpArgs& a) {
    return F::avg_pool1d(x[0], num(a, 0),
                         {.stride = num(a, 1),
                          .padding = num(a, 2),
                          .ceil_mode = num(a, 3) != 0,
                          .count_include_pad = num(a, 4) != 0});
  };
  rows.push_back(self_row("avg_pool1d", "", avg1, {value()}, {{{1, 2, 9}}, {{2, 7}}},
                          {.numbers = {3, 2, 1, 0, 1}}));
  rows.push_back(self_row("avg_pool1d", "ceil_mode_exclude_pad", avg1, {value()}, {{{2, 3, 10}}},
                          {.numbers = {3, 2, 1, 1, 0}}));
  rows.push_back(self_row(
      "adaptive_avg_pool1d", "",
      [](const Inputs& x, const OpArgs& a) { return F::adaptive_avg_pool1d(x[0], num(a, 0)); },
      {value()}, {{{1, 2, 7}}, {{3, 5}}}, {.numbers = {3}}));
  rows.push_back(self_row(
      "adaptive_max_pool1d", "",
      [](const Inputs& x, const OpArgs& a) { return F::adaptive_max_pool1d(x[0], num(a, 0)); },
      {value()}, {{{1, 2, 7}}, {{3, 5}}}, {.numbers = {3}}));
  rows.push_back(self_row("adaptive_max_pool2d", "",
                          [](const Inputs& x, const OpArgs& a) {
                            return F::adaptive_max_pool2d(x[0], {num(a, 0), num(a, 1)});
                          },
                          {value()}, {{{1, 2, 7, 5}}, {{3, 4, 4}}}, {.numbers = {3, 2}}));
}

// --- interpolate, the shuffles, pad

void add_resampling(std::vector<OpRow>& rows) {
  // text: the mode; numbers: align_corners (-1 unset, 0, 1), then the output size.
  const Call resize = [](const Inputs& x, const OpArgs& a) {
    F::InterpolateFuncOptions o{.size = nums_from(a, 1), .mode = a.text};
    if (a.numbers[0] >= 0) o.align_corners = a.numbers[0] != 0;
    return F::interpolate(x[0], o);
  };
  struct Case {
    const char* mode;
    const char* variant;
    std::vector<double> numbers;
    Shape input;
  };
  const Case cases[] = {
      {"nearest", "nearest", {-1, 7}, {1, 2, 5}},
      {"nearest", "nearest_2d", {-1, 3, 7}, {2, 1, 4, 3}},
      {"nearest-exact", "nearest_exact", {-1, 5, 7}, {1, 2, 4, 3}},
      {"linear", "linear", {0, 8}, {1, 2, 5}},
      {"linear", "linear_align_corners", {1, 8}, {1, 2, 5}},
      {"bilinear", "bilinear", {0, 5, 7}, {1, 2, 4, 3}},
      {"bilinear", "bilinear_align_corners", {1, 3, 2}, {2, 1, 4, 3}},
      {"bicubic", "bicubic", {0, 6, 5}, {1, 2, 4, 3}},
      {"bicubic", "bicubic_align_corners", {1, 6, 5}, {1, 1, 4, 3}},
      {"trilinear", "trilinear", {0, 4, 3, 5}, {1, 1, 3, 2, 3}},
      {"area", "area", {-1, 3, 2}, {1, 2, 7, 5}},
  };
  for (const Case& c : cases)
    rows.push_back(self_row("interpolate", c.variant, resize, {value()}, {{c.input}},
                            {.numbers = c.numbers, .text = c.mode}));
  rows.push_back(
      self_row("pixel_shuffle", "",
               [](const Inputs& x, const OpArgs& a) { return F::pixel_shuffle(x[0], num(a, 0)); },
               {value()}, {{{1, 8, 2, 3}}, {{4, 3, 2}}}, {.numbers = {2}}));
  rows.push_back(
      self_row("pixel_unshuffle", "",
               [](const Inputs& x, const OpArgs& a) { return F::pixel_unshuffle(x[0], num(a, 0)); },
               {value()}, {{{1, 2, 4, 6}}, {{1, 2, 2}}}, {.numbers = {2}}));
  rows.push_back(
      self_row("channel_shuffle", "",
               [](const Inputs& x, const OpArgs& a) { return F::channel_shuffle(x[0], num(a, 0)); },
               {value()}, {{{1, 6, 2, 2}}, {{2, 6, 3}}}, {.numbers = {3}}));
  // text: the mode; numbers: the (left, right) amounts from the last dim backwards, then the
  // constant.
  for (const char* mode : {"constant", "reflect", "replicate", "circular"}) {
    OpRow r = self_row("pad", mode,
                       [](const Inputs& x, const OpArgs& a) {
                         std::vector<int64_t> amounts{num(a, 0), num(a, 1), num(a, 2), num(a, 3)};
                         return F::pad(x[0], amounts, a.text, a.numbers[4]);
                       },
                       {value()}, {{{2, 4, 3}}, {{1, 2, 4, 5}}},
                       {.numbers = {1, 2, 2, 1, 0.5}, .text = mode});
    rows.push_back(r);
  }
  rows.push_back(self_row("pad", "constant_crop",
                          [](const Inputs& x, auto&) {
                            return F::pad(x[0], {1, -1, -1, 0}, "constant", -1.5);
                          },
                          {value()}, {{{2, 4, 3}}}));
}

// --- embedding_bag and bilinear

void add_embeddings(std::vector<OpRow>& rows) {
  // Seven indices into a (6, 3) table in four bags, the second empty: offsets 0, 2, 2, 5.
  for (const char* mode : {"sum", "mean", "max"}) {
    rows.push_back(self_row("embedding_bag", mode,
                            [](const Inputs& x, const OpArgs& a) {
                              return F::embedding_bag(
                                  x[0], x[1],
                                  {.offsets = ints_like({0, 2, 2, 5}, {4}, x[0]), .mode = a.text});
                            },
                            {index(6), value()}, {{{7}, {6, 3}}}, {.text = mode}));
  }
  rows.push_back(self_row("embedding_bag", "per_sample_weights_include_last_offset",
                          [](const Inputs& x, auto&) {
                            return F::embedding_bag(x[0], x[1],
                                                    {.offsets = ints_like({0, 3, 7}, {3}, x[0]),
                                                     .mode = "sum",
                                                     .per_sample_weights = x[2],
                                                     .include_last_offset = true});
                          },
                          {index(6), value(), value()}, {{{7}, {6, 3}, {7}}}));
  rows.push_back(self_row("embedding_bag", "bags_2d_padding_idx",
                          [](const Inputs& x, auto&) {
                            return F::embedding_bag(x[0], x[1], {.mode = "mean", .padding_idx = 2});
                          },
                          {index(5), value()}, {{{3, 4}, {5, 2}}}));
  OpRow bil = formula_row(
      "bilinear", "", [](const Inputs& x, auto&) { return F::bilinear(x[0], x[1], x[2], x[3]); },
      [](const Inputs& x, auto&) {
        // (N, 1, in1, 1) * (1, out, in1, in2) * (N, 1, 1, in2), summed over in1 and in2.
        Tensor a = x[0].unsqueeze(1).unsqueeze(-1), b = x[1].unsqueeze(1).unsqueeze(1);
        return (a * x[2].unsqueeze(0) * b).sum({-1, -2}) + x[3];
      },
      {value(), value(), value(), value()}, {{{4, 3}, {4, 2}, {5, 3, 2}, {5}}});
  rows.push_back(bil);
}

// --- scaled_dot_product_attention: the fused kernels against the math path (q, k, v, mask).

void add_attention(std::vector<OpRow>& rows) {
  auto row = [&](const char* variant, std::vector<InputSpec> inputs, Shape mask, auto options) {
    auto opts = [options](const Inputs& x) {
      F::ScaledDotProductAttentionOptions o = options;
      if (x.size() > 3) o.attn_mask = x[3];
      return o;
    };
    std::vector<std::vector<Shape>> samples = {{{2, 2, 5, 4}, {2, 2, 7, 4}, {2, 2, 7, 3}},
                                               {{1, 1, 65, 2}, {1, 1, 66, 2}, {1, 1, 66, 3}}};
    if (options.enable_gqa)
      samples = {{{1, 4, 5, 4}, {1, 2, 7, 4}, {1, 2, 7, 3}},
                 {{1, 2, 65, 2}, {1, 1, 66, 2}, {1, 1, 66, 2}}};
    if (!mask.empty())
      for (auto& sample : samples)
        sample.push_back(mask[0] == 1 ? Shape{1, 1, sample[0][2], sample[1][2]}
                                      : Shape{sample[0][2], sample[1][2]});
    rows.push_back(formula_row(
        "scaled_dot_product_attention", variant,
        [opts](const Inputs& x, auto&) {
          return F::scaled_dot_product_attention(x[0], x[1], x[2], opts(x));
        },
        [opts](const Inputs& x, auto&) {
          return F::scaled_dot_product_attention_math(x[0], x[1], x[2], opts(x));
        },
        std::move(inputs), std::move(samples)));
  };
  const std::vector<InputSpec> qkv = {value(), value(), value()};
  row("", qkv, {}, F::ScaledDotProductAttentionOptions{});
  row("causal", qkv, {}, F::ScaledDotProductAttentionOptions{.is_causal = true});
  row("gqa_causal", qkv, {},
      F::ScaledDotProductAttentionOptions{.is_causal = true, .enable_gqa = true});
  row("bool_mask", {value(), value(), value(), {.kind = InputKind::Mask}}, {0},
      F::ScaledDotProductAttentionOptions{});
  row("float_mask", {value(), value(), value(), {.kind = InputKind::Constant}}, {1},
      F::ScaledDotProductAttentionOptions{});
}

// --- normalizations, distances, activations

Tensor group_norm_ref(const Tensor& x, int64_t groups, const Tensor& w, const Tensor& b) {
  Tensor g = x.reshape({x.size(0), groups, -1});
  Tensor m = g.mean({-1}, true), v = g.var({-1}, false, true);
  Tensor n = ((g - m) / sqrt(v + 1e-5)).reshape(x.sizes());
  return n * per_channel(w, x.dim()) + per_channel(b, x.dim());
}

void add_norms(std::vector<OpRow>& rows) {
  const std::vector<InputSpec> x_w_b = {value(), value(), value()};
  rows.push_back(formula_row(
      "group_norm", "", [](const Inputs& x, auto&) { return F::group_norm(x[0], 2, x[1], x[2]); },
      [](const Inputs& x, auto&) { return group_norm_ref(x[0], 2, x[1], x[2]); }, x_w_b,
      {{{2, 4, 3}, {4}, {4}}, {{1, 6, 2, 2}, {6}, {6}}}));
  rows.push_back(formula_row(
      "instance_norm", "",
      [](const Inputs& x, auto&) { return F::instance_norm(x[0], x[1], x[2]); },
      [](const Inputs& x, auto&) { return group_norm_ref(x[0], x[0].size(1), x[1], x[2]); }, x_w_b,
      {{{2, 3, 4}, {3}, {3}}, {{1, 2, 3, 2}, {2}, {2}}}));
  rows.push_back(formula_row(
      "rms_norm", "", [](const Inputs& x, auto&) { return F::rms_norm(x[0], {4}, x[1], 1e-6); },
      [](const Inputs& x, auto&) {
        return x[0] / sqrt((x[0] * x[0]).mean({-1}, true) + 1e-6) * x[1];
      },
      {value(), value()}, {{{2, 3, 4}, {4}}, {{4}, {4}}}));
  // numbers: size, alpha, beta, k.
  rows.push_back(formula_row(
      "local_response_norm", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::local_response_norm(x[0], num(a, 0), a.numbers[1], a.numbers[2], a.numbers[3]);
      },
      [](const Inputs& x, const OpArgs& a) {
        const int64_t size = num(a, 0), channels = x[0].size(1);
        std::vector<Tensor> sums;
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t lo = std::max<int64_t>(0, c - size / 2);
          const int64_t hi = std::min(channels, c + (size - 1) / 2 + 1);
          sums.push_back((x[0] * x[0]).narrow(1, lo, hi - lo).sum({1}, true));
        }
        Tensor div = cat(sums, 1) * (a.numbers[1] / static_cast<double>(size)) + a.numbers[3];
        return x[0] / pow(div, scalar_tensor(a.numbers[2], {.dtype = kFloat64}));
      },
      {value()}, {{{2, 5, 3}}, {{1, 4, 2, 3}}}, {.numbers = {3, 0.5, 0.75, 1.5}}));
  rows.push_back(formula_row(
      "normalize", "",
      [](const Inputs& x, const OpArgs& a) { return F::normalize(x[0], a.numbers[0], 1); },
      [](const Inputs& x, const OpArgs& a) {
        return x[0] / clamp(x[0].norm(a.numbers[0], {1}, true), 1e-12, std::nullopt);
      },
      {value()}, {{{3, 4}}, {{2, 3, 2}}}, {.numbers = {3}}));
  rows.push_back(formula_row(
      "cosine_similarity", "",
      [](const Inputs& x, auto&) { return F::cosine_similarity(x[0], x[1], 1); },
      [](const Inputs& x, auto&) {
        return (x[0] * x[1]).sum({1}) / (x[0].norm(2, {1}) * x[1].norm(2, {1}));
      },
      {value(), value()}, {{{3, 4}, {3, 4}}, {{2, 3, 2}, {1, 3, 2}}}));
  rows.push_back(formula_row(
      "pairwise_distance", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::pairwise_distance(x[0], x[1], a.numbers[0]);
      },
      [](const Inputs& x, const OpArgs& a) {
        return (x[0] - x[1] + 1e-6).norm(a.numbers[0], {-1});
      },
      {value(), value()}, {{{3, 4}, {3, 4}}, {{5}, {2, 5}}}, {.numbers = {2}}));
  rows.push_back(formula_row(
      "softmin", "", [](const Inputs& x, const OpArgs& a) { return F::softmin(x[0], num(a, 0)); },
      [](const Inputs& x, const OpArgs& a) { return softmax(-x[0], num(a, 0)); }, {value()},
      {{{3, 4}}, {{2, 3, 2}}}, {.numbers = {1}}));
}

// The thresholds are exact in every dtype: a 16-bit op compares with them rounded to its dtype,
// as PyTorch's kernels do.
void add_activations(std::vector<OpRow>& rows) {
  const Domain wide{.lo = -3, .hi = 3};
  auto elementwise = [&](std::string name, Call call, UnaryRef ref, OpArgs args) {
    OpRow r = unary(std::move(name), std::move(call), std::move(ref), kFloats, R::Same, true, wide);
    r.args = std::move(args);
    rows.push_back(std::move(r));
  };
  elementwise(
      "hardshrink",
      [](const Inputs& x, const OpArgs& a) { return F::hardshrink(x[0], a.numbers[0]); },
      [](double x, const OpArgs& a) { return std::fabs(x) > a.numbers[0] ? x : 0.0; },
      {.numbers = {0.75}});
  elementwise(
      "softshrink",
      [](const Inputs& x, const OpArgs& a) { return F::softshrink(x[0], a.numbers[0]); },
      [](double x, const OpArgs& a) {
        const double l = a.numbers[0];
        return x > l ? x - l : (x < -l ? x + l : 0.0);
      },
      {.numbers = {0.75}});
  elementwise(
      "tanhshrink", [](const Inputs& x, auto&) { return F::tanhshrink(x[0]); },
      [](double x, auto&) { return x - std::tanh(x); }, {});
  elementwise(
      "threshold",
      [](const Inputs& x, const OpArgs& a) {
        return F::threshold(x[0], a.numbers[0], a.numbers[1]);
      },
      [](double x, const OpArgs& a) { return x > a.numbers[0] ? x : a.numbers[1]; },
      {.numbers = {0.25, -2}});
  rows.push_back(formula_row(
      "glu", "", [](const Inputs& x, const OpArgs& a) { return F::glu(x[0], num(a, 0)); },
      [](const Inputs& x, const OpArgs& a) {
        const int64_t d = num(a, 0), half = x[0].size(d) / 2;
        return x[0].narrow(d, 0, half) * sigmoid(x[0].narrow(d, half, half));
      },
      {value()}, {{{3, 4}}, {{2, 6, 2}}}, {.numbers = {1}}));
  rows.push_back(formula_row(
      "prelu", "", [](const Inputs& x, auto&) { return F::prelu(x[0], x[1]); },
      [](const Inputs& x, auto&) {
        Tensor w = x[1].numel() == 1 || x[0].dim() < 2 ? x[1] : per_channel(x[1], x[0].dim());
        return where(x[0] > 0.0, x[0], w * x[0]);
      },
      {value(), value()}, {{{2, 3, 4}, {3}}, {{4, 2}, {1}}}));
}

// --- losses

void add_losses(std::vector<OpRow>& rows) {
  const std::vector<std::vector<Shape>> pairs = {{{7}, {7}}, {{3, 4}, {3, 4}}};
  const Domain positive{.lo = 0.2, .hi = 2};
  const Domain away{.lo = -1, .hi = 1, .gap = 0.1};
  // text: the reduction; numbers[0]: beta or delta.
  for (std::string red : {"", "none", "sum"}) {
    rows.push_back(formula_row(
        "smooth_l1_loss", red,
        [](const Inputs& x, const OpArgs& a) {
          return F::smooth_l1_loss(x[0], x[1], reduction_arg(a), a.numbers[0]);
        },
        [](const Inputs& x, const OpArgs& a) {
          const double beta = a.numbers[0];
          Tensor d = abs(x[0] - x[1]);
          return reduce_like(where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), a);
        },
        {value(), constant()}, pairs, {.numbers = {0.8}, .text = red}));
  }
  rows.push_back(formula_row(
      "huber_loss", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::huber_loss(x[0], x[1], F::kMean, a.numbers[0]);
      },
      [](const Inputs& x, const OpArgs& a) {
        const double delta = a.numbers[0];
        Tensor d = abs(x[0] - x[1]);
        return where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta).mean();
      },
      {value(), constant()}, pairs, {.numbers = {0.8}}));
  for (bool log_target : {false, true}) {
    rows.push_back(formula_row(
        "kl_div", log_target ? "log_target" : "",
        [log_target](const Inputs& x, auto&) {
          return F::kl_div(x[0], x[1], F::kMean, log_target);
        },
        [log_target](const Inputs& x, auto&) {
          if (log_target) return (exp(x[1]) * (x[1] - x[0])).mean();
          return (x[1] * (log(x[1]) - x[0])).mean();
        },
        {value({.lo = -3, .hi = 0}), constant(log_target ? Domain{-3, 0} : positive)}, pairs));
  }
  for (bool log_input : {true, false}) {
    rows.push_back(formula_row(
        "poisson_nll_loss", log_input ? "" : "probabilities",
        [log_input](const Inputs& x, auto&) { return F::poisson_nll_loss(x[0], x[1], log_input); },
        [log_input](const Inputs& x, auto&) {
          if (log_input) return (exp(x[0]) - x[1] * x[0]).mean();
          return (x[0] - x[1] * log(x[0] + 1e-8)).mean();
        },
        {value(log_input ? Domain{-1, 1} : positive), constant({.lo = 0, .hi = 3})}, pairs));
  }
  rows.push_back(formula_row(
      "gaussian_nll_loss", "",
      [](const Inputs& x, auto&) { return F::gaussian_nll_loss(x[0], x[1], x[2]); },
      [](const Inputs& x, auto&) {
        return ((log(x[2]) + (x[0] - x[1]) * (x[0] - x[1]) / x[2]) * 0.5).mean();
      },
      {value(), constant(), value({.lo = 0.5, .hi = 2})},
      {{{7}, {7}, {7}}, {{3, 4}, {3, 4}, {3, 4}}}));
  // Targets of 1 and -1: the signs of a constant input kept away from 0.
  rows.push_back(formula_row(
      "margin_ranking_loss", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::margin_ranking_loss(x[0], x[1], sign(x[2]), a.numbers[0]);
      },
      [](const Inputs& x, const OpArgs& a) {
        return clamp(-sign(x[2]) * (x[0] - x[1]) + a.numbers[0], 0.0, std::nullopt).mean();
      },
      {value(), value(), constant(away)}, {{{7}, {7}, {7}}, {{3, 4}, {3, 4}, {3, 4}}},
      {.numbers = {0.3}}));
  rows.push_back(formula_row(
      "hinge_embedding_loss", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::hinge_embedding_loss(x[0], sign(x[1]), a.numbers[0]);
      },
      [](const Inputs& x, const OpArgs& a) {
        Tensor hinge = clamp(a.numbers[0] - x[0], 0.0, std::nullopt);
        return where(x[1] > 0.0, x[0], hinge).mean();
      },
      {value(), constant(away)}, pairs, {.numbers = {1.2}}));
  rows.push_back(formula_row(
      "cosine_embedding_loss", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::cosine_embedding_loss(x[0], x[1], sign(x[2]), a.numbers[0]);
      },
      [](const Inputs& x, const OpArgs& a) {
        const int64_t d = x[0].dim() - 1;
        Tensor cos = (x[0] * x[1]).sum({d}) /
                     sqrt(((x[0] * x[0]).sum({d}) + 1e-12) * ((x[1] * x[1]).sum({d}) + 1e-12));
        return where(x[2] > 0.0, 1 - cos, clamp(cos - a.numbers[0], 0.0, std::nullopt)).mean();
      },
      {value(), value(), constant(away)}, {{{4, 3}, {4, 3}, {4}}, {{5}, {5}, {}}},
      {.numbers = {0.1}}));
  rows.push_back(formula_row(
      "triplet_margin_loss", "",
      [](const Inputs& x, const OpArgs& a) {
        return F::triplet_margin_loss(x[0], x[1], x[2], a.numbers[0]);
      },
      [](const Inputs& x, const OpArgs& a) {
        Tensor dp = (x[0] - x[1] + 1e-6).norm(2, {-1}), dn = (x[0] - x[2] + 1e-6).norm(2, {-1});
        return clamp(dp - dn + a.numbers[0], 0.0, std::nullopt).mean();
      },
      {value(), value(), value()}, {{{4, 3}, {4, 3}, {4, 3}}}, {.numbers = {1.5}}));
  rows.push_back(formula_row(
      "multilabel_soft_margin_loss", "",
      [](const Inputs& x, auto&) { return F::multilabel_soft_margin_loss(x[0], x[1]); },
      [](const Inputs& x, auto&) {
        Tensor terms = x[1] * logsigmoid(x[0]) + (1 - x[1]) * logsigmoid(-x[0]);
        return (-terms.mean({-1})).mean();
      },
      {value(), constant({.lo = 0, .hi = 1, .integers = true})}, {{{3, 4}, {3, 4}}}));
  // ctc_loss of logits (T 5, N 2, C 4) through log_softmax (its gradient is the logits').
  // Targets padded (2, 3) or concatenated; input lengths 5, 4; target lengths 2, 3.
  for (bool concatenated : {false, true}) {
    rows.push_back(self_row("ctc_loss", concatenated ? "concatenated_targets" : "",
                            [concatenated](const Inputs& x, auto&) {
                              Tensor targets = concatenated
                                                   ? ints_like({1, 2, 3, 3, 1}, {5}, x[0])
                                                   : ints_like({1, 2, 0, 3, 3, 1}, {2, 3}, x[0]);
                              return F::ctc_loss(log_softmax(x[0], 2), targets,
                                                 ints_like({5, 4}, {2}, x[0]),
                                                 ints_like({2, 3}, {2}, x[0]));
                            },
                            {value()}, {{{5, 2, 4}}}));
  }
}

// --- recurrent layers: a module whose first layer-direction's weights are the row's inputs
// (input (L 3, N 2, in 3), w_ih (G h, 3), w_hh (G h, h), b_ih, b_hh (G h), h = 2), its output.

template <typename Module>
Tensor run_rnn(const Inputs& x, const nn::RNNOptions& options) {
  Module m(3, 2, options);
  const size_t sets = options.bidirectional ? 2 : 1;
  for (size_t k = 0; k < sets; ++k)
    m->all_weights[k] = {x[1 + 4 * k], x[2 + 4 * k], x[3 + 4 * k], x[4 + 4 * k], Tensor()};
  return std::get<0>(m->forward(x[0]));
}

void add_recurrent(std::vector<OpRow>& rows) {
  auto add = [&](std::string name, std::string variant, int64_t gates, bool bidirectional,
                 Call call) {
    const int64_t gh = gates * 2;
    std::vector<Shape> shapes = {bidirectional ? Shape{2, 3, 3} : Shape{3, 2, 3}};
    std::vector<InputSpec> inputs = {value()};
    for (int k = 0; k < (bidirectional ? 2 : 1); ++k) {
      for (Shape s : {Shape{gh, 3}, Shape{gh, 2}, Shape{gh}, Shape{gh}}) shapes.push_back(s);
      for (int i = 0; i < 4; ++i) inputs.push_back(value({.lo = -0.8, .hi = 0.8}));
    }
    rows.push_back(
        self_row(std::move(name), std::move(variant), std::move(call), inputs, {shapes}));
  };
  add("rnn", "tanh", 1, false, [](const Inputs& x, auto&) { return run_rnn<nn::RNN>(x, {}); });
  add("rnn", "relu", 1, false,
      [](const Inputs& x, auto&) { return run_rnn<nn::RNN>(x, {.nonlinearity = "relu"}); });
  add("lstm", "", 4, false, [](const Inputs& x, auto&) { return run_rnn<nn::LSTM>(x, {}); });
  add("gru", "", 3, false, [](const Inputs& x, auto&) { return run_rnn<nn::GRU>(x, {}); });
  add("gru", "bidirectional_batch_first", 3, true, [](const Inputs& x, auto&) {
    return run_rnn<nn::GRU>(x, {.batch_first = true, .bidirectional = true});
  });
}

}  // namespace

std::vector<OpRow> layer_rows() {
  std::vector<OpRow> rows;
  add_convolutions(rows);
  add_poolings(rows);
  add_resampling(rows);
  add_embeddings(rows);
  add_attention(rows);
  add_norms(rows);
  add_activations(rows);
  add_losses(rows);
  add_recurrent(rows);
  return rows;
}

}  // namespace ember::op_table
