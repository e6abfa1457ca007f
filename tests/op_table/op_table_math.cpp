// tests/op_table/op_table_math.cpp: the op table's rows of the math ops -- trigonometric, error
// and exponential functions, activations, rounding, classification, integer division and
// remainders, bitwise ops and shifts, and the ternary ops (lerp, addcmul, addcdiv, clamp with
// tensor bounds). References are the C library's functions in double precision, or formulas.
#include <cmath>
#include <cstdint>

#include "op_table/row_builders.h"

namespace ember::op_table {

namespace {

using R = ResultDtype;

const std::vector<DType> kIntegers = {kUInt8, kInt32, kInt64};
const std::vector<DType> kIntegersAndBool = {kBool, kUInt8, kInt32, kInt64};

// Three operands: alike, a 0-dim self, broadcast against each other, and empty.
const std::vector<std::vector<Shape>> kTernarySamples = {{{}, {}, {}},
                                                         {{0, 3}, {0, 3}, {0, 3}},
                                                         {{3, 5}, {3, 5}, {3, 5}},
                                                         {{33, 65}, {33, 65}, {33, 65}},
                                                         {{3, 1}, {1, 4}, {3, 4}},
                                                         {{2, 3}, {}, {3}}};

double sigmoid_of(double x) {
  return 1 / (1 + std::exp(-x));
}
double softplus_of(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
}
double relu6_of(double x) {
  return std::min(std::max(x, 0.0), 6.0);
}
// The whole-number parts as int64 (bitwise references): the values are small integers.
int64_t as_int(double x) {
  return static_cast<int64_t>(x);
}
// Python's floor division and remainder.
double floor_div_of(double a, double b) {
  return std::floor(a / b);
}
double remainder_of(double a, double b) {
  double r = std::fmod(a, b);
  return r != 0 && ((b < 0) != (r < 0)) ? r + b : r;
}

// A unary row of a Float-kind function: every dtype, integers and bool computed as float32.
OpRow float_fn(std::string name, Tensor (*f)(const Tensor&), double (*ref)(double), Domain d = {}) {
  return unary(
      std::move(name), unary_call(f), [ref](double x, auto&) { return ref(x); }, kAll,
      R::FloatForIntegers, true, d);
}
// An activation: numbers (integers as float32), differentiable.
OpRow activation(std::string name, Call call, UnaryRef ref, Domain d = {}, OpArgs args = {}) {
  return with_variant(unary(std::move(name), std::move(call), std::move(ref), kNumbers,
                            R::FloatForIntegers, true, d),
                      "", std::move(args));
}

std::vector<OpRow> function_rows() {
  const Domain unit{.lo = -0.9, .hi = 0.9};
  const Domain positive{.lo = 0.1, .hi = 5};
  std::vector<OpRow> rows;
  rows.push_back(float_fn("sin", &sin, [](double x) { return std::sin(x); }));
  rows.push_back(float_fn("cos", &cos, [](double x) { return std::cos(x); }));
  rows.push_back(float_fn("tan", &tan, [](double x) { return std::tan(x); }, {-1.3, 1.3}));
  rows.push_back(float_fn(
      "asin", &asin, [](double x) { return std::asin(x); }, unit));
  rows.push_back(float_fn(
      "acos", &acos, [](double x) { return std::acos(x); }, unit));
  rows.push_back(float_fn("atan", &atan, [](double x) { return std::atan(x); }));
  rows.push_back(float_fn("sinh", &sinh, [](double x) { return std::sinh(x); }));
  rows.push_back(float_fn("cosh", &cosh, [](double x) { return std::cosh(x); }));
  rows.push_back(float_fn("erf", &erf, [](double x) { return std::erf(x); }));
  rows.push_back(float_fn("erfc", &erfc, [](double x) { return std::erfc(x); }));
  // erfinv's reference inverts erf by bisection, independent of the kernel's method.
  rows.push_back(float_fn(
      "erfinv", &erfinv,
      [](double y) {
        if (std::fabs(y) >= 1) return y == 1 ? HUGE_VAL : y == -1 ? -HUGE_VAL : std::nan("");
        double lo = -6, hi = 6;
        for (int i = 0; i < 200; ++i) {
          double mid = 0.5 * (lo + hi);
          (std::erf(mid) < y ? lo : hi) = mid;
        }
        return 0.5 * (lo + hi);
      },
      unit));
  rows.push_back(float_fn("exp2", &exp2, [](double x) { return std::exp2(x); }, {-3, 3}));
  rows.push_back(float_fn("expm1", &expm1, [](double x) { return std::expm1(x); }, {-3, 3}));
  rows.push_back(float_fn(
      "log2", &log2, [](double x) { return std::log2(x); }, positive));
  rows.push_back(float_fn(
      "log10", &log10, [](double x) { return std::log10(x); }, positive));
  rows.push_back(unary("reciprocal", unary_call(&reciprocal), [](double x, auto&) { return 1 / x; },
                       kNumbers, R::FloatForIntegers, true, {.lo = -2, .hi = 2, .gap = 0.2}));
  rows.push_back(unary(
      "square", unary_call(&square), [](double x, auto&) { return x * x; }, kNumbers, R::Same,
      true));
  return rows;
}

std::vector<OpRow> activation_rows() {
  const Domain wide{.lo = -4, .hi = 4};
  std::vector<OpRow> rows;
  rows.push_back(activation(
      "silu", unary_call(&silu), [](double x, auto&) { return x * sigmoid_of(x); }, wide));
  rows.push_back(activation(
      "mish", unary_call(&mish),
      [](double x, auto&) { return x * std::tanh(softplus_of(x, 1, 20)); }, wide));
  // softplus with beta 2 and threshold 3: both branches in [-4, 4].
  rows.push_back(activation(
      "softplus",
      [](const std::vector<Tensor>& x, const OpArgs& a) {
        return softplus(x[0], a.numbers[0], a.numbers[1]);
      },
      [](double x, const OpArgs& a) { return softplus_of(x, a.numbers[0], a.numbers[1]); },
      {.lo = -4, .hi = 4, .gap = 0.05}, {.numbers = {2, 3}}));
  rows.push_back(activation(
      "elu", [](const std::vector<Tensor>& x, const OpArgs& a) { return elu(x[0], a.numbers[0]); },
      [](double x, const OpArgs& a) { return x > 0 ? x : a.numbers[0] * std::expm1(x); },
      {.lo = -3, .hi = 3, .gap = 0.05}, {.numbers = {0.7}}));
  rows.push_back(activation("selu", unary_call(&selu),
                            [](double x, auto&) {
                              return 1.0507009873554804934 *
                                     (x > 0 ? x : 1.6732632423543772848 * std::expm1(x));
                            },
                            {.lo = -3, .hi = 3, .gap = 0.05}));
  rows.push_back(activation(
      "celu",
      [](const std::vector<Tensor>& x, const OpArgs& a) { return celu(x[0], a.numbers[0]); },
      [](double x, const OpArgs& a) {
        return x > 0 ? x : a.numbers[0] * std::expm1(x / a.numbers[0]);
      },
      {.lo = -3, .hi = 3, .gap = 0.05}, {.numbers = {1.5}}));
  // hardtanh and relu6 keep integer dtypes (clamping); their kinks stay off the samples.
  rows.push_back(with_variant(unary(
                                  "hardtanh",
                                  [](const std::vector<Tensor>& x, const OpArgs& a) {
                                    return hardtanh(x[0], a.numbers[0], a.numbers[1]);
                                  },
                                  [](double x, const OpArgs& a) {
                                    return std::min(std::max(x, a.numbers[0]), a.numbers[1]);
                                  },
                                  kNumbers, R::Same, true, {.lo = -3, .hi = 3, .gap = 0.05}),
                              "", {.numbers = {-1, 2}}));
  rows.push_back(unary("relu6", unary_call(&relu6), [](double x, auto&) { return relu6_of(x); },
                       kNumbers, R::Same, true, {.lo = -3, .hi = 9, .gap = 0.05}));
  rows.push_back(activation("hardswish", unary_call(&hardswish),
                            [](double x, auto&) { return x * relu6_of(x + 3) / 6; },
                            {.lo = -5, .hi = 5, .gap = 0.05}));
  rows.push_back(activation("hardsigmoid", unary_call(&hardsigmoid),
                            [](double x, auto&) { return relu6_of(x + 3) / 6; },
                            {.lo = -5, .hi = 5, .gap = 0.05}));
  rows.push_back(activation("logsigmoid", unary_call(&logsigmoid),
                            [](double x, auto&) { return std::log(sigmoid_of(x)); },
                            {.lo = -8, .hi = 8}));
  rows.push_back(activation(
      "softsign", unary_call(&softsign), [](double x, auto&) { return x / (1 + std::fabs(x)); },
      wide));
  return rows;
}

std::vector<OpRow> rounding_rows() {
  // Whole and half values land on ties (round's half to even) and kinks.
  const Domain halves{.lo = -4, .hi = 4};
  std::vector<OpRow> rows;
  rows.push_back(unary(
      "floor", unary_call(&floor), [](double x, auto&) { return std::floor(x); }, kNumbers, R::Same,
      true, halves));
  rows.push_back(unary(
      "ceil", unary_call(&ceil), [](double x, auto&) { return std::ceil(x); }, kNumbers, R::Same,
      true, halves));
  rows.push_back(unary(
      "trunc", unary_call(&trunc), [](double x, auto&) { return std::trunc(x); }, kNumbers, R::Same,
      true, halves));
  const Call round_call = [](const std::vector<Tensor>& x, const OpArgs& a) {
    return round(x[0], static_cast<int64_t>(a.numbers[0]));
  };
  const UnaryRef round_ref = [](double x, const OpArgs& a) {
    double d = a.numbers[0];
    if (d == 0) return std::nearbyint(x);
    double p = std::pow(10.0, std::fabs(d));
    return d > 0 ? std::nearbyint(x * p) / p : std::nearbyint(x / p) * p;
  };
  rows.push_back(
      with_variant(unary("round", round_call, round_ref, kNumbers, R::Same, true, halves), "",
                   {.numbers = {0}}));
  rows.push_back(with_variant(unary("round", round_call, round_ref, kFloats, R::Same, true, halves),
                              "decimals", {.numbers = {2}}));
  rows.push_back(with_variant(
      unary("round", round_call, round_ref, kFloats, R::Same, true, {.lo = -400, .hi = 400}),
      "tens", {.numbers = {-1}}));
  rows.push_back(unary(
      "frac", unary_call(&frac), [](double x, auto&) { return x - std::trunc(x); }, kFloats,
      R::Same, true, halves));
  // Finite samples here; NaN and infinities are in tests/reference/math_ops.txt.
  rows.push_back(unary(
      "isnan", unary_call(&isnan), [](double x, auto&) { return double(std::isnan(x)); }, kAll,
      R::Bool, false));
  rows.push_back(unary(
      "isinf", unary_call(&isinf), [](double x, auto&) { return double(std::isinf(x)); }, kAll,
      R::Bool, false));
  rows.push_back(unary(
      "isfinite", unary_call(&isfinite), [](double x, auto&) { return double(std::isfinite(x)); },
      kAll, R::Bool, false));
  rows.push_back(unary(
      "nan_to_num", [](const std::vector<Tensor>& x, const OpArgs&) { return nan_to_num(x[0]); },
      [](double x, auto&) { return x; }, kNumbers, R::Same, true));
  return rows;
}

std::vector<OpRow> binary_rows() {
  const Domain away{.lo = -2, .hi = 2, .gap = 0.5};
  const Domain ints{.lo = -60, .hi = 60, .integers = true};
  const Domain shifts{.lo = 0, .hi = 6, .integers = true};
  std::vector<OpRow> rows;
  rows.push_back(binary(
      "atan2", binary_call(&atan2), [](double a, double b, auto&) { return std::atan2(a, b); },
      kAll, R::FloatForIntegers, true, {}, away));
  rows.push_back(binary("copysign", binary_call(&copysign),
                        [](double a, double b, auto&) { return std::copysign(a, b); }, kNumbers,
                        R::FloatForIntegers, true, {.lo = -2, .hi = 2, .gap = 0.1},
                        {.lo = -2, .hi = 2, .gap = 0.1}));
  rows.push_back(binary(
      "fmod", binary_call(&fmod), [](double a, double b, auto&) { return std::fmod(a, b); },
      kNumbers, R::Same, true, {.lo = -5, .hi = 5}, away));
  rows.push_back(binary(
      "remainder", binary_call(&remainder),
      [](double a, double b, auto&) { return remainder_of(a, b); }, kNumbers, R::Same, true,
      {.lo = -5, .hi = 5}, away));
  rows.push_back(binary(
      "floor_divide", binary_call(&floor_divide),
      [](double a, double b, auto&) { return floor_div_of(a, b); }, kNumbers, R::Same, true,
      {.lo = -5, .hi = 5}, away));
  rows.push_back(binary(
      "bitwise_and", binary_call(&bitwise_and),
      [](double a, double b, auto&) { return double(as_int(a) & as_int(b)); }, kIntegersAndBool,
      R::Same, false, ints, ints));
  rows.push_back(binary(
      "bitwise_or", binary_call(&bitwise_or),
      [](double a, double b, auto&) { return double(as_int(a) | as_int(b)); }, kIntegersAndBool,
      R::Same, false, ints, ints));
  rows.push_back(binary(
      "bitwise_xor", binary_call(&bitwise_xor),
      [](double a, double b, auto&) { return double(as_int(a) ^ as_int(b)); }, kIntegersAndBool,
      R::Same, false, ints, ints));
  // Shifts by less than the width here (the results wrap as the dtype); wider shifts are in
  // tests/reference/math_ops.txt.
  rows.push_back(binary(
      "bitwise_left_shift", binary_call(&bitwise_left_shift),
      [](double a, double b, auto&) {
        return double(static_cast<int64_t>(static_cast<uint64_t>(as_int(a)) << as_int(b)));
      },
      kIntegers, R::Same, false, ints, shifts));
  rows.push_back(binary(
      "bitwise_right_shift", binary_call(&bitwise_right_shift),
      [](double a, double b, auto&) { return double(as_int(a) >> as_int(b)); }, kIntegers, R::Same,
      false, ints, shifts));
  rows.push_back(unary(
      "bitwise_not", unary_call(&bitwise_not), [](double x, auto&) { return double(~as_int(x)); },
      kIntegers, R::Same, false, ints));
  rows.push_back(
      with_variant(unary(
                       "bitwise_not", unary_call(&bitwise_not),
                       [](double x, auto&) { return double(x == 0); }, {kBool}, R::Same, false),
                   "bool", {}));
  return rows;
}

// A ternary row with a composite reference of float64 ember ops.
OpRow ternary(std::string name, std::string variant, Call call, Call ref, std::vector<DType> dtypes,
              std::vector<InputSpec> inputs) {
  OpRow r = other(std::move(name), std::move(variant), std::move(call), std::move(inputs),
                  kTernarySamples, std::move(dtypes), R::Same, true);
  r.elementwise = true;
  r.composite_ref = std::move(ref);
  return r;
}

std::vector<OpRow> ternary_rows() {
  std::vector<OpRow> rows;
  rows.push_back(ternary(
      "lerp", "", [](const std::vector<Tensor>& x, auto&) { return lerp(x[0], x[1], x[2]); },
      [](const std::vector<Tensor>& x, auto&) { return x[0] + x[2] * (x[1] - x[0]); }, kFloats,
      {value(), value(), value({.lo = -0.5, .hi = 1.5})}));
  OpRow lerp_scalar = binary(
      "lerp",
      [](const std::vector<Tensor>& x, const OpArgs& a) { return lerp(x[0], x[1], a.numbers[0]); },
      [](double s, double e, const OpArgs& a) { return s + a.numbers[0] * (e - s); }, kFloats,
      R::Same, true);
  rows.push_back(with_variant(lerp_scalar, "scalar", {.numbers = {0.3}}));
  rows.push_back(with_variant(lerp_scalar, "scalar_high", {.numbers = {0.8}}));
  rows.push_back(with_variant(ternary(
                                  "addcmul", "",
                                  [](const std::vector<Tensor>& x, const OpArgs& a) {
                                    return addcmul(x[0], x[1], x[2], a.numbers[0]);
                                  },
                                  [](const std::vector<Tensor>& x, const OpArgs& a) {
                                    return x[0] + x[1] * x[2] * a.numbers[0];
                                  },
                                  kFloats, {value(), value(), value()}),
                              "", {.numbers = {0.5}}));
  rows.push_back(
      with_variant(ternary(
                       "addcdiv", "",
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return addcdiv(x[0], x[1], x[2], a.numbers[0]);
                       },
                       [](const std::vector<Tensor>& x, const OpArgs& a) {
                         return x[0] + x[1] / x[2] * a.numbers[0];
                       },
                       kFloats, {value(), value(), value({.lo = -2, .hi = 2, .gap = 0.5})}),
                   "", {.numbers = {-1.5}}));
  // clamp(x, min, max) with tensor bounds; min > max in some elements gives max, as PyTorch.
  rows.push_back(ternary(
      "clamp", "tensor_bounds",
      [](const std::vector<Tensor>& x, auto&) { return clamp(x[0], x[1], x[2]); },
      [](const std::vector<Tensor>& x, auto&) { return minimum(maximum(x[0], x[1]), x[2]); },
      kNumbers,
      {value(), value({.lo = -2, .hi = 0, .gap = 0.1}), value({.lo = 0, .hi = 2, .gap = 0.1})}));
  return rows;
}

}  // namespace

std::vector<OpRow> math_rows() {
  std::vector<OpRow> rows;
  for (auto part : {function_rows, activation_rows, rounding_rows, binary_rows, ternary_rows})
    for (OpRow& row : part()) rows.push_back(std::move(row));
  return rows;
}

}  // namespace ember::op_table
