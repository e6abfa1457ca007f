// tests/op_table/op_table.cpp: the op table's rows, and the seeded inputs, references and
// comparisons that its users (tests/test_op_table.cpp, tools/gpu_smoke) share.
#include "op_table/op_table.h"

#include "op_table/row_builders.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

namespace ember::op_table {

namespace F = nn::functional;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double gelu_ref(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double gelu_tanh_ref(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double sum_of(std::span<const double> v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}
double var_of(std::span<const double> v) {
  double m = sum_of(v) / static_cast<double>(v.size()), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / (static_cast<double>(v.size()) - 1);
}
double max_of(std::span<const double> v) {
  double m = -INFINITY;
  for (double x : v) m = std::max(m, x);
  return m;
}
double min_of(std::span<const double> v) {
  double m = INFINITY;
  for (double x : v) m = std::min(m, x);
  return m;
}
// The first position of the largest (or smallest) value.
double arg_of(std::span<const double> v, bool largest) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (largest ? v[i] > v[best] : v[i] < v[best]) best = i;
  return static_cast<double>(best);
}

// matmul by broadcasting and summing: (..., n, k, 1) * (..., 1, k, m) summed over k, with 1-D
// operands made 2-D and the added dims removed, as torch.matmul's rules.
Tensor matmul_by_broadcast(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0.dim() == 1 ? a0.unsqueeze(0) : a0;
  Tensor b = b0.dim() == 1 ? b0.unsqueeze(1) : b0;
  Tensor out = (a.unsqueeze(-1) * b.unsqueeze(-3)).sum({-2});
  if (b0.dim() == 1) out = out.squeeze(-1);
  if (a0.dim() == 1) out = out.squeeze(out.dim() == 1 ? 0 : -2);
  return out;
}

// (N, C, d1, ...) as (N, d1, ..., C); (C) and (N, C) as they are.
Tensor classes_last(const Tensor& t) {
  if (t.dim() <= 2) return t;
  Shape perm{0};
  for (int64_t i = 2; i < t.dim(); ++i) perm.push_back(i);
  perm.push_back(1);
  return t.permute(perm);
}

std::vector<OpRow> elementwise_rows() {
  using R = ResultDtype;
  const Domain positive{.lo = 0.1, .hi = 5};
  const Domain away{.lo = -2, .hi = 2, .gap = 0.1};
  const Domain small_ints{.lo = -2, .hi = 2, .integers = true};
  const Domain bits{.lo = -1, .hi = 1, .integers = true};
  std::vector<OpRow> rows;
  // --- unary_ops.def
  rows.push_back(unary(
      "neg", unary_call(&neg), [](double x, auto&) { return -x; }, kNumbers, R::Same, true));
  rows.push_back(unary(
      "abs", unary_call(&abs), [](double x, auto&) { return std::fabs(x); }, kNumbers, R::Same,
      true, away));
  rows.push_back(unary(
      "sign", unary_call(&sign), [](double x, auto&) { return double((x > 0) - (x < 0)); },
      kNumbers, R::Same, true, away));
  rows.push_back(unary("exp", unary_call(&exp), [](double x, auto&) { return std::exp(x); }, kAll,
                       R::FloatForIntegers, true, {.lo = -3, .hi = 3}));
  rows.push_back(unary(
      "log", unary_call(&log), [](double x, auto&) { return std::log(x); }, kAll,
      R::FloatForIntegers, true, positive));
  rows.push_back(unary("log1p", unary_call(&log1p), [](double x, auto&) { return std::log1p(x); },
                       kAll, R::FloatForIntegers, true, {.lo = -0.9, .hi = 5}));
  rows.push_back(unary(
      "sqrt", unary_call(&sqrt), [](double x, auto&) { return std::sqrt(x); }, kAll,
      R::FloatForIntegers, true, positive));
  rows.push_back(unary(
      "rsqrt", unary_call(&rsqrt), [](double x, auto&) { return 1 / std::sqrt(x); }, kAll,
      R::FloatForIntegers, true, positive));
  OpRow relu_row = unary(
      "relu", unary_call(&relu), [](double x, auto&) { return x > 0 ? x : 0; }, kNumbers, R::Same,
      true, away);
  relu_row.also_covers = {"relu_backward"};
  rows.push_back(relu_row);
  rows.push_back(
      with_variant(unary(
                       "leaky_relu",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return leaky_relu(x[0], a.numbers[0]);
                       },
                       [](double x, const OpArgs& a) { return x > 0 ? x : x * a.numbers[0]; },
                       kNumbers, R::FloatForIntegers, true, away),
                   "", {.numbers = {0.2}}));
  rows.push_back(unary("sigmoid", unary_call(&sigmoid),
                       [](double x, auto&) { return 1 / (1 + std::exp(-x)); }, kAll,
                       R::FloatForIntegers, true, {.lo = -4, .hi = 4}));
  rows.push_back(unary("tanh", unary_call(&tanh), [](double x, auto&) { return std::tanh(x); },
                       kAll, R::FloatForIntegers, true, {.lo = -4, .hi = 4}));
  const Call gelu_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return gelu(x[0], a.text);
  };
  OpRow gelu_row =
      with_variant(unary("gelu", gelu_call, [](double x, auto&) { return gelu_ref(x); }, kNumbers,
                         R::FloatForIntegers, true, {.lo = -3, .hi = 3}),
                   "", {.text = "none"});
  gelu_row.also_covers = {"gelu_backward"};
  rows.push_back(gelu_row);
  OpRow gelu_tanh_row =
      with_variant(unary("gelu", gelu_call, [](double x, auto&) { return gelu_tanh_ref(x); },
                         kNumbers, R::FloatForIntegers, true, {.lo = -3, .hi = 3}),
                   "tanh", {.text = "tanh"});
  gelu_tanh_row.also_covers = {"gelu_tanh_backward"};
  rows.push_back(gelu_tanh_row);
  const UnaryRef clamp_ref = [](double x, const OpArgs& a) {
    double y = std::max(x, a.numbers[0]);
    return a.numbers.size() > 1 ? std::min(y, a.numbers[1]) : y;
  };
  // Float bounds make integer inputs float32 (result_type(input, min, max)); integer bounds
  // keep them.
  rows.push_back(with_variant(unary(
                                  "clamp",
                                  [](const std::vector<Tensor>& x, const OpArgs& a) {
                                    return clamp(x[0], a.numbers[0], a.numbers[1]);
                                  },
                                  clamp_ref, kNumbers, R::FloatForIntegers, true),
                              "", {.numbers = {-0.5, 0.75}}));
  rows.push_back(with_variant(
      unary(
          "clamp",
          [](const std::vector<Tensor>& x, const OpArgs& a) { return clamp(x[0], a.numbers[0]); },
          clamp_ref, kNumbers, R::FloatForIntegers, true),
      "min", {.numbers = {-0.5}}));
  rows.push_back(
      with_variant(unary(
                       "clamp",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return clamp(x[0], std::nullopt, a.numbers[0]);
                       },
                       [](double x, const OpArgs& a) { return std::min(x, a.numbers[0]); },
                       kNumbers, R::FloatForIntegers, true),
                   "max", {.numbers = {0.75}}));
  rows.push_back(
      with_variant(unary("clamp",
                         [](const std::vector<Tensor>& x, const OpArgs& a) {
                           return clamp(x[0], static_cast<int64_t>(a.numbers[0]),
                                        static_cast<int64_t>(a.numbers[1]));
                         },
                         clamp_ref, kNumbers, R::Same, true, {.lo = -3, .hi = 3, .gap = 0.1}),
                   "int_bounds", {.numbers = {0, 2}}));
  const UnaryRef pow_ref = [](double x, const OpArgs& a) { return std::pow(x, a.numbers[0]); };
  rows.push_back(with_variant(
      unary("pow",
            [](const std::vector<Tensor>& x, const OpArgs& a) { return pow(x[0], a.numbers[0]); },
            pow_ref, kNumbers, R::FloatForIntegers, true, {.lo = 0.1, .hi = 3}),
      "scalar", {.numbers = {2.5}}));
  rows.push_back(with_variant(unary(
                                  "pow",
                                  [](const std::vector<Tensor>& x, const OpArgs& a) {
                                    return pow(x[0], static_cast<int64_t>(a.numbers[0]));
                                  },
                                  pow_ref, kNumbers, R::Same, true),
                              "scalar_int", {.numbers = {3}}));
  rows.push_back(unary(
      "logical_not", unary_call(&logical_not), [](double x, auto&) { return double(x == 0); }, kAll,
      R::Bool, false, bits));
  // --- binary_ops.def
  rows.push_back(binary(
      "add", [](const std::vector<Tensor>& x, const OpArgs&) { return add(x[0], x[1]); },
      [](double a, double b, auto&) { return a + b; }, kNumbers, R::Same, true));
  rows.push_back(binary(
      "sub", [](const std::vector<Tensor>& x, const OpArgs&) { return sub(x[0], x[1]); },
      [](double a, double b, auto&) { return a - b; }, kNumbers, R::Same, true));
  rows.push_back(binary(
      "mul", binary_call(&mul), [](double a, double b, auto&) { return a * b; }, kNumbers, R::Same,
      true));
  rows.push_back(binary("div", binary_call(&div), [](double a, double b, auto&) { return a / b; },
                        kNumbers, R::FloatForIntegers, true, {}, {.lo = -2, .hi = 2, .gap = 0.5}));
  // Integer bases to negative integer powers truncate (aten's powi), as the integer result does.
  rows.push_back(binary("pow", binary_call(&pow),
                        [](double a, double b, auto&) { return std::pow(a, b); }, kNumbers, R::Same,
                        true, {.lo = 0.5, .hi = 2}, {.lo = -2, .hi = 2}));
  rows.push_back(binary(
      "maximum", binary_call(&maximum), [](double a, double b, auto&) { return std::max(a, b); },
      kNumbers, R::Same, true));
  rows.push_back(binary(
      "minimum", binary_call(&minimum), [](double a, double b, auto&) { return std::min(a, b); },
      kNumbers, R::Same, true));
  rows.push_back(binary(
      "eq", binary_call(&eq), [](double a, double b, auto&) { return double(a == b); }, kAll,
      R::Bool, false, small_ints, small_ints));
  rows.push_back(binary(
      "ne", binary_call(&ne), [](double a, double b, auto&) { return double(a != b); }, kAll,
      R::Bool, false, small_ints, small_ints));
  rows.push_back(binary(
      "lt", binary_call(&lt), [](double a, double b, auto&) { return double(a < b); }, kAll,
      R::Bool, false, small_ints, small_ints));
  rows.push_back(binary(
      "le", binary_call(&le), [](double a, double b, auto&) { return double(a <= b); }, kAll,
      R::Bool, false, small_ints, small_ints));
  rows.push_back(binary(
      "gt", binary_call(&gt), [](double a, double b, auto&) { return double(a > b); }, kAll,
      R::Bool, false, small_ints, small_ints));
  rows.push_back(binary(
      "ge", binary_call(&ge), [](double a, double b, auto&) { return double(a >= b); }, kAll,
      R::Bool, false, small_ints, small_ints));
  rows.push_back(binary(
      "logical_and", binary_call(&logical_and),
      [](double a, double b, auto&) { return double(a != 0 && b != 0); }, kAll, R::Bool, false,
      bits, bits));
  rows.push_back(binary(
      "logical_or", binary_call(&logical_or),
      [](double a, double b, auto&) { return double(a != 0 || b != 0); }, kAll, R::Bool, false,
      bits, bits));
  rows.push_back(binary(
      "logical_xor", binary_call(&logical_xor),
      [](double a, double b, auto&) { return double((a != 0) != (b != 0)); }, kAll, R::Bool, false,
      bits, bits));
  // where(condition, a, b): a condition input, then two element-wise values.
  OpRow where_row = other(
      "where", "",
      [](const std::vector<Tensor>& x, const OpArgs&) { return where(x[0], x[1], x[2]); },
      {mask(), value(), value()},
      {{{}, {}, {}}, {{0, 3}, {0, 3}, {0, 3}}, {{3, 4}, {3, 4}, {3, 4}}, {{3, 1}, {1, 4}, {}}},
      kNumbers, R::Same, true);
  where_row.elementwise = true;
  where_row.composite_ref = [](const std::vector<Tensor>& x, const OpArgs&) {
    Tensor c = x[0].to(kFloat64);
    return x[1] * c + x[2] * (1 - c);
  };
  rows.push_back(where_row);
  OpRow masked_fill_row =
      other("masked_fill", "",
            [](const std::vector<Tensor>& x, const OpArgs& a) {
              return masked_fill(x[0], x[1], a.numbers[0]);
            },
            {value(), mask()}, {{{}, {}}, {{0, 3}, {0, 3}}, {{3, 4}, {3, 4}}, {{3, 4}, {4}}},
            kNumbers, R::Same, true, {.numbers = {3}});
  masked_fill_row.elementwise = true;
  masked_fill_row.composite_ref = [](const std::vector<Tensor>& x, const OpArgs& a) {
    Tensor m = x[1].to(kFloat64);
    return x[0] * (1 - m) + m * a.numbers[0];
  };
  rows.push_back(masked_fill_row);
  return rows;
}

