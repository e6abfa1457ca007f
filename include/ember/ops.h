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
// where(condition): the coordinates of the true elements, one int64 tensor per dim
// (nonzero(condition) split by column).
std::vector<Tensor> where(const Tensor& condition);
// index_put (ops/index_update.cpp): self[indices] = values (or += with accumulate), indices
// int64 (broadcast together, one per leading dim) or bool masks, as PyTorch's advanced indexing.
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
// searchsorted (ops/search.cpp): for each value, the first position in its sorted row (a 1-D
// sorted_sequence serves all) whose element is >= the value, or > with right (or side
// "right"); NaN goes past the end. sorter: the int64 order that sorts sorted_sequence.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32 = false,
                    bool right = false, const std::string& side = "",
                    const Tensor& sorter = Tensor());
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& input, bool out_int32 = false,
                    bool right = false, const std::string& side = "",
                    const Tensor& sorter = Tensor());
// bucketize: the bucket of each element among 1-D ascending boundaries (searchsorted's left
// side: boundaries[i - 1] < x <= boundaries[i]; right: boundaries[i - 1] <= x < boundaries[i]).
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);
Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);

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
// einsum (ops/einsum.cpp): the Einstein summation of equation over operands, as torch.einsum:
// one subscript letter per dim (a-z, A-Z; `...` for broadcast leading dims), an explicit output
// after `->` or the letters that appear once, in alphabetical order. Operands promote to one
// dtype; two operands contract as one batched matmul, more pairwise from the left.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
// indices: int64 class indices -> (..., num_classes) int64; num_classes -1 means max + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

}  // namespace ember
