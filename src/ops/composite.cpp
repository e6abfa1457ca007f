// ops/composite.cpp: var, std and logsumexp written with other ops, and softmax / log_softmax as
// one fused backend kernel with a recorded backward.
#include <algorithm>
#include <limits>

#include "autograd/function.h"
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
  Tensor x = autocast_float32(as_float(x0));
  if (is_reduced_float(x.dtype())) return logsumexp(to_opmath(x), dims, keepdim).to(x.dtype());
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

namespace {
// The fused kernel (backend softmax entry) with its gradient:
//   softmax:     dx = y * (g - sum(g * y))      log_softmax: dx = g - exp(y) * sum(g)
Tensor fused_softmax(const char* name, const Tensor& x0, int64_t dim, bool log) {
  Tensor x = autocast_float32(as_float(x0));
  if (is_reduced_float(x.dtype())) return fused_softmax(name, to_opmath(x), dim, log).to(x.dtype());
  int64_t d = wrap_dim(name, dim, x.dim());
  if (x.numel() == 0) return x.clone();
  Tensor src = x.contiguous();
  Tensor out = make_tensor(x.sizes(), x.dtype(), x.device());
  backend_for(x).softmax(view_of(out), view_of(src), x.dim() == 0 ? 0 : d, log);
  autograd::record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {&x}, out,
                   [sy = autograd::SavedTensor(out, true), d, log](const Tensor& g) {
                     Tensor y = sy.unpack();
                     Shape dims{d};
                     if (y.dim() == 0) dims.clear();
                     Tensor r =
                         log ? g - exp(y) * sum(g, dims, true) : y * (g - sum(g * y, dims, true));
                     return std::vector<Tensor>{r};
                   });
  return out;
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return fused_softmax("softmax", x, dim, false);
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  return fused_softmax("log_softmax", x, dim, true);
}

}  // namespace ember
