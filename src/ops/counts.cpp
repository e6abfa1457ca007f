// ops/counts.cpp: all, any and count_nonzero, from comparisons and sums; nansum and nanmean
// (NaN read as 0, and left out of the count); var_mean and std_mean.
#include "ops/op_helpers.h"

namespace ember {

namespace {
// PyTorch's all and any give uint8 for uint8 input, bool otherwise.
Tensor logical_result(const Tensor& x, const Tensor& b) {
  return x.dtype() == kUInt8 ? b.to(kUInt8) : b;
}
}  // namespace

Tensor count_nonzero(const Tensor& x, const Shape& dims) {
  return sum(ne(x, 0), dims);
}
Tensor any(const Tensor& x) {
  return logical_result(x, count_nonzero(x, {}) > 0);
}
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return logical_result(x, sum(ne(x, 0), {dim}, keepdim) > 0);
}
Tensor all(const Tensor& x) {
  return logical_result(x, count_nonzero(x, {}) == x.numel());
}
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  int64_t n = x.dim() == 0 ? 1 : x.size(wrap_dim("all", dim, x.dim()));
  return logical_result(x, sum(ne(x, 0), {dim}, keepdim) == n);
}

Tensor nansum(const Tensor& x, const Shape& dims, bool keepdim) {
  if (!x.is_floating_point()) return sum(x, dims, keepdim);
  return sum(where(isnan(x), 0.0, x), dims, keepdim);
}
Tensor nanmean(const Tensor& x, const Shape& dims, bool keepdim) {
  EMBER_CHECK_KIND(DType, x.is_floating_point(),
                   "[nanmean] expected a floating point tensor as input, got ", x.dtype());
  return nansum(x, dims, keepdim) / sum(logical_not(isnan(x)), dims, keepdim).to(x.dtype());
}
detail::TensorPair var_mean(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {
  return {var(x, dims, unbiased, keepdim), mean(x, dims, keepdim)};
}
detail::TensorPair std_mean(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {
  return {std(x, dims, unbiased, keepdim), mean(x, dims, keepdim)};
}

}  // namespace ember
