// tests/op_table/op_table.h: one row per public op (in the spirit of PyTorch's OpInfo) -- how to
// call it, its reference, its input domain, its dtypes and their tolerances, whether it is
// differentiable and the dtype of its result -- and the helpers that make seeded inputs, compute
// references and compare results. tests/test_op_table.cpp and tools/gpu_smoke read this table;
// it depends on ember only (no GoogleTest).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::op_table {

// Fixed arguments of a row (clamp's bounds, pow's exponent, leaky_relu's slope, a dim, gelu's
// form), handed to both the call and the reference so that they cannot disagree.
struct OpArgs {
  std::vector<double> numbers = {};
  std::string text = {};
};

// The values an input takes: uniform in [lo, hi], at least `gap` away from 0 when gap > 0 (div's
// divisor, log's argument), rounded to integers when `integers` (so comparisons see ties).
// Integer dtypes round lo up and hi down.
struct Domain {
  double lo = -2, hi = 2;
  double gap = 0;
  bool integers = false;
};

// What an input is: a value of the row's dtype (differentiable when the row is), a value of the
// row's dtype that gradcheck holds fixed (a loss target), int64 indices in [0, bound), or a bool
// mask.
enum class InputKind { Value, Constant, Index, Mask };
struct InputSpec {
  InputKind kind = InputKind::Value;
  Domain domain = {};
  int64_t bound = 0;  // Index only
};

// The result's dtype given the row's dtype: the same; float32 for integer and bool inputs (exp,
// div); bool (comparisons, logical ops); int64 for integer and bool inputs (sum, prod); always
// int64 (argmax).
enum class ResultDtype { Same, FloatForIntegers, Bool, Int64ForIntegers, Int64 };

// rtol and atol for comparing results of a dtype (PyTorch's defaults); 0 for integers and bool.
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance tolerance(DType dtype);

// What a row does differently on one kind of device (PyTorch OpInfo's dtypesIfCUDA and
// DecorateInfo, ggml's supports_op and per-backend tolerance): the dtypes it takes there, when
// they are not the row's; dtypes it skips there or expects to fail on (no dtype: every dtype),
// each with its reason; and tolerances of its own for some dtypes.
struct DeviceException {
  std::optional<DType> dtype;     // none: every dtype
  bool expected_failure = false;  // false: skipped
  std::string reason;
};
struct DeviceTolerance {
  DType dtype;
  Tolerance tolerance;
};
struct DeviceRule {
  DeviceType device;
  std::optional<std::vector<DType>> dtypes = std::nullopt;
  std::vector<DeviceException> exceptions = {};
  std::vector<DeviceTolerance> tolerances = {};
};

using Call = std::function<Tensor(const std::vector<Tensor>&, const OpArgs&)>;
// References in double precision: per element (element-wise rows, after broadcasting), per slice
// along args.numbers[0] (a reduction: the slice's values -> one value; or a map: the slice's
// values -> as many), or a composite of other ember ops on float64 inputs. A row with none of
// them is compared with itself in float64 (`self_reference`).
using UnaryRef = std::function<double(double, const OpArgs&)>;
using BinaryRef = std::function<double(double, double, const OpArgs&)>;
using ReduceRef = std::function<double(std::span<const double>, const OpArgs&)>;
using SliceRef = std::function<std::vector<double>(std::span<const double>, const OpArgs&)>;

// One row. Names are PyTorch's (torch.x or torch.nn.functional.x); `variant` tells apart rows of
// one op with other fixed arguments, as OpInfo's variant_test_name.
struct OpRow {
  std::string name;
  std::string variant;
  Call call;
  OpArgs args;
  std::vector<InputSpec> inputs;            // arity = inputs.size()
  std::vector<std::vector<Shape>> samples;  // the input shapes of each sample, one per input
  std::vector<DType> dtypes;
  bool differentiable = false;
  ResultDtype result = ResultDtype::Same;
  bool elementwise = false;  // element-wise rows broadcast: unary/binary refs apply per element
  UnaryRef unary_ref;
  BinaryRef binary_ref;
  // Reductions and slice maps: over args.numbers[0] when `along_dim`, else over all elements;
  // keepdim from args.numbers[1] when present.
  ReduceRef reduce_ref;
  SliceRef slice_ref;
  bool along_dim = false;
  Call composite_ref;
  // Entries of the .def files without a public function of their own that this row's gradcheck
  // runs (relu's gradient is the relu_backward kernel).
  std::vector<std::string> also_covers;
  // Where the row differs on a kind of device (dtypes, skips, expected failures, tolerances).
  std::vector<DeviceRule> device_rules;