std::vector<OpRow> reduction_rows() {
  using R = ResultDtype;
  const std::vector<std::vector<Shape>> all = {{{}}, {{0}}, {{7}}, {{3, 5}}};
  const std::vector<std::vector<Shape>> nonempty = {{{}}, {{7}}, {{3, 5}}, {{2, 3, 4}}};
  const std::vector<std::vector<Shape>> by_dim = {{{3, 5}}, {{2, 3, 4}}, {{4, 1}}};
  const std::vector<std::vector<Shape>> several = {{{7}}, {{3, 5}}, {{2, 3, 4}}};
  const OpArgs dim1{.numbers = {1, 0}}, dim0_keep{.numbers = {0, 1}}, last_keep{.numbers = {-1, 1}};
  std::vector<OpRow> rows;
  const ReduceRef sum_ref = [](std::span<const double> v, auto&) { return sum_of(v); };
  const ReduceRef mean_ref = [](std::span<const double> v, auto&) {
    return v.empty() ? kNaN : sum_of(v) / static_cast<double>(v.size());
  };
  const ReduceRef prod_ref = [](std::span<const double> v, auto&) {
    return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<>());
  };
  const ReduceRef max_ref = [](std::span<const double> v, auto&) { return max_of(v); };
  const ReduceRef min_ref = [](std::span<const double> v, auto&) { return min_of(v); };
  const ReduceRef var_ref = [](std::span<const double> v, auto&) { return var_of(v); };
  const ReduceRef std_ref = [](std::span<const double> v, auto&) { return std::sqrt(var_of(v)); };
  const ReduceRef lse_ref = [](std::span<const double> v, auto&) {
    double m = max_of(v), s = 0;
    for (double x : v) s += std::exp(x - m);
    return m + std::log(s);
  };
  rows.push_back(reduction(
      "sum", "", [](const std::vector<Tensor>& x, auto&) { return sum(x[0]); }, sum_ref, all, kAll,
      R::Int64ForIntegers, true));
  const Call sum_dim = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return sum(x[0], {dim_arg(a)}, keepdim_arg(a));
  };
  rows.push_back(
      reduction("sum", "dim", sum_dim, sum_ref, by_dim, kAll, R::Int64ForIntegers, true, dim1));
  rows.push_back(reduction("sum", "dim_keepdim", sum_dim, sum_ref, by_dim, kAll,
                           R::Int64ForIntegers, true, dim0_keep));
  rows.push_back(reduction(
      "mean", "", [](const std::vector<Tensor>& x, auto&) { return mean(x[0]); }, mean_ref, all,
      kFloats, R::Same, true));
  rows.push_back(reduction(
      "mean", "dim",
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return mean(x[0], {dim_arg(a)}, keepdim_arg(a));
      },
      mean_ref, by_dim, kFloats, R::Same, true, last_keep));
  const Domain near_one{.lo = -1.5, .hi = 1.5};
  rows.push_back(reduction(
      "prod", "", [](const std::vector<Tensor>& x, auto&) { return prod(x[0]); }, prod_ref, all,
      kNumbers, R::Int64ForIntegers, true, {}, near_one));
  rows.push_back(reduction(
      "prod", "dim",
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return prod(x[0], dim_arg(a), keepdim_arg(a));
      },
      prod_ref, by_dim, kNumbers, R::Int64ForIntegers, true, dim1, near_one));
  // The largest and the smallest: amax/amin, max/min over all and over a dim (the values; the
  // indices are argmax/argmin's rows), argmax/argmin.
  for (bool largest : {true, false}) {
    const ReduceRef ref = largest ? max_ref : min_ref;
    const OpArgs& along = largest ? dim1 : dim0_keep;
    rows.push_back(reduction(
        largest ? "amax" : "amin", "",
        [largest](const std::vector<Tensor>& x, const OpArgs& a) {
          return largest ? amax(x[0], {dim_arg(a)}, keepdim_arg(a))
                         : amin(x[0], {dim_arg(a)}, keepdim_arg(a));
        },
        ref, by_dim, kNumbers, R::Same, true, along));
    rows.push_back(reduction(
        largest ? "max" : "min", "",
        [largest](const std::vector<Tensor>& x, auto&) { return largest ? max(x[0]) : min(x[0]); },
        ref, nonempty, kNumbers, R::Same, true));
    rows.push_back(reduction(
        largest ? "max" : "min", "dim",
        [largest](const std::vector<Tensor>& x, const OpArgs& a) {
          return std::get<0>(largest ? max(x[0], dim_arg(a), keepdim_arg(a))
                                     : min(x[0], dim_arg(a), keepdim_arg(a)));
        },
        ref, by_dim, kNumbers, R::Same, true, largest ? dim1 : last_keep));
    rows.push_back(reduction(
        largest ? "argmax" : "argmin", "",
        [largest](const std::vector<Tensor>& x, const OpArgs& a) {
          return largest ? argmax(x[0], dim_arg(a), keepdim_arg(a))
                         : argmin(x[0], dim_arg(a), keepdim_arg(a));
        },
        [largest](std::span<const double> v, auto&) { return arg_of(v, largest); }, by_dim,
        kNumbers, R::Int64, false, along, {.lo = -3, .hi = 3}));
  }
  // var and std (unbiased), over all and over a dim.
  for (bool root : {false, true}) {
    const ReduceRef ref = root ? std_ref : var_ref;
    rows.push_back(reduction(
        root ? "std" : "var", "",
        [root](const std::vector<Tensor>& x, auto&) { return root ? ember::std(x[0]) : var(x[0]); },
        ref, several, kFloats, R::Same, true));
    rows.push_back(reduction(
        root ? "std" : "var", "dim",
        [root](const std::vector<Tensor>& x, const OpArgs& a) {
          return root ? ember::std(x[0], {dim_arg(a)}, true, keepdim_arg(a))
                      : var(x[0], {dim_arg(a)}, true, keepdim_arg(a));
        },
        ref, {{{3, 5}}, {{2, 3, 4}}}, kFloats, R::Same, true, root ? dim0_keep : dim1));
  }
  rows.push_back(reduction("logsumexp", "",
                           [](const std::vector<Tensor>& x, const OpArgs& a) {
                             return logsumexp(x[0], {dim_arg(a)}, keepdim_arg(a));
                           },
                           lse_ref, by_dim, kFloats, R::Same, true, dim1, {.lo = -4, .hi = 4}));
  // softmax and log_softmax map each slice along the dim.
  for (bool log : {false, true}) {
    OpRow r = other(log ? "log_softmax" : "softmax", "",
                    [log](const std::vector<Tensor>& x, const OpArgs& a) {
                      return log ? log_softmax(x[0], dim_arg(a)) : softmax(x[0], dim_arg(a));
                    },
                    {value({.lo = -4, .hi = 4})}, {{{0, 3}}, {{7}}, {{3, 5}}, {{2, 3, 4}}}, kFloats,
                    R::Same, true, {.numbers = {-1}});
    r.along_dim = true;
    r.slice_ref = [log](std::span<const double> v, auto&) {
      double m = max_of(v), s = 0;
      for (double x : v) s += std::exp(x - m);
      std::vector<double> out;
      for (double x : v) out.push_back(log ? x - m - std::log(s) : std::exp(x - m) / s);
      return out;
    };
    rows.push_back(r);
  }
  return rows;
}

