// tests/op_table/row_builders.h: the building blocks of the op table's rows (dtype lists, sample
// shapes, unary/binary/other row makers, input kinds), shared by the files that define rows.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "op_table/op_table.h"

namespace ember::op_table {

inline const std::vector<DType> kFloats = {kFloat32, kFloat64, kBFloat16, kFloat16};
inline const std::vector<DType> kNumbers = {kUInt8,   kInt32,    kInt64,  kFloat32,
                                            kFloat64, kBFloat16, kFloat16};
inline const std::vector<DType> kAll = {kBool,    kUInt8,   kInt32,    kInt64,
                                        kFloat32, kFloat64, kBFloat16, kFloat16};

// 0-dim, empty, a few small shapes and one of 2145 elements (the CPU's vectorized loops and their
// tails); binary rows add broadcasting ((3, 1) with (1, 4), a tensor with a 0-dim one, (4,)
// against (2, 3, 4)).
inline const std::vector<std::vector<Shape>> kUnarySamples = {{{}},     {{0, 3}},    {{7}},
                                                              {{3, 5}}, {{2, 3, 4}}, {{33, 65}}};
inline const std::vector<std::vector<Shape>> kBinarySamples = {
    {{}, {}},         {{0, 3}, {0, 3}}, {{7}, {7}},      {{3, 5}, {3, 5}}, {{33, 65}, {33, 65}},
    {{3, 1}, {1, 4}}, {{2, 3}, {}},     {{4}, {2, 3, 4}}};

inline Call unary_call(Tensor (*f)(const Tensor&)) {
  return [f](const std::vector<Tensor>& x, const OpArgs&) { return f(x[0]); };
}
inline Call binary_call(Tensor (*f)(const Tensor&, const Tensor&)) {
  return [f](const std::vector<Tensor>& x, const OpArgs&) { return f(x[0], x[1]); };
}

// A row: inputs, samples, dtypes; the caller sets its reference.
inline OpRow other(std::string name, std::string variant, Call call, std::vector<InputSpec> inputs,
                   std::vector<std::vector<Shape>> samples, std::vector<DType> dtypes,
                   ResultDtype result, bool differentiable, OpArgs args = {}) {
  OpRow r;
  r.name = std::move(name);
  r.variant = std::move(variant);
  r.call = std::move(call);
  r.args = std::move(args);
  r.inputs = std::move(inputs);
  r.samples = std::move(samples);
  r.dtypes = std::move(dtypes);
  r.result = result;
  r.differentiable = differentiable;
  return r;
}

inline OpRow unary(std::string name, Call call, UnaryRef ref, std::vector<DType> dtypes,
                   ResultDtype result, bool differentiable, Domain domain = {}) {
  OpRow r = other(std::move(name), "", std::move(call), {{.domain = domain}}, kUnarySamples,
                  std::move(dtypes), result, differentiable);
  r.elementwise = true;
  r.unary_ref = std::move(ref);
  return r;
}

inline OpRow binary(std::string name, Call call, BinaryRef ref, std::vector<DType> dtypes,
                    ResultDtype result, bool differentiable, Domain a = {}, Domain b = {}) {
  OpRow r = other(std::move(name), "", std::move(call), {{.domain = a}, {.domain = b}},
                  kBinarySamples, std::move(dtypes), result, differentiable);
  r.elementwise = true;
  r.binary_ref = std::move(ref);
  return r;
}

inline OpRow with_variant(OpRow r, std::string variant, OpArgs args) {
  r.variant = std::move(variant);
  r.args = std::move(args);
  return r;
}

inline InputSpec value(Domain d = {}) {
  return {.kind = InputKind::Value, .domain = d};
}
inline InputSpec constant(Domain d = {}) {
  return {.kind = InputKind::Constant, .domain = d};
}
inline InputSpec index(int64_t bound) {
  return {.kind = InputKind::Index, .bound = bound};
}
inline InputSpec mask() {
  return {.kind = InputKind::Mask};
}

inline int64_t dim_arg(const OpArgs& a) {
  return static_cast<int64_t>(a.numbers.at(0));
}
inline bool keepdim_arg(const OpArgs& a) {
  return a.numbers.size() > 1 && a.numbers[1] != 0;
}

// A loss row's reduction, from args.text: "none", "sum" or mean (""); and a reference's loss
// reduced by it.
inline nn::functional::Reduction reduction_arg(const OpArgs& a) {
  namespace F = nn::functional;
  if (a.text == "none") return F::kNone;
  return a.text == "sum" ? F::kSum : F::kMean;
}
inline Tensor reduce_like(const Tensor& loss, const OpArgs& a) {
  if (a.text == "none") return loss;
  return a.text == "sum" ? loss.sum() : loss.mean();
}

// A reduction row over all elements (`all`) or over dim args.numbers[0] with keepdim
// args.numbers[1].
inline OpRow reduction(std::string name, std::string variant, Call call, ReduceRef ref,
                       std::vector<std::vector<Shape>> samples, std::vector<DType> dtypes,
                       ResultDtype result, bool differentiable, OpArgs args = {},
                       Domain domain = {}) {
  OpRow r = other(std::move(name), std::move(variant), std::move(call), {{.domain = domain}},
                  std::move(samples), std::move(dtypes), result, differentiable, std::move(args));
  r.reduce_ref = std::move(ref);
  r.along_dim = !r.args.numbers.empty();
  return r;
}

// A row mapping each slice along args.numbers[0] to values (all dtypes, differentiable, the
// input's dtype).
inline OpRow slice_map(std::string name, std::string variant, Call call, SliceRef ref,
                       std::vector<std::vector<Shape>> samples, OpArgs args) {
  OpRow r = other(std::move(name), std::move(variant), std::move(call), {value()},
                  std::move(samples), kAll, ResultDtype::Same, true, std::move(args));
  r.slice_ref = std::move(ref);
  r.along_dim = true;
  return r;
}

// The rows of the math ops of op_table_math.cpp: trigonometric and error functions,
// activations, rounding, classification, integer division and bitwise ops, ternary ops.
std::vector<OpRow> math_rows();
// The rows of op_table_shapes.cpp: tril/triu, flip, roll, repeat, tile, counts, products on
// matmul, diagonals and norms.
std::vector<OpRow> shape_and_linalg_rows();
// The rows of op_table_order.cpp: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode,
// searchsorted, bucketize, nonzero, argwhere, masked_select, masked_scatter, bincount, histc,
// unique, unique_consecutive.
std::vector<OpRow> order_rows();
// The rows of op_table_layers.cpp: the layer functions (convolutions, poolings, interpolate, pad,
// embedding_bag, norms, distances, activations, losses, ctc_loss, the recurrent layers).
std::vector<OpRow> layer_rows();

}  // namespace ember::op_table
