// tests/test_math_fixtures.cpp: the math ops of issue 17 against PyTorch's own outputs and
// gradients on fixed inputs (tests/reference/math_ops.txt, written by math_ops.py with PyTorch):
// NaN, infinities, signed zeros, ties, subnormals, integer division signs and shifts, on every
// device. Also by hand: what the fixture cannot hold -- errors (integer division by zero, bitwise
// ops on floats, round's decimals on integers) and shifts by the bit width or more, which PyTorch
// >= 2.1 defines (0, or -1 for a negative value shifted right) and 1.13 did not.
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::tensor_equal;

// One line of math_ops.txt.
struct Case {
  std::string op, args, dtype;
  std::vector<std::vector<double>> inputs, grads;
  std::vector<double> output;
  std::vector<Shape> shapes;  // of the inputs
  std::string line;
};

std::vector<std::string> split_text(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

// "2x3 ; 7 ; scalar" -> {{2, 3}, {7}, {}}.
std::vector<Shape> shapes_of(const std::string& s) {
  std::vector<Shape> out;
  for (std::string part : split_text(s, ';')) {
    Shape shape;
    std::istringstream in(part);
    std::string word;
    in >> word;
    if (word != "scalar")
      for (const std::string& n : split_text(word, 'x')) shape.push_back(std::stoll(n));
    out.push_back(shape);
  }
  return out;
}

std::vector<double> numbers(const std::string& s) {
  std::vector<double> v;
  std::istringstream in(s);
  std::string word;
  while (in >> word) {
    if (word == "True" || word == "False")
      v.push_back(word == "True");
    else
      v.push_back(std::strtod(word.c_str(), nullptr));  // also nan, inf, -inf
  }
  return v;
}

// "none" (an input PyTorch gives no gradient) reads as an empty list.
std::vector<std::vector<double>> lists(const std::string& s) {
  std::vector<std::vector<double>> out;
  if (s.find_first_not_of(' ') == std::string::npos) return out;
  for (const std::string& part : split_text(s, ';'))
    out.push_back(part.find("none") != std::string::npos ? std::vector<double>{} : numbers(part));
  return out;
}

std::vector<Case> read_cases() {
  std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/math_ops.txt");
  EXPECT_TRUE(in) << "cannot read tests/reference/math_ops.txt";
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = split_text(line, '|');
    if (f.size() != 7) {
      ADD_FAILURE() << "malformed line: " << line;
      continue;
    }
    cases.push_back(
        {f[0], f[1], f[2], lists(f[3]), lists(f[5]), numbers(f[4]), shapes_of(f[6]), line});
  }
  return cases;
}

// "beta=2 reduction=none" -> {beta: "2", reduction: "none"}.
using Args = std::map<std::string, std::string>;
Args parse_args(const std::string& s) {
  Args m;
  std::istringstream in(s);
  std::string kv;
  while (in >> kv)
    if (size_t eq = kv.find('='); eq != std::string::npos) m[kv.substr(0, eq)] = kv.substr(eq + 1);
  return m;
}
double num(const Args& a, const char* key, double fallback) {
  auto it = a.find(key);
  return it == a.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}
std::optional<double> opt(const Args& a, const char* key) {
  auto it = a.find(key);
  return it == a.end() ? std::nullopt
                       : std::optional<double>(std::strtod(it->second.c_str(), nullptr));
}
F::Reduction reduction_of(const Args& a) {
  auto it = a.find("reduction");
  if (it == a.end() || it->second == "mean") return F::kMean;
  return it->second == "sum" ? F::kSum : F::kNone;
}
// "5,7" -> {5, 7}; missing: `fallback`.
std::vector<int64_t> ints(const Args& a, const char* key, std::vector<int64_t> fallback = {}) {
  auto it = a.find(key);
  if (it == a.end()) return fallback;
  std::vector<int64_t> v;
  std::istringstream list(it->second);
  for (std::string part; std::getline(list, part, ',');) v.push_back(std::stoll(part));
  return v;
}
nn::Size2d size2(const Args& a, const char* key, int64_t fallback) {
  std::vector<int64_t> v = ints(a, key, {fallback});
  return v.size() == 1 ? nn::Size2d(v[0]) : nn::Size2d(v[0], v[1]);
}
nn::Size3d size3(const Args& a, const char* key, int64_t fallback) {
  std::vector<int64_t> v = ints(a, key, {fallback});
  return v.size() == 1 ? nn::Size3d(v[0]) : nn::Size3d(v[0], v[1], v[2]);
}
int64_t int_arg(const Args& a, const char* key, int64_t fallback) {
  return static_cast<int64_t>(num(a, key, static_cast<double>(fallback)));
}
Tensor bias_of(const std::vector<Tensor>& x) {
  return x.size() > 2 ? x[2] : Tensor();
}
using Fn = std::function<Tensor(const std::vector<Tensor>&, const Args&)>;

