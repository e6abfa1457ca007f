// ops/scan.cpp: cumsum -- the dtype rule (integers and bool sum in int64 unless a dtype is
// given), the backend scan and its gradient (the reversed cumulative sum of the gradient).
#include "autograd/function.h"
#include "ops/op_helpers.h"

namespace ember {

Tensor cumsum(const Tensor& x0, int64_t dim, std::optional<DType> dtype) {
  const Tensor x = autocast_float32(x0);  // on autocast's float32 list
  const int64_t d =
      x.dim() == 0 ? (wrap_dim("cumsum", dim, 0), 0) : wrap_dim("cumsum", dim, x.dim());
  const DType out_dtype = dtype.value_or(is_floating_point(x.dtype()) ? x.dtype() : kInt64);
  EMBER_CHECK_KIND(DType, out_dtype != kBool, "[cumsum] dtype bool cannot hold sums; use int64");
  Tensor src = x.to(out_dtype).contiguous();
  Tensor out = make_tensor(src.sizes(), out_dtype, src.device());
  if (out.numel() > 0) backend_for(src).cumsum(view_of(out), view_of(src), d);
  if (autograd::needs_grad({&src}) && out.is_floating_point()) {
    autograd::record("CumsumBackward0", {&src}, out, [d, scalar = x.dim() == 0](const Tensor& g) {
      if (scalar) return std::vector<Tensor>{g};
      return std::vector<Tensor>{flip(cumsum(flip(g, {d}), d), {d})};
    });
  }
  return out;
}

}  // namespace ember
