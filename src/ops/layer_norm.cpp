// ops/layer_norm.cpp: F::layer_norm -- the backend's fused kernels with one recorded node
// (PyTorch's NativeLayerNormBackward0) for float32/float64 input whose weight and bias, where
// given, have the normalized shape and the input's dtype and device; the composite of mean,
// variance and rsqrt for the rest (mixed dtypes promote, broadcasting weights, devices that
// differ get the element-wise ops' error).
#include "autograd/function.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

namespace {

Tensor composite_layer_norm(const Tensor& x, int64_t k, const Tensor& weight, const Tensor& bias,
                            double eps) {
  Shape dims;
  for (int64_t i = 0; i < k; ++i) dims.push_back(x.dim() - k + i);
  Tensor mu = x.mean(dims, true);
  Tensor centered = x - mu;
  Tensor var = (centered * centered).mean(dims, true);
  Tensor y = centered * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

// Whether an affine parameter suits the fused kernels: absent, or of the normalized shape with
// x's dtype and device.
bool fits_fused(const Tensor& p, const Tensor& x, const Shape& normalized_shape) {
  return !p.defined() ||
         (p.sizes() == normalized_shape && p.dtype() == x.dtype() && p.device() == x.device());
}

autograd::SavedTensor saved(const Tensor& t) {
  return t.defined() ? autograd::SavedTensor(t) : autograd::SavedTensor();
}

View data_view(const Tensor& t, const Shape& sizes, const Shape& strides, DType dtype) {
  return View{t.defined() ? t.impl().data() : nullptr, sizes, strides, dtype};
}

// x (..., shape) seen as (rows, cols): the kernels' forward and the recorded backward.
Tensor fused_layer_norm(const Tensor& x, const Shape& shape, int64_t rows, int64_t cols,
                        const Tensor& weight_in, const Tensor& bias_in, double eps) {
  const Tensor xc = x.contiguous();
  const Tensor weight = weight_in.defined() ? weight_in.contiguous() : Tensor();
  const Tensor bias = bias_in.defined() ? bias_in.contiguous() : Tensor();
  const DType dt = x.dtype();
  Tensor y = make_tensor(x.sizes(), dt, x.device());
  Tensor mean = make_tensor({rows}, dt, x.device()), rstd = make_tensor({rows}, dt, x.device());
  const Shape mat{rows, cols}, mat_strides{cols, 1}, row_vec{rows}, col_vec{cols}, unit{1};
  backend_for(x).layer_norm(data_view(y, mat, mat_strides, dt), data_view(mean, row_vec, unit, dt),
                            data_view(rstd, row_vec, unit, dt), data_view(xc, mat, mat_strides, dt),
                            data_view(weight, col_vec, unit, dt),
                            data_view(bias, col_vec, unit, dt), eps);
  autograd::record(
      "NativeLayerNormBackward0", {&x, &weight_in, &bias_in}, y,
      [sx = autograd::SavedTensor(xc), sw = saved(weight), mean, rstd, shape, rows, cols,
       x_grad = x.requires_grad(), w_grad = weight_in.defined() && weight_in.requires_grad(),
       b_grad = bias_in.defined() && bias_in.requires_grad()](const Tensor& grad) {
        const Tensor xs = sx.unpack(), w = sw.unpack();
        const Tensor g = grad.to(xs.dtype()).contiguous();
        const DType dt = xs.dtype();
        const Shape mat{rows, cols}, mat_strides{cols, 1}, row_vec{rows}, col_vec{cols}, unit{1};
        Tensor dx = x_grad ? make_tensor(xs.sizes(), dt, xs.device()) : Tensor();
        Tensor dw = w_grad ? make_tensor(shape, dt, xs.device()) : Tensor();
        Tensor db = b_grad ? make_tensor(shape, dt, xs.device()) : Tensor();
        backend_for(xs).layer_norm_backward(
            data_view(dx, mat, mat_strides, dt), data_view(dw, col_vec, unit, dt),
            data_view(db, col_vec, unit, dt), data_view(g, mat, mat_strides, dt),
            data_view(xs, mat, mat_strides, dt), data_view(mean, row_vec, unit, dt),
            data_view(rstd, row_vec, unit, dt), data_view(w, col_vec, unit, dt));
        return std::vector<Tensor>{dx, dw, db};
      });
  return y;
}

}  // namespace

Tensor layer_norm(const Tensor& x_in, const Shape& normalized_shape, const Tensor& weight_in,
                  const Tensor& bias_in, double eps) {
  const Tensor x = autocast_float32(x_in), weight = autocast_float32(weight_in),
               bias = autocast_float32(bias_in);
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool fits = k <= x.dim();
  for (int64_t i = 0; fits && i < k; ++i) fits = x.size(x.dim() - k + i) == normalized_shape[i];
  EMBER_CHECK_KIND(Shape, fits, "[layer_norm] Given normalized_shape=", shape_str(normalized_shape),
                   ", expected input with shape [*, ", shape_str(normalized_shape).substr(1),
                   " but got input of size", shape_str(x.sizes()));
  // float16 and bfloat16 normalize in float32 and round once, as PyTorch's fused kernel does.
  if (is_reduced_float(x.dtype()))
    return layer_norm(to_opmath(x), normalized_shape, to_opmath(weight), to_opmath(bias), eps)
        .to(x.dtype());
  int64_t cols = 1;
  for (int64_t s : normalized_shape) cols *= s;
  const bool fused = (x.dtype() == kFloat32 || x.dtype() == kFloat64) && k > 0 && cols > 0 &&
                     fits_fused(weight, x, normalized_shape) &&
                     fits_fused(bias, x, normalized_shape);
  if (!fused || x.numel() == 0) return composite_layer_norm(x, k, weight, bias, eps);
  return fused_layer_norm(x, normalized_shape, x.numel() / cols, cols, weight, bias, eps);
}

}  // namespace ember::nn::functional