// The layers' functions: convolutions, poolings, resampling, embedding bags, normalizations.
void add_layer_calls(std::map<std::string, Fn>& c) {
  using X = const std::vector<Tensor>&;
  c["conv1d"] = [](X x, const Args& a) {
    return F::conv1d(x[0], x[1], bias_of(x),
                     {.stride = int_arg(a, "stride", 1),
                      .padding = int_arg(a, "padding", 0),
                      .dilation = int_arg(a, "dilation", 1),
                      .groups = int_arg(a, "groups", 1)});
  };
  c["conv3d"] = [](X x, const Args& a) {
    return F::conv3d(x[0], x[1], bias_of(x),
                     {.stride = size3(a, "stride", 1),
                      .padding = size3(a, "padding", 0),
                      .dilation = size3(a, "dilation", 1),
                      .groups = int_arg(a, "groups", 1)});
  };
  c["conv_transpose2d"] = [](X x, const Args& a) {
    return F::conv_transpose2d(x[0], x[1], bias_of(x),
                               {.stride = size2(a, "stride", 1),
                                .padding = size2(a, "padding", 0),
                                .output_padding = size2(a, "output_padding", 0),
                                .groups = int_arg(a, "groups", 1),
                                .dilation = size2(a, "dilation", 1)});
  };
  c["conv_transpose1d"] = [](X x, const Args& a) {
    return F::conv_transpose1d(x[0], x[1], bias_of(x),
                               {.stride = int_arg(a, "stride", 1),
                                .padding = int_arg(a, "padding", 0),
                                .output_padding = int_arg(a, "output_padding", 0),
                                .groups = int_arg(a, "groups", 1),
                                .dilation = int_arg(a, "dilation", 1)});
  };
  c["unfold"] = [](X x, const Args& a) {
    return F::unfold(x[0], size2(a, "kernel", 1),
                     {.padding = size2(a, "padding", 0), .stride = size2(a, "stride", 1)});
  };
  c["fold"] = [](X x, const Args& a) {
    return F::fold(x[0], size2(a, "output", 1), size2(a, "kernel", 1));
  };
  c["max_pool1d"] = [](X x, const Args& a) {
    return F::max_pool1d(x[0], int_arg(a, "kernel", 1),
                         {.stride = int_arg(a, "stride", 0),
                          .padding = int_arg(a, "padding", 0),
                          .ceil_mode = num(a, "ceil_mode", 0) != 0});
  };
  c["avg_pool1d"] = [](X x, const Args& a) {
    return F::avg_pool1d(x[0], int_arg(a, "kernel", 1),
                         {.stride = int_arg(a, "stride", 0),
                          .padding = int_arg(a, "padding", 0),
                          .count_include_pad = num(a, "count_include_pad", 1) != 0});
  };
  c["adaptive_avg_pool1d"] = [](X x, const Args& a) {
    return F::adaptive_avg_pool1d(x[0], int_arg(a, "size", 1));
  };
  c["adaptive_max_pool1d"] = [](X x, const Args& a) {
    return F::adaptive_max_pool1d(x[0], int_arg(a, "size", 1));
  };
  c["adaptive_max_pool2d"] = [](X x, const Args& a) {
    return F::adaptive_max_pool2d(x[0], size2(a, "size", 1));
  };
  c["adaptive_max_pool2d_indices"] = [](X x, const Args& a) {
    return std::get<1>(F::adaptive_max_pool2d_with_indices(x[0], size2(a, "size", 1)));
  };
  c["interpolate"] = [](X x, const Args& a) {
    F::InterpolateFuncOptions o{.size = ints(a, "size"), .mode = a.at("mode")};
    if (auto it = a.find("scale"); it != a.end()) {
      std::istringstream list(it->second);
      for (std::string part; std::getline(list, part, ',');)
        o.scale_factor.push_back(std::stod(part));
    }
    if (a.contains("align_corners")) o.align_corners = num(a, "align_corners", 0) != 0;
    return F::interpolate(x[0], o);
  };
  c["pixel_shuffle"] = [](X x, const Args& a) {
    return F::pixel_shuffle(x[0], int_arg(a, "r", 1));
  };
  c["pixel_unshuffle"] = [](X x, const Args& a) {
    return F::pixel_unshuffle(x[0], int_arg(a, "r", 1));
  };
  c["channel_shuffle"] = [](X x, const Args& a) {
    return F::channel_shuffle(x[0], int_arg(a, "groups", 1));
  };
  c["embedding_bag"] = [](X x, const Args& a) {
    const Device d = x[0].device();
    auto ids = [&](std::vector<int64_t> v, Shape shape) {
      return from_vector(v, shape, {.dtype = kInt64, .device = d});
    };
    F::EmbeddingBagFuncOptions o{.mode = a.at("mode")};
    if (a.contains("padding_idx")) o.padding_idx = int_arg(a, "padding_idx", 0);
    if (a.contains("per_sample_weights")) o.per_sample_weights = x[1];
    if (a.contains("batch")) return F::embedding_bag(ids({1, 2, 4, 5, 1, 0}, {2, 3}), x[0], o);
    o.include_last_offset = a.contains("include_last_offset");
    o.offsets = o.include_last_offset ? ids({0, 2, 2, 5, 7}, {5}) : ids({0, 2, 2, 5}, {4});
    return F::embedding_bag(ids({1, 2, 4, 5, 1, 0, 3}, {7}), x[0], o);
  };
  c["embedding"] = [](X x, const Args& a) {
    Tensor table = x[0].clone();  // max_norm rescales the table in place, as PyTorch's
    Tensor ids = from_vector(std::vector<int64_t>{1, 2, 4, 1}, Shape{2, 2},
                             {.dtype = kInt64, .device = x[0].device()});
    return F::embedding(ids, table, std::nullopt, num(a, "max_norm", 0));
  };
  c["bilinear"] = [](X x, const Args&) { return F::bilinear(x[0], x[1], x[2], x[3]); };
  c["scatter"] = [](X x, const Args& a) {
    const Device d = x[0].device();
    Tensor index = a.at("index") == "rows" ? from_vector(std::vector<int64_t>{0, 1, 2, 0, 2, 0, 1, 1},
                                                    Shape{2, 4}, {.dtype = kInt64, .device = d})
                   : a.at("index") == "cols"
                       ? from_vector(std::vector<int64_t>{1, 3, 0}, Shape{3, 1},
                                     {.dtype = kInt64, .device = d})
                       : from_vector(std::vector<int64_t>{0, 1, 2, 0, 0, 1, 0, 0, 2, 1, 0, 0},
                                     Shape{3, 4}, {.dtype = kInt64, .device = d});
    const int64_t dim = int_arg(a, "dim", 0);
    if (a.contains("value")) return scatter(x[0], dim, index, Scalar(num(a, "value", 0)));
    if (a.contains("reduce")) return scatter(x[0], dim, index, x[1], a.at("reduce"));
    return scatter(x[0], dim, index, x[1]);
  };
  c["scatter_reduce"] = [](X x, const Args& a) {
    const Device d = x[0].device();
    Tensor index = a.at("index") == "cols2"
                       ? from_vector(std::vector<int64_t>{0, 0, 3, 1, 2, 1, 3, 3, 3}, Shape{3, 3},
                                     {.dtype = kInt64, .device = d})
                       : from_vector(std::vector<int64_t>{0, 1, 2, 0, 0, 1, 0, 0, 2, 1, 0, 0},
                                     Shape{3, 4}, {.dtype = kInt64, .device = d});
    return scatter_reduce(x[0], int_arg(a, "dim", 0), index, x[1], a.at("reduce"),
                          num(a, "include_self", 1) != 0);
  };
  c["local_response_norm"] = [](X x, const Args& a) {
    return F::local_response_norm(x[0], int_arg(a, "size", 1), num(a, "alpha", 1e-4),
                                  num(a, "beta", 0.75), num(a, "k", 1.0));
  };
}

