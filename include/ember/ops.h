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
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Scalar& b);

// --- linear algebra
// torch.set_float32_matmul_precision: "highest" (the default) computes float32 matrix products
// in full float32; "high" and "medium" let CUDA use TensorFloat-32 tensor cores (inputs rounded
// to a 10-bit mantissa, float32 accumulation), for matmul, bmm, linear and convolution alike.
// CPU products are unaffected. Any other value throws an Error.
void set_float32_matmul_precision(const std::string& precision);
std::string get_float32_matmul_precision();

// --- joining and indexing
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// indices: int64 class indices -> (..., num_classes) int64; num_classes -1 means max + 1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// --- threads used by CPU kernels
void set_num_threads(int n);
int get_num_threads();
// The x86 instruction-set level the CPU kernels run at (torch.backends.cpu.get_cpu_capability):
// "avx512", "avx2" (AVX2 + FMA) or "baseline" -- the best this CPU supports, capped by the
// environment variable EMBER_CPU_ISA=avx512|avx2|baseline, read once. Any other value of
// EMBER_CPU_ISA makes the first CPU op throw an Error that names it.
std::string get_cpu_capability();
// torch.set_flush_denormal: treat subnormal floats as zero on the CPU (much faster where values
// decay towards zero, e.g. Adam's moments of unused weights). Returns false where unsupported.
bool set_flush_denormal(bool on);

}  // namespace ember
