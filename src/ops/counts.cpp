// ops/counts.cpp: all, any and count_nonzero, from comparisons and sums.
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

}  // namespace ember