std::vector<OpRow> linear_algebra_rows() {
  using R = ResultDtype;
  const Call matmul_call = [](const std::vector<Tensor>& x, auto&) { return matmul(x[0], x[1]); };
  const Call matmul_ref = [](const std::vector<Tensor>& x, auto&) {
    return matmul_by_broadcast(x[0], x[1]);
  };
  const std::vector<DType> dtypes = {kInt64, kFloat32, kFloat64, kBFloat16, kFloat16};
  std::vector<OpRow> rows;
  OpRow m = other("matmul", "", matmul_call, {value(), value()},
                  {{{3, 4}, {4, 5}},
                   {{4}, {4}},
                   {{4}, {4, 5}},
                   {{3, 4}, {4}},
                   {{2, 3, 4}, {4, 2}},
                   {{5, 3}, {2, 3, 4}},
                   {{2, 1, 3, 4}, {3, 4, 2}}},
                  dtypes, R::Same, true);
  m.composite_ref = matmul_ref;
  rows.push_back(m);
  OpRow mm_row = other(
      "mm", "", [](const std::vector<Tensor>& x, auto&) { return mm(x[0], x[1]); },
      {value(), value()}, {{{3, 4}, {4, 5}}, {{1, 6}, {6, 1}}, {{3, 0}, {0, 4}}, {{0, 2}, {2, 3}}},
      dtypes, R::Same, true);
  mm_row.composite_ref = matmul_ref;
  rows.push_back(mm_row);
  OpRow bmm_row = other(
      "bmm", "", [](const std::vector<Tensor>& x, auto&) { return bmm(x[0], x[1]); },
      {value(), value()}, {{{2, 3, 4}, {2, 4, 5}}, {{1, 2, 2}, {1, 2, 3}}}, dtypes, R::Same, true);
  bmm_row.composite_ref = matmul_ref;
  rows.push_back(bmm_row);
  OpRow lin = other(
      "linear", "",
      [](const std::vector<Tensor>& x, auto&) {
        return F::linear(x[0], x[1], x.size() > 2 ? x[2] : Tensor());
      },
      {value(), value(), value()},
      {{{4, 3}, {5, 3}, {5}}, {{2, 4, 3}, {5, 3}, {5}}, {{3}, {2, 3}, {2}}}, kFloats, R::Same,
      true);
  lin.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    Tensor y = matmul_by_broadcast(x[0], x[1].t());
    return x.size() > 2 ? y + x[2] : y;
  };
  rows.push_back(lin);
  OpRow no_bias = lin;
  no_bias.variant = "no_bias";
  no_bias.inputs.pop_back();
  for (auto& s : no_bias.samples) s.pop_back();
  rows.push_back(no_bias);
  return rows;
}

