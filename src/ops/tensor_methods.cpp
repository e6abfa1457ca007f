// core/tensor_methods.cpp: Tensor's op methods, each forwarding to the free function in ops.h.
#include "ember/ops.h"

namespace ember {

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  return ember::add(*this, o, alpha);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return ember::sub(*this, o, alpha);
}
Tensor Tensor::mul(const Tensor& o) const {
  return ember::mul(*this, o);
}
Tensor Tensor::div(const Tensor& o) const {
  return ember::div(*this, o);
}
Tensor Tensor::add(const Scalar& o) const {
  return *this + o;
}
Tensor Tensor::sub(const Scalar& o) const {
  return *this - o;
}
Tensor Tensor::mul(const Scalar& o) const {
  return *this * o;
}
Tensor Tensor::div(const Scalar& o) const {
  return *this / o;
}
Tensor Tensor::pow(const Tensor& e) const {
  return ember::pow(*this, e);
}
Tensor Tensor::pow(const Scalar& e) const {
  return ember::pow(*this, e);
}
Tensor Tensor::maximum(const Tensor& o) const {
  return ember::maximum(*this, o);
}
Tensor Tensor::minimum(const Tensor& o) const {
  return ember::minimum(*this, o);
}
Tensor Tensor::neg() const {
  return ember::neg(*this);
}
Tensor Tensor::abs() const {
  return ember::abs(*this);
}
Tensor Tensor::exp() const {
  return ember::exp(*this);
}
Tensor Tensor::log() const {
  return ember::log(*this);
}
Tensor Tensor::sqrt() const {
  return ember::sqrt(*this);
}
Tensor Tensor::rsqrt() const {
  return ember::rsqrt(*this);
}
Tensor Tensor::relu() const {
  return ember::relu(*this);
}
Tensor Tensor::sigmoid() const {
  return ember::sigmoid(*this);
}
Tensor Tensor::tanh() const {
  return ember::tanh(*this);
}
Tensor Tensor::gelu(const std::string& approximate) const {
  return ember::gelu(*this, approximate);
}
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return ember::clamp(*this, lo, hi);
}
Tensor Tensor::eq(const Tensor& o) const {
  return ember::eq(*this, o);
}
Tensor Tensor::ne(const Tensor& o) const {
  return ember::ne(*this, o);
}
Tensor Tensor::lt(const Tensor& o) const {
  return ember::lt(*this, o);
}
Tensor Tensor::le(const Tensor& o) const {
  return ember::le(*this, o);
}
Tensor Tensor::gt(const Tensor& o) const {
  return ember::gt(*this, o);
}
Tensor Tensor::ge(const Tensor& o) const {
  return ember::ge(*this, o);
}
Tensor Tensor::logical_and(const Tensor& o) const {
  return ember::logical_and(*this, o);
}
Tensor Tensor::logical_or(const Tensor& o) const {
  return ember::logical_or(*this, o);
}
Tensor Tensor::logical_not() const {
  return ember::logical_not(*this);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return ember::masked_fill(*this, mask, value);
}

Tensor Tensor::sum(std::optional<DType> dtype) const {
  return ember::sum(*this, dtype);
}
Tensor Tensor::sum(const Shape& dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean() const {
  return ember::mean(*this);
}
Tensor Tensor::mean(const Shape& dims, bool keepdim) const {
  return ember::mean(*this, dims, keepdim);
}
Tensor Tensor::prod() const {
  return ember::prod(*this);
}
Tensor Tensor::prod(int64_t dim, bool keepdim) const {
  return ember::prod(*this, dim, keepdim);
}
Tensor Tensor::max() const {
  return ember::max(*this);
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ember::max(*this, dim, keepdim);
}
Tensor Tensor::min() const {
  return ember::min(*this);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ember::min(*this, dim, keepdim);
}
Tensor Tensor::amax(const Shape& dims, bool keepdim) const {
  return ember::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(const Shape& dims, bool keepdim) const {
  return ember::amin(*this, dims, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmin(*this, dim, keepdim);
}
Tensor Tensor::var(const Shape& dims, bool unbiased, bool keepdim) const {
  return ember::var(*this, dims, unbiased, keepdim);
}
Tensor Tensor::std(const Shape& dims, bool unbiased, bool keepdim) const {
  return ember::std(*this, dims, unbiased, keepdim);
}
Tensor Tensor::softmax(int64_t dim) const {
  return ember::softmax(*this, dim);
}
Tensor Tensor::log_softmax(int64_t dim) const {
  return ember::log_softmax(*this, dim);
}
Tensor Tensor::logsumexp(const Shape& dims, bool keepdim) const {
  return ember::logsumexp(*this, dims, keepdim);
}

Tensor Tensor::matmul(const Tensor& o) const {
  return ember::matmul(*this, o);
}
Tensor Tensor::mm(const Tensor& o) const {
  return ember::mm(*this, o);
}
Tensor Tensor::bmm(const Tensor& o) const {
  return ember::bmm(*this, o);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return ember::gather(*this, dim, index);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}

}  // namespace ember
