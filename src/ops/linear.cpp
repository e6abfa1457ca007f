// ops/linear.cpp: F::linear -- y = x weight^T + bias, one autograd node for 2-D input.
#include "autograd/function.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

// x (N, in), weight (out, in), bias (out) -> (N, out) as one node (PyTorch's AddmmBackward0):
// backward is g @ weight, g^T @ x and g summed over the batch. Input of more dims folds its leading
// dims into N; 1-D input goes through matmul.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  // float16 and bfloat16: the product and the bias add in float32, rounded once (addmm's rule).
  // Without a bias the 16-bit mm is that already (float32 accumulation, one rounding) and keeps
  // the operands in 16 bits: the CPU's AMX / AVX512-BF16 GEMM reads them as they are.
  if (std::vector<Tensor> low; autocast_lower_all({&x, &weight, &bias}, low))
    return linear(low[0], low[1], low[2]);
  if (is_reduced_float(x.dtype()) && (bias.defined() || weight.dtype() != x.dtype())) {
    autocast_detail::Suspend no_autocast;
    return linear(to_opmath(x), to_opmath(weight), to_opmath(bias)).to(x.dtype());
  }
  if (x.dim() > 2 && x.numel() > 0 && weight.dim() == 2 && (!bias.defined() || bias.dim() == 1) &&
      x.size(-1) == weight.size(1)) {
    // x (N..., in) folds into (N, in), as PyTorch's linear does: one product with the bias added
    // in place and one node, instead of a batched matmul and a broadcast add.
    Shape out = x.sizes();
    out.back() = weight.size(0);
    return linear(x.reshape({-1, x.size(-1)}), weight, bias).view(out);
  }
  if (x.dim() != 2 || weight.dim() != 2 || (bias.defined() && bias.dim() != 1)) {
    Tensor y = matmul(x, weight.t());
    return bias.defined() ? y + bias : y;
  }
  Tensor y;
  {
    NoGradGuard no_grad;
    y = mm(x, weight.t());
    if (bias.defined()) y.add_(bias);
  }
  auto backward = [sx = autograd::SavedTensor(x), sw = autograd::SavedTensor(weight),
                   x_grad = x.requires_grad(), w_grad = weight.requires_grad(),
                   b_grad = bias.defined() && bias.requires_grad()](const Tensor& g) {
    return std::vector<Tensor>{x_grad ? mm(g, sw.unpack()) : Tensor(),
                               w_grad ? mm(g.t(), sx.unpack()) : Tensor(),
                               b_grad ? sum(g, {0}) : Tensor()};
  };
  if (bias.defined())
    autograd::record("AddmmBackward0", {&x, &weight, &bias}, y, std::move(backward));
  else
    autograd::record("MmBackward0", {&x, &weight}, y, std::move(backward));
  return y;
}

}  // namespace ember::nn::functional