// The ember call of each fixture op (and args spelling).
const std::map<std::string, Fn>& calls() {
  static const std::map<std::string, Fn> m = [] {
    std::map<std::string, Fn> c;
    auto unary = [&](const char* name, Tensor (*f)(const Tensor&)) {
      c[name] = [f](const std::vector<Tensor>& x, const Args&) { return f(x[0]); };
    };
    auto binary = [&](const char* name, Tensor (*f)(const Tensor&, const Tensor&)) {
      c[name] = [f](const std::vector<Tensor>& x, const Args&) { return f(x[0], x[1]); };
    };
    for (auto [name, f] : std::initializer_list<std::pair<const char*, Tensor (*)(const Tensor&)>>{
             {"sin", &sin},
             {"cos", &cos},
             {"tan", &tan},
             {"asin", &asin},
             {"acos", &acos},
             {"atan", &atan},
             {"sinh", &sinh},
             {"cosh", &cosh},
             {"erf", &erf},
             {"erfc", &erfc},
             {"erfinv", &erfinv},
             {"exp2", &exp2},
             {"expm1", &expm1},
             {"log2", &log2},
             {"log10", &log10},
             {"reciprocal", &reciprocal},
             {"square", &square},
             {"floor", &floor},
             {"ceil", &ceil},
             {"trunc", &trunc},
             {"frac", &frac},
             {"sign", &sign},
             {"isnan", &isnan},
             {"isinf", &isinf},
             {"isfinite", &isfinite},
             {"silu", &silu},
             {"mish", &mish},
             {"selu", &selu},
             {"relu6", &relu6},
             {"hardswish", &hardswish},
             {"hardsigmoid", &hardsigmoid},
             {"logsigmoid", &logsigmoid},
             {"softsign", &softsign},
             {"bitwise_not", &bitwise_not}})
      unary(name, f);
    for (auto [name, f] :
         std::initializer_list<std::pair<const char*, Tensor (*)(const Tensor&, const Tensor&)>>{
             {"atan2", &atan2},
             {"copysign", &copysign},
             {"fmod", &fmod},
             {"remainder", &remainder},
             {"floor_divide", &floor_divide},
             {"bitwise_and", &bitwise_and},
             {"bitwise_or", &bitwise_or},
             {"bitwise_xor", &bitwise_xor},
             {"bitwise_left_shift", &bitwise_left_shift},
             {"bitwise_right_shift", &bitwise_right_shift}})
      binary(name, f);
    c["round"] = [](const std::vector<Tensor>& x, const Args& a) {
      return round(x[0], static_cast<int64_t>(opt(a, "decimals").value_or(0)));
    };
    c["nan_to_num"] = [](const std::vector<Tensor>& x, const Args& a) {
      return nan_to_num(x[0], opt(a, "nan").value_or(0), opt(a, "posinf"), opt(a, "neginf"));
    };
    c["softplus"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::softplus(x[0], num(a, "beta", 1), num(a, "threshold", 20));
    };
    c["elu"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::elu(x[0], num(a, "alpha", 1));
    };
    c["celu"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::celu(x[0], num(a, "alpha", 1));
    };
    c["hardtanh"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::hardtanh(x[0], num(a, "min_val", -1), num(a, "max_val", 1));
    };
    c["lerp"] = [](const std::vector<Tensor>& x, const Args& a) {
      return x.size() == 3 ? lerp(x[0], x[1], x[2]) : lerp(x[0], x[1], num(a, "weight", 0));
    };
    c["addcmul"] = [](const std::vector<Tensor>& x, const Args& a) {
      return addcmul(x[0], x[1], x[2], num(a, "value", 1));
    };
    c["addcdiv"] = [](const std::vector<Tensor>& x, const Args& a) {
      return addcdiv(x[0], x[1], x[2], num(a, "value", 1));
    };
    c["clamp"] = [](const std::vector<Tensor>& x, const Args&) { return clamp(x[0], x[1], x[2]); };
    // Losses and distances.
    c["smooth_l1_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::smooth_l1_loss(x[0], x[1], reduction_of(a), num(a, "beta", 1));
    };
    c["huber_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::huber_loss(x[0], x[1], reduction_of(a), num(a, "delta", 1));
    };
    c["kl_div"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::kl_div(x[0], x[1], reduction_of(a), num(a, "log_target", 0) != 0);
    };
    c["poisson_nll_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::poisson_nll_loss(x[0], x[1], num(a, "log_input", 1) != 0, num(a, "full", 0) != 0);
    };
    c["gaussian_nll_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::gaussian_nll_loss(x[0], x[1], x[2], num(a, "full", 0) != 0);
    };
    c["margin_ranking_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::margin_ranking_loss(x[0], x[1], x[2], num(a, "margin", 0));
    };
    c["hinge_embedding_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::hinge_embedding_loss(x[0], x[1], num(a, "margin", 1));
    };
    c["cosine_embedding_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::cosine_embedding_loss(x[0], x[1], x[2], num(a, "margin", 0));
    };
    c["triplet_margin_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::triplet_margin_loss(x[0], x[1], x[2], num(a, "margin", 1), num(a, "p", 2), 1e-6,
                                    num(a, "swap", 0) != 0);
    };
    c["multilabel_soft_margin_loss"] = [](const std::vector<Tensor>& x, const Args&) {
      return F::multilabel_soft_margin_loss(x[0], x[1]);
    };
    c["normalize"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::normalize(x[0], num(a, "p", 2), static_cast<int64_t>(num(a, "dim", 1)));
    };
    c["cosine_similarity"] = [](const std::vector<Tensor>& x, const Args&) {
      return F::cosine_similarity(x[0], x[1]);
    };
    c["rms_norm"] = [](const std::vector<Tensor>& x, const Args&) {
      return F::rms_norm(x[0], {x[0].size(-1)}, x[1], 1e-6);
    };
    c["group_norm"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::group_norm(x[0], static_cast<int64_t>(num(a, "num_groups", 1)), x[1], x[2]);
    };
    c["instance_norm"] = [](const std::vector<Tensor>& x, const Args&) {
      return F::instance_norm(x[0], x[1], x[2]);
    };
    c["softmin"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::softmin(x[0], static_cast<int64_t>(num(a, "dim", 1)));
    };
    c["nansum"] = [](const std::vector<Tensor>& x, const Args& a) {
      return a.count("dim") ? nansum(x[0], {static_cast<int64_t>(num(a, "dim", 0))}) : nansum(x[0]);
    };
    c["nanmean"] = [](const std::vector<Tensor>& x, const Args& a) {
      return a.count("dim") ? nanmean(x[0], {static_cast<int64_t>(num(a, "dim", 0))})
                            : nanmean(x[0]);
    };
    c["take_along_dim"] = [](const std::vector<Tensor>& x, const Args& a) {
      Tensor idx = tensor({{2, 0}, {1, 1}}, {.dtype = kInt64, .device = x[0].device()});
      return take_along_dim(x[0], idx, static_cast<int64_t>(num(a, "dim", 0)));
    };
    c["movedim"] = [](const std::vector<Tensor>& x, const Args&) { return movedim(x[0], 0, 2); };
    c["unflatten"] = [](const std::vector<Tensor>& x, const Args&) {
      return unflatten(x[0], 2, {2, 2});
    };
    // Ordering ops: values and indices are separate cases ("sort_values", "sort_indices").
    auto pair_op = [&](const std::string& name,
                       std::function<detail::TensorPair(const Tensor&, const Args&)> f) {
      c[name + "_values"] = [f](const std::vector<Tensor>& x, const Args& a) {
        return std::get<0>(f(x[0], a));
      };
      c[name + "_indices"] = [f](const std::vector<Tensor>& x, const Args& a) {
        return std::get<1>(f(x[0], a));
      };
    };
    pair_op("sort", [](const Tensor& x, const Args& a) {
      return sort(x, -1, num(a, "descending", 0) != 0, true);
    });
    pair_op("topk", [](const Tensor& x, const Args& a) {
      return topk(x, static_cast<int64_t>(num(a, "k", 1)), -1, num(a, "largest", 1) != 0);
    });
    pair_op("kthvalue", [](const Tensor& x, const Args& a) {
      return kthvalue(x, static_cast<int64_t>(num(a, "k", 1)));
    });
    pair_op("median", [](const Tensor& x, const Args& a) {
      return median(x, static_cast<int64_t>(num(a, "dim", 0)));
    });
    pair_op("nanmedian", [](const Tensor& x, const Args& a) {
      return nanmedian(x, static_cast<int64_t>(num(a, "dim", 0)));
    });
    pair_op("mode", [](const Tensor& x, const Args& a) {
      return mode(x, static_cast<int64_t>(num(a, "dim", -1)));
    });
    c["searchsorted"] = [](const std::vector<Tensor>& x, const Args& a) {
      return searchsorted(x[0], x[1], false, num(a, "right", 0) != 0);
    };
    c["bucketize"] = [](const std::vector<Tensor>& x, const Args& a) {
      return bucketize(x[0], x[1], false, num(a, "right", 0) != 0);
    };
    for (int part : {0, 1, 2}) {
      const std::string suffix = part == 0 ? "_values" : part == 1 ? "_inverse" : "_counts";
      auto pick = [part](const detail::TensorTriple& t) {
        return part == 0 ? std::get<0>(t) : part == 1 ? std::get<1>(t) : std::get<2>(t);
      };
      c["unique" + suffix] = [pick](const std::vector<Tensor>& x, const Args&) {
        return pick(unique(x[0], true, true, true));
      };
      c["unique_consecutive" + suffix] = [pick](const std::vector<Tensor>& x, const Args&) {
        return pick(unique_consecutive(x[0], true, true));
      };
    }
    c["histc"] = [](const std::vector<Tensor>& x, const Args& a) {
      return histc(x[0], static_cast<int64_t>(num(a, "bins", 100)), num(a, "min", 0),
                   num(a, "max", 0));
    };
    c["bincount"] = [](const std::vector<Tensor>& x, const Args& a) {
      if (a.count("weights"))  // the fixture's inputs are the weights of [0, 3, 3, 1]
        return bincount(tensor({0, 3, 3, 1}).to(kInt64).to(x[0].device()), x[0]);
      return bincount(x[0], Tensor(), static_cast<int64_t>(num(a, "minlength", 0)));
    };
    c["nonzero"] = [](const std::vector<Tensor>& x, const Args&) { return nonzero(x[0]); };
    c["pad"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::pad(x[0], ints(a, "pad"), a.at("mode"), num(a, "value", 0));
    };
    add_layer_calls(c);
    c["index_add"] = [](const std::vector<Tensor>& x, const Args&) {
      return index_add(x[0], 1, tensor({2, 0, 2}).to(kInt64).to(x[0].device()), x[1], 2.0);
    };
    c["index_copy"] = [](const std::vector<Tensor>& x, const Args&) {
      return index_copy(x[0], 0, tensor({1, 0}).to(kInt64).to(x[0].device()), x[1]);
    };
    c["index_fill"] = [](const std::vector<Tensor>& x, const Args&) {
      return index_fill(x[0], 1, tensor({0, 2}).to(kInt64).to(x[0].device()), -2.0);
    };
    c["index_put"] = [](const std::vector<Tensor>& x, const Args& a) {
      const TensorOptions i64{.device = x[0].device()};
      if (num(a, "accumulate", 0) != 0)
        return index_put(x[0],
                         {tensor({0, 1, 0}, i64).to(kInt64), tensor({2, 0, 2}, i64).to(kInt64)},
                         x[1], true);
      return index_put(x[0], {tensor({1, 0}, i64).to(kInt64)}, x[1]);
    };
    c["diagonal"] = [](const std::vector<Tensor>& x, const Args&) {
      return diagonal(x[0], 1, 1, 2);
    };
    c["cross"] = [](const std::vector<Tensor>& x, const Args&) { return cross(x[0], x[1]); };
    c["kron"] = [](const std::vector<Tensor>& x, const Args&) { return kron(x[0], x[1]); };
    c["cdist"] = [](const std::vector<Tensor>& x, const Args& a) {
      return cdist(x[0], x[1], num(a, "p", 2));
    };
    c["einsum"] = [](const std::vector<Tensor>& x, const Args& a) { return einsum(a.at("eq"), x); };
    // repeats: an int; counts: a tensor of them; index: the repeats tensor alone.
    c["repeat_interleave"] = [](const std::vector<Tensor>& x, const Args& a) {
      const std::optional<int64_t> dim =
          a.contains("dim") ? std::optional<int64_t>(int_arg(a, "dim", 0)) : std::nullopt;
      if (a.contains("index")) return repeat_interleave(x[0]);
      if (a.contains("repeats")) return repeat_interleave(x[0], int_arg(a, "repeats", 0), dim);
      const std::vector<int64_t> counts = ints(a, "counts");
      return x[0].repeat_interleave(
          from_vector(counts, std::nullopt, {.dtype = kInt64, .device = x[0].device()}), dim);
    };
    c["hardshrink"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::hardshrink(x[0], num(a, "lambd", 0.5));
    };
    c["softshrink"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::softshrink(x[0], num(a, "lambd", 0.5));
    };
    c["tanhshrink"] = [](const std::vector<Tensor>& x, const Args&) { return F::tanhshrink(x[0]); };
    c["threshold"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::threshold(x[0], num(a, "threshold", 0), num(a, "value", 0));
    };
    c["glu"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::glu(x[0], static_cast<int64_t>(num(a, "dim", -1)));
    };
    c["prelu"] = [](const std::vector<Tensor>& x, const Args&) { return F::prelu(x[0], x[1]); };
    pair_op("cummax", [](const Tensor& x, const Args&) { return cummax(x, 0); });
    pair_op("cummin", [](const Tensor& x, const Args&) { return cummin(x, 0); });
    c["cumprod"] = [](const std::vector<Tensor>& x, const Args&) { return cumprod(x[0], 0); };
    c["logcumsumexp"] = [](const std::vector<Tensor>& x, const Args&) {
      return logcumsumexp(x[0], 0);
    };
    c["median"] = [](const std::vector<Tensor>& x, const Args&) { return median(x[0]); };
    c["nanmedian"] = [](const std::vector<Tensor>& x, const Args&) { return nanmedian(x[0]); };
    // The labels and lengths arrive as float64 inputs (gradient "none"): read as int64.
    c["ctc_loss"] = [](const std::vector<Tensor>& x, const Args& a) {
      auto ints = [](const Tensor& t) { return t.detach().to(kInt64); };
      return F::ctc_loss(x[0], ints(x[1]), ints(x[2]), ints(x[3]), int_arg(a, "blank", 0),
                         reduction_of(a), num(a, "zero_infinity", 0) != 0);
    };
    c["pairwise_distance"] = [](const std::vector<Tensor>& x, const Args& a) {
      return F::pairwise_distance(x[0], x[1], num(a, "p", 2), 1e-6, num(a, "keepdim", 0) != 0);
    };
    return c;
  }();
  return m;
}