std::vector<OpRow> nn_rows() {
  using R = ResultDtype;
  std::vector<OpRow> rows;
  // conv2d(input, weight, bias) with stride args.numbers[0], padding [1], dilation [2], groups [3].
  const Call conv = [](const std::vector<Tensor>& x, const OpArgs& a) {
    auto n = [&](size_t i) { return static_cast<int64_t>(a.numbers[i]); };
    return F::conv2d(x[0], x[1], x[2],
                     {.stride = n(0), .padding = n(1), .dilation = n(2), .groups = n(3)});
  };
  rows.push_back(other("conv2d", "", conv, {value(), value(), value()},
                       {{{1, 2, 5, 5}, {3, 2, 3, 3}, {3}}, {{2, 5, 4}, {3, 2, 2, 2}, {3}}}, kFloats,
                       R::Same, true, {.numbers = {1, 1, 1, 1}}));
  rows.push_back(other("conv2d", "stride_dilation_groups", conv, {value(), value(), value()},
                       {{{1, 4, 7, 6}, {2, 2, 2, 3}, {2}}}, kFloats, R::Same, true,
                       {.numbers = {2, 1, 2, 2}}));
  // max_pool2d and avg_pool2d: kernel args.numbers[0], stride [1], padding [2].
  for (bool max_pool : {true, false}) {
    const Call pool = [max_pool](const std::vector<Tensor>& x, const OpArgs& a) {
      auto n = [&](size_t i) { return static_cast<int64_t>(a.numbers[i]); };
      return max_pool ? F::max_pool2d(x[0], n(0), {.stride = n(1), .padding = n(2)})
                      : F::avg_pool2d(x[0], n(0), {.stride = n(1), .padding = n(2)});
    };
    const char* name = max_pool ? "max_pool2d" : "avg_pool2d";
    rows.push_back(other(name, "", pool, {value()}, {{{1, 2, 6, 6}}, {{2, 4, 5}}}, kFloats, R::Same,
                         true, {.numbers = {2, 2, 0}}));
    rows.push_back(other(name, "padding", pool, {value()}, {{{1, 2, 7, 6}}}, kFloats, R::Same, true,
                         {.numbers = {3, 2, 1}}));
  }
  rows.push_back(
      other("adaptive_avg_pool2d", "",
            [](const std::vector<Tensor>& x, const OpArgs& a) {
              return F::adaptive_avg_pool2d(
                  x[0], {static_cast<int64_t>(a.numbers[0]), static_cast<int64_t>(a.numbers[1])});
            },
            {value()}, {{{1, 2, 7, 5}}, {{3, 4, 4}}}, kFloats, R::Same, true, {.numbers = {3, 2}}));
  // Losses; args.text is the reduction ("" is mean).
  const std::vector<std::vector<Shape>> pairs = {{{7}, {7}}, {{3, 4}, {3, 4}}};
  for (std::string red : {"", "none", "sum"}) {
    OpRow mse = other("mse_loss", red,
                      [](const std::vector<Tensor>& x, const OpArgs& a) {
                        return F::mse_loss(x[0], x[1], reduction_arg(a));
                      },
                      {value(), value()}, pairs, kFloats, R::Same, true, {.text = red});
    mse.composite_ref = [](const std::vector<Tensor>& x, const OpArgs& a) {
      return reduce_like((x[0] - x[1]) * (x[0] - x[1]), a);
    };
    rows.push_back(mse);
  }
  OpRow l1 = other(
      "l1_loss", "", [](const std::vector<Tensor>& x, auto&) { return F::l1_loss(x[0], x[1]); },
      {value(), value()}, pairs, kFloats, R::Same, true);
  l1.composite_ref = [](const std::vector<Tensor>& x, auto&) { return abs(x[0] - x[1]).mean(); };
  rows.push_back(l1);
  const Domain probability{.lo = 0.05, .hi = 0.95};
  for (std::string red : {"", "sum"}) {
    OpRow bce = other("binary_cross_entropy", red,
                      [](const std::vector<Tensor>& x, const OpArgs& a) {
                        return F::binary_cross_entropy(x[0], x[1], reduction_arg(a));
                      },
                      {value(probability), constant({.lo = 0, .hi = 1})}, pairs, kFloats, R::Same,
                      true, {.text = red});
    bce.composite_ref = [](const std::vector<Tensor>& x, const OpArgs& a) {
      return reduce_like(-(x[1] * log(x[0]) + (1 - x[1]) * log(1 - x[0])), a);
    };
    rows.push_back(bce);
  }
  OpRow bce_logits = other(
      "binary_cross_entropy_with_logits", "",
      [](const std::vector<Tensor>& x, auto&) {
        return F::binary_cross_entropy_with_logits(x[0], x[1]);
      },
      {value({.lo = -4, .hi = 4}), constant({.lo = 0, .hi = 1})}, pairs, kFloats, R::Same, true);
  bce_logits.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    return (log(1 + exp(x[0])) - x[0] * x[1]).mean();
  };
  rows.push_back(bce_logits);
  // cross_entropy and nll_loss over 5 classes: one-hot targets pick each row's term.
  const std::vector<std::vector<Shape>> classes = {{{4, 5}, {4}}, {{5}, {}}, {{2, 5, 3}, {2, 3}}};
  OpRow ce = other(
      "cross_entropy", "",
      [](const std::vector<Tensor>& x, auto&) { return F::cross_entropy(x[0], x[1]); },
      {value({.lo = -3, .hi = 3}), index(5)}, classes, kFloats, R::Same, true);
  ce.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    Tensor logits = classes_last(x[0]);
    return -(log_softmax(logits, -1) * one_hot(x[1], 5).to(kFloat64)).sum({-1}).mean();
  };
  rows.push_back(ce);
  OpRow nll = other(
      "nll_loss", "", [](const std::vector<Tensor>& x, auto&) { return F::nll_loss(x[0], x[1]); },
      {value({.lo = -3, .hi = 0}), index(5)}, classes, kFloats, R::Same, true);
  nll.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    Tensor lp = classes_last(x[0]);
    return -(lp * one_hot(x[1], 5).to(kFloat64)).sum({-1}).mean();
  };
  rows.push_back(nll);
  OpRow ln = other(
      "layer_norm", "",
      [](const std::vector<Tensor>& x, auto&) { return F::layer_norm(x[0], {4}, x[1], x[2]); },
      {value(), value(), value()}, {{{2, 3, 4}, {4}, {4}}, {{4}, {4}, {4}}}, kFloats, R::Same,
      true);
  ln.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    Tensor m = x[0].mean({-1}, true), v = x[0].var({-1}, false, true);
    return (x[0] - m) / sqrt(v + 1e-5) * x[1] + x[2];
  };
  rows.push_back(ln);
  // batch_norm with running statistics (evaluation mode).
  OpRow bn = other(
      "batch_norm", "",
      [](const std::vector<Tensor>& x, auto&) {
        return F::batch_norm(x[0], x[1], x[2], x[3], x[4], false);
      },
      {value(), constant(), constant({.lo = 0.5, .hi = 2}), value(), value()},
      {{{4, 3}, {3}, {3}, {3}, {3}}, {{2, 3, 2, 2}, {3}, {3}, {3}, {3}}}, kFloats, R::Same, true);
  bn.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    Shape s(x[0].dim(), 1);
    s[1] = x[0].size(1);
    return (x[0] - x[1].reshape(s)) / sqrt(x[2].reshape(s) + 1e-5) * x[3].reshape(s) +
           x[4].reshape(s);
  };
  rows.push_back(bn);
  OpRow emb = other(
      "embedding", "", [](const std::vector<Tensor>& x, auto&) { return F::embedding(x[0], x[1]); },
      {index(6), value()}, {{{2, 3}, {6, 4}}, {{5}, {6, 4}}}, kFloats, R::Same, true);
  emb.composite_ref = [](const std::vector<Tensor>& x, auto&) {
    Tensor picked = one_hot(x[0], 6).to(kFloat64);
    return matmul_by_broadcast(picked, x[1]);
  };
  rows.push_back(emb);
  return rows;
}

