// ops/op_helpers.h: what op definitions share -- scalar wrapping, type promotion, broadcast views.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "core/backend.h"
#include "core/make_tensor.h"
#include "core/shape.h"
#include "ember/autocast.h"
#include "ember/ops.h"

namespace ember {

// A 0-dim tensor holding s, marked as a wrapped number so it promotes like a Python scalar.
Tensor wrap_scalar(const Scalar& s, Device device);
// s converted to `dtype`, as a wrapped-number 0-dim tensor on `device`.
Tensor wrap_scalar_as(const Scalar& s, DType dtype, Device device);
// PyTorch's result_type over several tensors (dims > 0-dim tensors > wrapped numbers).
DType result_type_of(std::initializer_list<const Tensor*> tensors);
// Ops whose backend kernels exist for float32 and float64 only (matmul, softmax, convolution,
// pooling, random fills, optimizer steps) compute float16 and bfloat16 in float32: the op runs on
// to_opmath(x) and converts its result back with .to(x.dtype()), both recorded for autograd.
inline Tensor to_opmath(const Tensor& t) {
  return t.defined() && is_reduced_float(t.dtype()) ? t.to(opmath_dtype(t.dtype())) : t;
}
// Autocast (ember/autocast.h): a lower-precision op computes t in the autocast dtype when autocast
// is on for t's device (floating t but float64); a float32 op computes 16-bit t in float32.
inline Tensor autocast_lower(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == kFloat64) return t;
  std::optional<DType> low = autocast_detail::active_dtype(t.device().type());
  return low && t.dtype() != *low ? t.to(*low) : t;
}
inline Tensor autocast_float32(const Tensor& t) {
  if (!t.defined() || !is_reduced_float(t.dtype())) return t;
  return autocast_detail::active_dtype(t.device().type()) ? t.to(kFloat32) : t;
}
inline bool autocast_active(const Tensor& t) {
  return t.defined() && autocast_detail::active_dtype(t.device().type()).has_value();
}
// Lowers every operand of a lower-precision op; true when one of them changed (the op then runs
// again on `out`).
inline bool autocast_lower_all(std::initializer_list<const Tensor*> in, std::vector<Tensor>& out) {
  if (in.size() == 0 || !autocast_active(**in.begin())) return false;
  bool changed = false;
  for (const Tensor* t : in) {
    out.push_back(autocast_lower(*t));
    changed |= out.back().defined() && !out.back().is_same(*t);
  }
  return changed;
}
// `dim` wrapped for x; for a 0-dim x, 0 and -1 name the scalar itself (position 0).
inline int64_t wrap_dim_of(const char* op, const Tensor& x, int64_t dim) {
  return x.dim() == 0 ? (wrap_dim(op, dim, 0), 0) : wrap_dim(op, dim, x.dim());
}
// Records the gradient of `out`, elements of x picked at `indices` along d (sort, topk, the
// medians, mode, cummax/cummin): the output's gradient put back at the indices (summed where
// one is picked twice); `squeezed` when out and indices lack dim d (ops/sort.cpp).
void record_pick(const char* name, const Tensor& x, const Tensor& out, const Tensor& indices,
                 int64_t d, bool squeezed);
// Moves 0-dim CPU tensors onto `device` (PyTorch lets CPU scalars mix with GPU tensors).
Tensor on_device(const Tensor& t, Device device);
// The common device of op's operands, where 0-dim CPU tensors may go along with any device.
Device operand_device(const char* op, std::initializer_list<const Tensor*> tensors);

// A view of t read as `shape` (broadcast strides kept alive alongside).
struct BroadcastView {
  Shape strides;
  View view;
  BroadcastView(const Tensor& t, const Shape& shape) {
    if (t.sizes() == shape) {
      view = view_of(t);
    } else {
      strides = broadcast_strides(t, shape);
      view = View{t.impl().data(), shape, strides, t.dtype()};
    }
  }
  BroadcastView(const BroadcastView&) = delete;
};

// Throws when writing into t would write one memory location twice (an expanded view).
void check_writable(const char* op, const Tensor& t);

// The element-wise machinery behind the public functions (op tables in src/ops/*.def).
Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor unary_op(UnaryOp op, const Tensor& x, const UnaryParams& p = {},
                std::optional<DType> compute = std::nullopt);
// Autograd recording with the tables' gradients (elementwise_grad.cpp); a_used / b_used are the
// operands as computed with (converted to the common dtype and device).
void record_unary(UnaryOp op, const Tensor& x, const Tensor& out, const UnaryParams& p);
void record_binary(BinaryOp op, const Tensor& a0, const Tensor& b0, const Tensor& a_used,
                   const Tensor& b_used, const Tensor& out);

}  // namespace ember