// Same length; NaN where NaN; equal within `rtol` (floats; exact for integers); zeros of the
// same sign when `signed_zeros`.
::testing::AssertionResult values_match(const std::vector<double>& got,
                                        const std::vector<double>& want, bool exact,
                                        bool signed_zeros, double rtol = 1e-12,
                                        double atol = 1e-300) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values, want " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok = std::isnan(w) ? std::isnan(g)
              : exact       ? g == w
                            : (g == w || std::fabs(g - w) <= rtol * std::fabs(w) + atol);
    if (ok && signed_zeros && w == 0) ok = std::signbit(g) == std::signbit(w);
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

std::vector<double> as_doubles(const Tensor& t) {
  Tensor c = t.cpu().to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// The ops whose zeros' signs are part of their results (rounding, remainders, signs).
const std::set<std::string> kSignedZeroOps = {"round",    "floor", "ceil",         "trunc",
                                              "frac",     "fmod",  "remainder",    "sign",
                                              "copysign", "atan2", "floor_divide", "nan_to_num"};

const std::set<std::string> kSummingLayerOps = {
    "conv1d",   "conv3d", "conv_transpose1d",   "conv_transpose2d", "interpolate",
    "bilinear", "fold",   "local_response_norm"};

class MathFixtureTest : public testing::DeviceTest {};

TEST_P(MathFixtureTest, OutputsAndGradientsMatchPyTorch) {
  std::vector<Case> cases = read_cases();
  ASSERT_GE(cases.size(), 100u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line.substr(0, 160));
    auto it = calls().find(c.op);
    ASSERT_NE(it, calls().end()) << "no ember call for " << c.op;
    const std::optional<DType> dtype = dtype_from_name(c.dtype);
    ASSERT_TRUE(dtype.has_value()) << c.dtype;
    const bool grad = !c.grads.empty();
    std::vector<Tensor> inputs;
    ASSERT_EQ(c.shapes.size(), c.inputs.size());
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      Tensor t = from_vector<double>(c.inputs[i], c.shapes[i]).to(*dtype).to(device());
      if (grad) t.requires_grad_(true);
      inputs.push_back(t);
    }
    Tensor out = it->second(inputs, parse_args(c.args));
    ASSERT_EQ(out.numel(), static_cast<int64_t>(c.output.size()));
    // Layers summing many products (convolutions, cubic taps) may round a result that cancels to
    // near 0 differently from PyTorch: atol 1e-12 there.
    EXPECT_TRUE(values_match(as_doubles(out), c.output, !is_floating_point(out.dtype()),
                             kSignedZeroOps.contains(c.op), 1e-12,
                             kSummingLayerOps.contains(c.op) ? 1e-12 : 1e-300));
    if (!grad) continue;
    // The fixture's upstream gradient: linspace(0.5, 1.5, n).
    Tensor w = linspace(0.5, 1.5, out.numel(), {.dtype = kFloat64}).to(device());
    out.backward(w.view(out.sizes()));
    ASSERT_EQ(c.grads.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (c.grads[i].empty()) continue;  // a label: PyTorch gives it no gradient
      ASSERT_TRUE(inputs[i].grad().defined()) << "input " << i << " got no gradient";
      // rtol 1e-7: PyTorch's hardsigmoid gradient multiplies by float32's 1/6 even in float64;
      // atol 1e-15: a normalization's gradient that cancels to 0 leaves rounding noise.
      EXPECT_TRUE(values_match(as_doubles(inputs[i].grad()), c.grads[i], false, false, 1e-7, 1e-15))
          << "gradient of input " << i;
    }
  }
}