std::vector<OpRow> indexing_rows() {
  using R = ResultDtype;
  std::vector<OpRow> rows;
  rows.push_back(other("cat", "",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return cat({x[0], x[1]}, dim_arg(a));
                       },
                       {value(), value()}, {{{2, 3}, {1, 3}}, {{0, 3}, {2, 3}}}, kNumbers, R::Same,
                       true, {.numbers = {0}}));
  rows.push_back(other("stack", "",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return stack({x[0], x[1]}, dim_arg(a));
                       },
                       {value(), value()}, {{{2, 3}, {2, 3}}, {{}, {}}}, kNumbers, R::Same, true,
                       {.numbers = {-1}}));
  rows.push_back(other("index_select", "",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return index_select(x[0], dim_arg(a), x[1]);
                       },
                       {value(), index(4)}, {{{4, 3}, {5}}, {{4}, {2}}}, kNumbers, R::Same, true,
                       {.numbers = {0}}));
  rows.push_back(other(
      "gather", "",
      [](const std::vector<Tensor>& x, const OpArgs& a) { return gather(x[0], dim_arg(a), x[1]); },
      {value(), index(4)}, {{{3, 4}, {3, 2}}, {{2, 4}, {2, 6}}}, kNumbers, R::Same, true,
      {.numbers = {1}}));
  rows.push_back(other("scatter_add", "",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return scatter_add(x[0], dim_arg(a), x[1], x[2]);
                       },
                       {value(), index(3), value()},
                       {{{3, 4}, {2, 4}, {2, 4}}, {{3, 2}, {5, 2}, {5, 2}}}, kNumbers, R::Same,
                       true, {.numbers = {0}}));
  return rows;
}

