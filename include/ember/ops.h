// ember/ops.h: the tensor operations, as free functions with PyTorch's names and semantics.
// Element-wise ops broadcast and promote types as PyTorch does; every op taking several tensors
// requires them on one device.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/autograd.h"
#include "ember/creation.h"
#include "ember/settings.h"
#include "ember/tensor.h"

namespace ember {

// --- type promotion and broadcasting
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);
Shape broadcast_shapes(const Shape& a, const Shape& b);

// --- the ops of ember/op_variants.def, one free function per overload with `function` or
// `scalar` (their semantics are noted there), and the forms that do not fit its pattern.
#define EMBER_OP_FUNCTION(ret, name, params, args) \
  ret name(const Tensor& self EMBER_OP_AFTER_SELF params);
#define EMBER_OP_SCALAR(ret, name, params, args) ret name(const Tensor& self, const Scalar& other);
#define EMBER_OP_DEFAULT(value) = value
#include "ember/op_variants.def"

Tensor pow(const Scalar& base, const Tensor& exponent);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);

// Operators; compound assignment is the in-place op (x += y is x.add_(y)).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator&&(const Tensor& a, const Tensor& b);
Tensor operator||(const Tensor& a, const Tensor& b);
Tensor operator!(const Tensor& x);
// Bitwise ops on integer and bool tensors: bitwise_and, _or, _xor, _not and the shifts.
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& x);
Tensor operator<<(const Tensor& a, const Tensor& b);
Tensor operator>>(const Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Scalar& b);

// --- torch.linalg
namespace linalg {
// The p-norm of x over dims (all when empty): ord inf / -inf (largest / smallest |x|), 0 (the
// count of nonzeros), or any p; floating inputs only. Its gradient is 0 where the norm is 0.
Tensor vector_norm(const Tensor& x, double ord = 2, const Shape& dims = {}, bool keepdim = false);
// The matrix norm of x over two dims: "fro", or the induced "1", "-1", "inf", "-inf".
Tensor matrix_norm(const Tensor& x, const std::string& ord = "fro", const Shape& dims = {-2, -1},
                   bool keepdim = false);
}  // namespace linalg

// --- joining and indexing
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// indices: int64 class indices -> (..., num_classes) int64; num_classes -1 means max + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

}  // namespace ember