// Shifts by the bit width or more, or by a negative amount: PyTorch >= 2.1's rule.
TEST_P(MathFixtureTest, ShiftsOutOfRangeFollowCurrentPyTorch) {
  Tensor a = tensor({1, -8, 5, -5}, on()).to(kInt64),
         big = tensor({64, 70, -1, 100}, on()).to(kInt64);
  EXPECT_TRUE(tensor_equal(bitwise_left_shift(a, big), zeros({4}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(bitwise_right_shift(a, big), tensor({0, -1, 0, -1}, on()).to(kInt64)));
  Tensor a32 = a.to(kInt32), b32 = tensor({32, 33, 31, 31}, on()).to(kInt32);
  EXPECT_TRUE(tensor_equal(
      a32 << b32, tensor({0, 0, int64_t{5} << 31, int64_t{-5} << 31}, on()).to(kInt64).to(kInt32)));
  EXPECT_TRUE(tensor_equal(a32 >> b32, tensor({0, -1, 0, -1}, on()).to(kInt32)));
}

TEST_P(MathFixtureTest, OperatorsAreTheBitwiseOps) {
  Tensor a = tensor({12, 10, -3}, on()).to(kInt64), b = tensor({10, 6, 1}, on()).to(kInt64);
  EXPECT_TRUE(tensor_equal(a & b, bitwise_and(a, b)));
  EXPECT_TRUE(tensor_equal(a | b, tensor({14, 14, -3}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(a ^ b, tensor({6, 12, -4}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(~a, tensor({-13, -11, 2}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(a << b, tensor({12288, 640, -6}, on()).to(kInt64)));
  EXPECT_TRUE(
      tensor_equal(a >> tensor({2, 1, 1}, on()).to(kInt64), tensor({3, 5, -2}, on()).to(kInt64)));
  EXPECT_TRUE(tensor_equal(a.bitwise_and(7), tensor({4, 2, 5}, on()).to(kInt64)));
}

TEST_P(MathFixtureTest, BadInputIsAnErrorNamingTheRule) {
  Tensor i = tensor({4, 5}, on()).to(kInt64), zero = tensor({2, 0}, on()).to(kInt64);
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  for (Binary f : {Binary(&fmod), Binary(&remainder), Binary(&floor_divide)})
    EXPECT_TRUE(testing::throws_error([&] { (void)f(i, zero); }, ErrorKind::Value,
                                      {"ZeroDivisionError", "integer division by zero"}));
  Tensor x = tensor({1.5, 2.5}, on());
  EXPECT_TRUE(testing::throws_error([&] { (void)bitwise_and(x, x); }, ErrorKind::DType,
                                    {"[bitwise_and]", "integer or bool", "float32"}));
  EXPECT_TRUE(
      testing::throws_error([&] { (void)~x; }, ErrorKind::DType, {"[bitwise_not]", "float32"}));
  EXPECT_TRUE(testing::throws_error([&] { (void)round(i, 1); }, ErrorKind::DType,
                                    {"[round]", "decimals", "int64"}));
  EXPECT_TRUE(testing::throws_error([&] { (void)frac(i); }, ErrorKind::DType, {"[frac]", "int64"}));
  Tensor b = tensor({1, 0}, on()).to(kBool);
  EXPECT_TRUE(testing::throws_error([&] { (void)bitwise_left_shift(b, b); }, ErrorKind::DType,
                                    {"[bitwise_left_shift]", "bool"}));
  EXPECT_TRUE(
      testing::throws_error([&] { (void)fmod(b, b); }, ErrorKind::DType, {"[fmod]", "bool"}));
  EXPECT_TRUE(testing::throws_error([&] { (void)F::hardtanh(x, 2.0, 1.0); }, ErrorKind::Value,
                                    {"[hardtanh]", "min_val", "max_val"}));
  EXPECT_TRUE(testing::throws_error([&] { (void)addcdiv(x, i, i); }, ErrorKind::DType,
                                    {"[addcdiv]", "Integer division"}));
  // Float division by zero is IEEE's, as PyTorch.
  Tensor f0 = tensor({3.0, -3.0}, on()), z = zeros({2}, on());
  EXPECT_TRUE(tensor_equal(floor_divide(f0, z), tensor({INFINITY, -INFINITY}, on())));
}

// Integer and bool inputs to the rounding and classification ops keep their dtype or give bool,
// square of bool is int64, and the Float ops compute integers in float32.
TEST_P(MathFixtureTest, ResultDtypes) {
  Tensor i = tensor({-2, 3}, on()).to(kInt32), b = tensor({1, 0}, on()).to(kBool);
  EXPECT_EQ(floor(i).dtype(), kInt32);
  EXPECT_EQ(round(i).dtype(), kInt32);
  EXPECT_EQ(isnan(i).dtype(), kBool);
  EXPECT_EQ(square(b).dtype(), kInt64);
  EXPECT_EQ(sin(i).dtype(), kFloat32);
  EXPECT_EQ(atan2(i, i).dtype(), kFloat32);
  EXPECT_EQ(fmod(i, 2).dtype(), kInt32);
  EXPECT_EQ(fmod(i, 2.5).dtype(), kFloat32);
  EXPECT_EQ(nan_to_num(i).dtype(), kInt32);
  // nan_to_num's default infinities are the dtype's own largest values.
  Tensor h = tensor({INFINITY, -INFINITY}, on()).to(kFloat16);
  EXPECT_TRUE(tensor_equal(nan_to_num(h).to(kFloat32), tensor({65504.0f, -65504.0f}, on())));
}

// cumsum: integers and bool sum in int64 (or the dtype asked for, wrapping), a 0-dim tensor is
// its own sum, and the gradient is the reversed cumulative sum of the incoming one.
TEST_P(MathFixtureTest, CumsumDtypesScalarsAndGradient) {
  Tensor b = tensor({1, 1, 0, 1}, on()).to(kBool);
  EXPECT_TRUE(tensor_equal(cumsum(b, 0), tensor({1, 2, 2, 3}, on()).to(kInt64)));
  Tensor u = tensor({200, 100}, on()).to(kUInt8);
  EXPECT_TRUE(tensor_equal(cumsum(u, 0, kUInt8), tensor({200, 44}, on()).to(kUInt8)));
  EXPECT_TRUE(tensor_equal(cumsum(tensor(2.5, on()), 0), tensor(2.5, on())));
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, on()).requires_grad_(true);
  Tensor y = cumsum(x, 1);
  EXPECT_TRUE(tensor_equal(y, tensor({{1.0, 3.0, 6.0}, {4.0, 9.0, 15.0}}, on())));
  y.backward(tensor({{1.0, 10.0, 100.0}, {0.0, 0.0, 1.0}}, on()));
  EXPECT_TRUE(tensor_equal(x.grad(), tensor({{111.0, 110.0, 100.0}, {1.0, 1.0, 1.0}}, on())));
  EXPECT_TRUE(testing::throws_error([&] { (void)cumsum(x, 2); }, ErrorKind::Index, {"[cumsum]"}));
}

// addmm with beta 0 ignores self, NaN included, also when self broadcasts (PyTorch's rule).
TEST_P(MathFixtureTest, AddmmBetaZeroIgnoresSelf) {
  Tensor m = tensor({{1.0, 2.0}, {3.0, 4.0}}, on()), nan_row = tensor({NAN, NAN}, on());
  EXPECT_TRUE(tensor_equal(addmm(nan_row, m, m, 0.0), mm(m, m)));
  EXPECT_TRUE(tensor_equal(addmm(nan_row.view({1, 2}).expand({2, 2}), m, m, 0.0), mm(m, m)));
}

EMBER_INSTANTIATE_DEVICE_TESTS(MathFixtureTest);

}  // namespace
}  // namespace ember