// Stable across runs and platforms (std::hash is not specified).
uint64_t seed_of(const std::string& s, size_t sample, size_t input) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h ^ (sample * 0x9E3779B97F4A7C15ULL) ^ (input * 0xC2B2AE3D27D4EB4FULL);
}

bool integral_result(DType d) {
  return is_integral(d, true);
}

// v as the integer dtype d stores it (fixed-width wraparound; bool is v != 0).
double wrap_to(double v, DType d) {
  if (!integral_result(d) || !std::isfinite(v)) return v;
  const auto i = static_cast<int64_t>(std::trunc(v));
  switch (d) {
    case kBool:
      return v != 0;
    case kUInt8:
      return static_cast<double>(static_cast<uint8_t>(i));
    case kInt32:
      return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(i)));
    default:
      return static_cast<double>(i);
  }
}

std::vector<double> values_of(const Tensor& t) {
  return t.cpu().to(kFloat64).contiguous().to_vector<double>();
}

// The reference of a reduction or slice-map row on a float64 CPU tensor.
Tensor slice_reference(const OpRow& row, const Tensor& x) {
  const bool reduce = static_cast<bool>(row.reduce_ref);
  if (!row.along_dim) {
    std::vector<double> v = values_of(x);
    if (reduce) return scalar_tensor(row.reduce_ref(v, row.args), {.dtype = kFloat64});
    std::vector<double> m = row.slice_ref(v, row.args);
    const auto count = static_cast<int64_t>(m.size());
    return from_vector<double>(m, m.size() == v.size() ? x.sizes() : Shape{count});
  }
  int64_t d = dim_arg(row.args);
  if (d < 0) d += x.dim();
  Shape perm, inverse(x.dim()), reduced;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d) perm.push_back(i);
    if (i != d || keepdim_arg(row.args)) reduced.push_back(i == d ? 1 : x.size(i));
  }
  perm.push_back(d);
  for (int64_t i = 0; i < x.dim(); ++i) inverse[perm[i]] = i;
  Tensor moved = x.permute(perm).contiguous();
  std::vector<double> v = values_of(moved), out;
  const int64_t len = x.size(d), slices = len == 0 ? 0 : x.numel() / len;
  for (int64_t s = 0; s < slices; ++s) {
    std::span<const double> slice(v.data() + s * len, len);
    if (reduce) {
      out.push_back(row.reduce_ref(slice, row.args));
    } else {
      std::vector<double> m = row.slice_ref(slice, row.args);
      out.insert(out.end(), m.begin(), m.end());
    }
  }
  if (reduce) return from_vector<double>(out, reduced);
  // A map may give another count per slice (topk's k): the same count for every slice.
  Shape mapped = moved.sizes();
  if (slices > 0) mapped.back() = static_cast<int64_t>(out.size()) / slices;
  return from_vector<double>(out, mapped).permute(inverse).contiguous();
}

