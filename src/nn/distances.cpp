// nn/distances.cpp: normalize, cosine_similarity and pairwise_distance (torch.nn.functional),
// composed of norms and sums.
#include "ember/nn/functional.h"
#include "ember/ops.h"

namespace ember::nn::functional {

Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) {
  return x / clamp(norm(x, p, {dim}, true), eps, std::nullopt);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  // x1 . x2 / max(|x1| |x2|, eps), broadcasting x1 against x2; 16-bit inputs in float32,
  // rounded once.
  const DType dtype = promote_types(x1.dtype(), x2.dtype());
  if (is_reduced_float(dtype))
    return cosine_similarity(x1.to(kFloat32), x2.to(kFloat32), dim, eps).to(dtype);
  Shape shape = broadcast_shapes(x1.sizes(), x2.sizes());
  Tensor a = x1.expand(shape), b = x2.expand(shape);
  Tensor denom = clamp(norm(a, 2, {dim}) * norm(b, 2, {dim}), eps, std::nullopt);
  return sum(a * b, {dim}) / denom;
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  Tensor d = x1 - x2 + eps;
  return norm(d, p, {d.dim() == 0 ? 0 : -1}, keepdim);
}

}  // namespace ember::nn::functional
