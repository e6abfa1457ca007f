// ops/composite.cpp: ops written with other ops -- var, std, softmax, log_softmax, logsumexp.
#include <algorithm>
#include <limits>

#include "ops/op_helpers.h"

namespace ember {

namespace {
Tensor as_float(const Tensor& x) {
  return x.is_floating_point() ? x : x.to(default_dtype());
}
}  // namespace

Tensor var(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {
  EMBER_CHECK_KIND(DType, x.is_floating_point(),
                   "[var] input dtype should be a floating point "
                   "dtype, got ",
                   x.dtype(), "; convert with .to(ember::kFloat32)");
  Tensor centered = x - mean(x, dims, true);
  Tensor ss = sum(centered * centered, dims, keepdim);
  int64_t n = ss.numel() == 0 ? 0 : x.numel() / ss.numel();
  // As PyTorch, divide by max(0, N - correction): no degrees of freedom left gives NaN (0 / 0).
  return ss.div_(static_cast<double>(std::max<int64_t>(n - (unbiased ? 1 : 0), 0)));
}
Tensor std(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {
  return sqrt(var(x, dims, unbiased, keepdim));
}

Tensor logsumexp(const Tensor& x0, const Shape& dims, bool keepdim) {
  Tensor x = as_float(x0);
  if (x.numel() == 0) return log(sum(exp(x), dims, keepdim));
  Tensor m = amax(x.detach(), dims, true);  // the shift cancels out: no gradient through it
  // Rows that are all +-inf would give inf - inf; shift those by 0 instead.
  Tensor shift = where(abs(m) == std::numeric_limits<double>::infinity(), 0.0, m);
  Tensor out = log(sum(exp(x - shift), dims, true)) + shift;
  if (keepdim) return out;
  Shape squeezed;
  uint64_t mask = dims_mask("logsumexp", dims, x.dim());
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!(mask >> d & 1)) squeezed.push_back(x.size(d));
  return out.view(squeezed);
}

Tensor softmax(const Tensor& x0, int64_t dim) {
  Tensor x = as_float(x0);
  Shape d{wrap_dim("softmax", dim, x.dim())};
  if (x.numel() == 0) return x.clone();
  Tensor e = exp(x - amax(x.detach(), d, true));
  // In place only outside the graph: exp's backward reads e.
  Tensor s = sum(e, d, true);
  return e.requires_grad() ? e / s : e.div_(s);
}

Tensor log_softmax(const Tensor& x0, int64_t dim) {
  Tensor x = as_float(x0);
  Shape d{wrap_dim("log_softmax", dim, x.dim())};
  if (x.numel() == 0) return x.clone();
  // (x - m) - log(sum(exp(x - m))), as PyTorch's kernel, not x - logsumexp(x): for large x the
  // logsumexp rounded to the dtype would cost the small results most of their precision.
  Tensor m = amax(x.detach(), d, true);
  Tensor shifted = x - where(abs(m) == std::numeric_limits<double>::infinity(), 0.0, m);
  return shifted - log(sum(exp(shifted), d, true));
}

}  // namespace ember