// The element-wise reference: the inputs broadcast, the scalar formula per element.
Tensor elementwise_reference(const OpRow& row, const std::vector<Tensor>& x) {
  Shape shape = x[0].sizes();
  for (const Tensor& t : x) shape = broadcast_shapes(shape, t.sizes());
  std::vector<std::vector<double>> v;
  for (const Tensor& t : x) v.push_back(values_of(t.expand(shape)));
  std::vector<double> out(v[0].size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = row.unary_ref ? row.unary_ref(v[0][i], row.args)
                           : row.binary_ref(v[0][i], v[1][i], row.args);
  return from_vector<double>(out, shape);
}

}  // namespace

Tolerance tolerance(DType dtype) {
  // Keyed by dtype name, PyTorch's defaults (torch.testing.assert_close). bfloat16 and float16
  // are not ember dtypes yet: their entries apply once dtype_name() gives those names.
  struct Entry {
    const char* dtype;
    Tolerance tolerance;
  };
  static constexpr Entry kEntries[] = {
      {"float32", {1.3e-6, 1e-5}},
      {"float64", {1e-7, 1e-7}},
      {"bfloat16", {1.6e-2, 1e-5}},
      {"float16", {1e-3, 1e-5}},
  };
  for (const Entry& e : kEntries)
    if (std::string_view(e.dtype) == dtype_name(dtype)) return e.tolerance;
  return {};  // integers and bool: exact
}

const std::vector<OpRow>& rows() {
  static const std::vector<OpRow> all = [] {
    std::vector<OpRow> r;
    for (auto part : {elementwise_rows, math_rows, reduction_rows, linear_algebra_rows, nn_rows,
                      indexing_rows, shape_and_linalg_rows, order_rows, layer_rows})
      for (OpRow& row : part()) r.push_back(std::move(row));
    return r;
  }();
  return all;
}

std::vector<std::string> unary_def_names() {
  return {
#define EMBER_UNARY(Name, name, ...) #name,
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
  };
}

std::vector<std::string> binary_def_names() {
  return {
#define EMBER_BINARY(Name, name, ...) #name,
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
  };
}

DType result_dtype(const OpRow& row, DType dtype) {
  switch (row.result) {
    case ResultDtype::Same:
      return dtype;
    case ResultDtype::FloatForIntegers:
      return is_floating_point(dtype) ? dtype : default_dtype();
    case ResultDtype::Bool:
      return kBool;
    case ResultDtype::Int64ForIntegers:
      return is_floating_point(dtype) ? dtype : kInt64;
    case ResultDtype::Int64:
      return kInt64;
  }
  return dtype;
}

std::vector<Tensor> make_inputs(const OpRow& row, size_t sample, DType dtype) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < row.arity(); ++i) {
    const InputSpec& spec = row.inputs[i];
    const Shape& shape = row.samples.at(sample).at(i);
    std::mt19937_64 rng(seed_of(row.id(), sample, i));
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<double> v(static_cast<size_t>(n));
    if (spec.kind == InputKind::Index) {
      std::uniform_int_distribution<int64_t> pick(0, spec.bound - 1);
      std::vector<int64_t> idx(v.size());
      for (auto& x : idx) x = pick(rng);
      out.push_back(from_vector<int64_t>(idx, shape));
      continue;
    }
    if (spec.kind == InputKind::Mask || dtype == kBool) {
      std::bernoulli_distribution coin(0.5);
      for (auto& x : v) x = coin(rng);
      out.push_back(from_vector<double>(v, shape).to(kBool));
      continue;
    }
    const Domain& d = spec.domain;
    if (is_floating_point(dtype)) {
      std::uniform_real_distribution<double> u(d.lo, d.hi);
      for (auto& x : v) {
        x = u(rng);
        if (std::fabs(x) < d.gap) x += x < 0 ? -d.gap : d.gap;
        if (d.integers) x = std::round(x);
      }
    } else {
      int64_t lo = static_cast<int64_t>(std::ceil(d.lo)),
              hi = static_cast<int64_t>(std::floor(d.hi));
      if (dtype == kUInt8) lo = std::max<int64_t>(lo, 0);
      std::uniform_int_distribution<int64_t> u(lo, hi);
      for (auto& x : v) {
        x = static_cast<double>(u(rng));
        if (d.gap > 0 && x == 0) x = hi != 0 ? static_cast<double>(hi) : static_cast<double>(lo);
      }
    }
    out.push_back(from_vector<double>(v, shape).to(dtype));
  }
  return out;
}

std::vector<Tensor> non_contiguous(const std::vector<Tensor>& inputs, bool transposed) {
  std::vector<Tensor> out;
  for (const Tensor& t : inputs) {
    if (t.numel() < 2) {
      out.push_back(t);
    } else if (transposed && t.dim() >= 2) {
      Shape reversed;
      for (int64_t i = t.dim() - 1; i >= 0; --i) reversed.push_back(i);
      out.push_back(t.permute(reversed).contiguous().permute(reversed));
    } else {
      Shape doubled = t.sizes();
      doubled.push_back(2);
      out.push_back(t.unsqueeze(t.dim()).expand(doubled).contiguous().select(-1, 0));
    }
  }
  return out;
}