  size_t arity() const { return inputs.size(); }
  // "gelu_tanh": name and variant, as test names use them.
  std::string id() const { return variant.empty() ? name : name + "_" + variant; }
  bool self_reference() const {
    return !unary_ref && !binary_ref && !reduce_ref && !slice_ref && !composite_ref;
  }
};

// Every row, built once.
const std::vector<OpRow>& rows();
// The names of the element-wise ops of src/kernels/unary_ops.def and binary_ops.def.
std::vector<std::string> unary_def_names();
std::vector<std::string> binary_def_names();

// The dtype a row gives for inputs of `dtype`.
DType result_dtype(const OpRow& row, DType dtype);

// The dtypes a row runs in on a kind of device (its rule's, else the row's).
std::vector<DType> dtypes_on(const OpRow& row, DeviceType device);
// Whether a row runs on a device in a dtype: Run, Skip or ExpectFailure, with the rule's reason.
enum class Verdict { Run, Skip, ExpectFailure };
struct Decision {
  Verdict verdict = Verdict::Run;
  std::string reason;
};
Decision decide(const OpRow& row, DType dtype, DeviceType device);
// The tolerance of a row's results of `dtype` on a kind of device (its rule's, else the dtype's).
Tolerance tolerance(const OpRow& row, DType dtype, DeviceType device);

// The one runner of a row's values that tests/test_op_table.cpp and tools/gpu_smoke share: on
// each sample (and `extra_samples`), the result's dtype and device, the values against the row's
// reference (when `against_reference`; not for self-referencing rows in float64), a non-CPU
// device's values against the CPU's, and transposed and element-stride-2 inputs against
// contiguous ones, within the row's tolerance on that device. Returns every failure (empty: all
// passed) and counts the non-contiguous layouts it checked in *layouts.
struct RunOptions {
  bool against_reference = true;
  std::vector<std::vector<Shape>> extra_samples = {};
  // Only the extra samples, not the row's own (which the suite's OpTable tests already run).
  bool only_extra_samples = false;
};
std::vector<std::string> run_values(const OpRow& row, DType dtype, const Device& device,
                                    const RunOptions& options = {}, int* layouts = nullptr);

// Seeded inputs of sample `index` (the same values for a seed on every device), as CPU tensors.
std::vector<Tensor> make_inputs(const OpRow& row, size_t sample, DType dtype);
// The same values in other layouts: each input of two or more elements transposed in memory
// (`transposed`) or read with an element stride of 2 (otherwise); what is not contiguous.
std::vector<Tensor> non_contiguous(const std::vector<Tensor>& inputs, bool transposed);
// Moves inputs to a device; Value inputs of float64 require grad when `requires_grad`.
std::vector<Tensor> to_device(const OpRow& row, const std::vector<Tensor>& inputs, Device device,
                              bool requires_grad = false);

// The reference result of a row on CPU inputs, as float64 (the row's dtype rule not applied;
// integer results wrap as the dtype does).
Tensor reference(const OpRow& row, const std::vector<Tensor>& inputs, DType result);

// Compares actual with expected (any devices): same shape, values within tolerance of `dtype`
// (NaNs and infinities must match). Returns what differs, or nothing.
std::optional<std::string> mismatch(const Tensor& actual, const Tensor& expected, DType dtype);
std::optional<std::string> mismatch(const Tensor& actual, const Tensor& expected, Tolerance tol);

// "[3, 1], [1, 4]": a sample's shapes, for messages.
std::string shapes_str(const std::vector<Shape>& shapes);

}  // namespace ember::op_table
