// kernels/op_tables.h: enums and per-op facts generated from unary_ops.def and binary_ops.def.
#pragma once

#include <cstdint>

#include "ember/dtype.h"
#include "ember/error.h"

namespace ember {

enum class OpKind : uint8_t { Any, Float, Bool, Compare, Logical, Integral };

enum class UnaryOp : uint8_t {
#define EMBER_UNARY(Name, name, Fn, kind, ...) Name,
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
};

enum class BinaryOp : uint8_t {
#define EMBER_BINARY(Name, name, Fn, kind, ...) Name,
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
};

inline constexpr const char* kUnaryNames[] = {
#define EMBER_UNARY(Name, name, Fn, kind, ...) #name,
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
};
inline constexpr OpKind kUnaryKinds[] = {
#define EMBER_UNARY(Name, name, Fn, kind, ...) OpKind::kind,
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
};
inline constexpr const char* kBinaryNames[] = {
#define EMBER_BINARY(Name, name, Fn, kind, ...) #name,
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
};
inline constexpr OpKind kBinaryKinds[] = {
#define EMBER_BINARY(Name, name, Fn, kind, ...) OpKind::kind,
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
};

// grad_fn names, as PyTorch's: "ExpBackward0".
inline constexpr const char* kUnaryBackwardNames[] = {
#define EMBER_UNARY(Name, name, Fn, kind, ...) #Name "Backward0",
#include "kernels/unary_ops.def"
#undef EMBER_UNARY
};
inline constexpr const char* kBinaryBackwardNames[] = {
#define EMBER_BINARY(Name, name, Fn, kind, ...) #Name "Backward0",
#include "kernels/binary_ops.def"
#undef EMBER_BINARY
};

constexpr const char* op_name(UnaryOp op) {
  return kUnaryNames[static_cast<int>(op)];
}
constexpr OpKind op_kind(UnaryOp op) {
  return kUnaryKinds[static_cast<int>(op)];
}
constexpr const char* op_name(BinaryOp op) {
  return kBinaryNames[static_cast<int>(op)];
}
constexpr OpKind op_kind(BinaryOp op) {
  return kBinaryKinds[static_cast<int>(op)];
}
constexpr const char* backward_name(UnaryOp op) {
  return kUnaryBackwardNames[static_cast<int>(op)];
}
constexpr const char* backward_name(BinaryOp op) {
  return kBinaryBackwardNames[static_cast<int>(op)];
}

// Extra arguments of parametrized unary ops (clamp bounds, a scalar exponent, gelu's form,
// softplus's beta and threshold, nan_to_num's three replacements).
struct UnaryParams {
  double a = 0, b = 0;
  bool has_a = false, has_b = false;
  double c = 0;
};

// Instantiates body (a template lambda over the element type) for the dtypes an op of this kind
// can see: the floating dtypes for Float ops, integers and bool for Integral ones, every dtype
// otherwise. Shared by the backends' loops.
template <OpKind kind, class Body>
void dispatch_kind(DType t, const char* name, Body&& body) {
  if constexpr (kind == OpKind::Float) {
    EMBER_CHECK_KIND(DType, is_floating_point(t), "[", name, "] internal: expected a float dtype");
    visit_dtype(t, [&]<class T>() {
      if constexpr (is_float_v<T>) body.template operator()<T>();
    });
  } else if constexpr (kind == OpKind::Integral) {
    EMBER_CHECK_KIND(DType, !is_floating_point(t), "[", name,
                     "] internal: expected an integer or bool dtype");
    visit_dtype(t, [&]<class T>() {
      if constexpr (!is_float_v<T>) body.template operator()<T>();
    });
  } else {
    visit_dtype(t, body);
  }
}

// Backend kernels written for float32 and float64 only (matmul's GEMM, softmax, random reals,
// optimizer steps): the ops layer hands them float16 and bfloat16 as float32 (ops/op_helpers.h's
// to_opmath), so any other dtype here is a bug, reported rather than misread.
inline void check_float32_or_64(DType t, const char* name) {
  EMBER_CHECK_KIND(DType, t == kFloat32 || t == kFloat64, "[", name,
                   "] internal: this kernel takes float32 or float64, got ", t,
                   " (the op should compute it in float32)");
}

}  // namespace ember