std::vector<Tensor> to_device(const OpRow& row, const std::vector<Tensor>& inputs, Device device,
                              bool requires_grad) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor t = inputs[i].to(device, false, /*copy=*/true);
    if (requires_grad && row.inputs[i].kind == InputKind::Value && t.dtype() == kFloat64)
      t.requires_grad_();
    out.push_back(t);
  }
  return out;
}

Tensor reference(const OpRow& row, const std::vector<Tensor>& inputs, DType result) {
  std::vector<Tensor> x;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputKind k = row.inputs[i].kind;
    const bool values = k == InputKind::Value || k == InputKind::Constant;
    x.push_back(values ? inputs[i].cpu().to(kFloat64) : inputs[i].cpu());
  }
  NoGradGuard no_grad;
  Tensor ref;
  if (row.unary_ref || row.binary_ref)
    ref = elementwise_reference(row, x);
  else if (row.reduce_ref || row.slice_ref)
    ref = slice_reference(row, x[0]);
  else if (row.composite_ref)
    ref = row.composite_ref(x, row.args);
  else
    ref = row.call(x, row.args);
  if (!integral_result(result)) return ref.to(kFloat64);
  std::vector<double> v = values_of(ref);
  for (double& e : v) e = wrap_to(e, result);
  return from_vector<double>(v, ref.sizes());
}

std::optional<std::string> mismatch(const Tensor& actual, const Tensor& expected, DType dtype) {
  return mismatch(actual, expected, tolerance(dtype));
}

std::optional<std::string> mismatch(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  if (actual.sizes() != expected.sizes())
    return "shape " + shape_str(actual.sizes()) + " != expected " + shape_str(expected.sizes());
  std::vector<double> a = values_of(actual), e = values_of(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    const bool both_nan = std::isnan(a[i]) && std::isnan(e[i]);
    const bool same_inf = std::isinf(e[i]) && a[i] == e[i];
    if (both_nan || same_inf || std::fabs(a[i] - e[i]) <= tol.atol + tol.rtol * std::fabs(e[i]))
      continue;
    std::ostringstream msg;
    msg.precision(10);
    msg << "element " << i << ": " << a[i] << " vs expected " << e[i] << " (rtol " << tol.rtol
        << ", atol " << tol.atol << ")";
    return msg.str();
  }
  return std::nullopt;
}

namespace {
const DeviceRule* rule_for(const OpRow& row, DeviceType device) {
  for (const DeviceRule& r : row.device_rules)
    if (r.device == device) return &r;
  return nullptr;
}
}  // namespace

std::vector<DType> dtypes_on(const OpRow& row, DeviceType device) {
  const DeviceRule* r = rule_for(row, device);
  return r && r->dtypes ? *r->dtypes : row.dtypes;
}

Decision decide(const OpRow& row, DType dtype, DeviceType device) {
  if (const DeviceRule* r = rule_for(row, device))
    for (const DeviceException& e : r->exceptions)
      if (!e.dtype || *e.dtype == dtype)
        return {e.expected_failure ? Verdict::ExpectFailure : Verdict::Skip, e.reason};
  return {};
}

Tolerance tolerance(const OpRow& row, DType dtype, DeviceType device) {
  if (const DeviceRule* r = rule_for(row, device))
    for (const DeviceTolerance& t : r->tolerances)
      if (t.dtype == dtype) return t.tolerance;
  return tolerance(dtype);
}

std::vector<std::string> run_values(const OpRow& row, DType dtype, const Device& device,
                                    const RunOptions& options, int* layouts) {
  std::vector<std::string> failures;
  const DType want = result_dtype(row, dtype);
  const Tolerance tol = tolerance(row, want, device.type());
  // A row whose reference is ember itself in float64 has nothing to compare its float64 values
  // with; its other checks still run.
  const bool against_reference =
      options.against_reference && !(row.self_reference() && dtype == kFloat64);
  OpRow with_extra = row;
  if (options.only_extra_samples) with_extra.samples.clear();
  for (const auto& sample : options.extra_samples) with_extra.samples.push_back(sample);
  int checked_layouts = 0;
  for (size_t s = 0; s < with_extra.samples.size(); ++s) {
    const std::string where =
        "sample " + std::to_string(s) + " (" + shapes_str(with_extra.samples[s]) + "): ";
    auto expect = [&](std::optional<std::string> m, const char* what) {
      if (m) failures.push_back(where + what + ": " + *m);
    };
    try {
      const std::vector<Tensor> cpu = make_inputs(with_extra, s, dtype);
      const std::vector<Tensor> on_device = to_device(with_extra, cpu, device);
      const Tensor got = row.call(on_device, row.args);
      if (got.dtype() != want)
        failures.push_back(where + "dtype " + dtype_name(got.dtype()) + ", expected " +
                           dtype_name(want));
      if (got.device() != device)
        failures.push_back(where + "on " + got.device().str() + ", expected " + device.str());
      if (against_reference)
        expect(mismatch(got, reference(with_extra, cpu, want), tol), "vs the reference");
      if (!device.is_cpu()) expect(mismatch(got, row.call(cpu, row.args), tol), "vs the CPU");
      for (bool transposed : {true, false}) {
        const std::vector<Tensor> strided = non_contiguous(on_device, transposed);
        if (std::none_of(strided.begin(), strided.end(),
                         [](const Tensor& t) { return !t.is_contiguous(); }))
          continue;
        ++checked_layouts;
        expect(mismatch(row.call(strided, row.args), got, tol),
               transposed ? "transposed inputs" : "element stride 2 inputs");
      }
    } catch (const std::exception& e) {
      failures.push_back(where + "threw: " + e.what());
    }
  }
  if (layouts) *layouts = checked_layouts;
  return failures;
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& sh : shapes) s += (s.empty() ? "" : ", ") + shape_str(sh);
  return s;
}

}  // namespace ember::op_table
