// nn/functional.cpp: layers and losses as compositions of tensor ops (their gradients come from
// the ops'), with PyTorch's reductions, ignore_index, label smoothing and stable forms.
#include "ember/nn/functional.h"

#include "ember/ops.h"
#include "ops/loss_helpers.h"
#include "ops/op_helpers.h"

namespace ember::nn::functional {

using detail::check_same_shape;
using detail::reduce;

namespace {

// For class-index targets: input (N, C, d...) or (C); target (N, d...) or ().
int64_t class_dim_of(const char* op, const Tensor& input, const Tensor& target) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 1, "[", op, "] input must have at least 1 dim (C)");
  int64_t cd = input.dim() == 1 ? 0 : 1;
  Shape expected = input.sizes();
  expected.erase(expected.begin() + cd);
  EMBER_CHECK_KIND(Shape, target.sizes() == expected, "[", op, "] Expected target size ",
                   shape_str(expected), " for input of size ", shape_str(input.sizes()), ", got ",
                   shape_str(target.sizes()));
  return cd;
}

// The weight of each target's class (1 without weights), 0 where ignored; same shape as target.
Tensor target_weights(const Tensor& safe_target, const Tensor& valid, const Tensor& weight,
                      DType dtype) {
  if (!weight.defined()) return valid.to(dtype);
  return index_select(weight, 0, safe_target.reshape({-1})).view(safe_target.sizes()) *
         valid.to(weight.dtype());
}

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return reduce(abs(autocast_float32(input) - autocast_float32(target)), reduction);
}

Tensor nll_loss(const Tensor& log_probs_in, const Tensor& target, const NllLossOptions& o) {
  const Tensor log_probs = autocast_float32(log_probs_in);
  EMBER_CHECK_KIND(DType, target.dtype() == kInt64,
                   "[nll_loss] expected target of class indices "
                   "with dtype int64, got ",
                   target.dtype());
  int64_t cd = class_dim_of("nll_loss", log_probs, target);
  int64_t classes = log_probs.size(cd);
  if (o.weight.defined())
    EMBER_CHECK_KIND(Shape, o.weight.dim() == 1 && o.weight.size(0) == classes,
                     "[nll_loss] weight "
                     "tensor should be defined either for all ",
                     classes, " classes or no classes but got weight tensor of shape: ",
                     shape_str(o.weight.sizes()));
  Tensor valid = target != o.ignore_index;
  Tensor safe = where(valid, target, 0);
  if (safe.numel() > 0) {
    int64_t lo = safe.min().item<int64_t>(), hi = safe.max().item<int64_t>();
    EMBER_CHECK_KIND(Index, lo >= 0 && hi < classes, "[nll_loss] Target ", lo < 0 ? lo : hi,
                     " is out of bounds: classes are 0..", classes - 1);
  }
  Tensor picked = log_probs.gather(cd, safe.unsqueeze(cd)).squeeze(cd);
  Tensor w = target_weights(safe, valid, o.weight, log_probs.dtype());
  Tensor loss = -picked * w;
  if (o.reduction == Reduction::Mean) return loss.sum() / w.sum();
  return reduce(loss, o.reduction);
}

Tensor cross_entropy(const Tensor& input_in, const Tensor& target, const CrossEntropyOptions& o) {
  const Tensor input = autocast_float32(input_in);
  EMBER_CHECK(o.label_smoothing >= 0 && o.label_smoothing <= 1,
              "[cross_entropy] label_smoothing "
              "must be between 0.0 and 1.0. Got: ",
              o.label_smoothing);
  EMBER_CHECK_KIND(Shape, input.dim() >= 1, "[cross_entropy] input must have at least 1 dim (C)");
  int64_t cd = input.dim() == 1 ? 0 : 1;
  int64_t classes = input.size(cd);
  if (o.weight.defined())
    EMBER_CHECK_KIND(Shape, o.weight.dim() == 1 && o.weight.size(0) == classes,
                     "[cross_entropy] "
                     "weight tensor should be defined either for all ",
                     classes, " classes or no classes but got weight tensor of shape: ",
                     shape_str(o.weight.sizes()));
  Tensor logp = log_softmax(input, cd);
  double eps = o.label_smoothing;
  Shape class_shape(input.dim(), 1);
  class_shape[cd] = classes;
  Tensor class_w = o.weight.defined() ? o.weight.view(class_shape) : Tensor();

  if (target.is_floating_point()) {  // class probabilities
    check_same_shape("cross_entropy", input, target);
    Tensor t = eps > 0 ? target * (1 - eps) + eps / static_cast<double>(classes) : target;
    Tensor terms = logp * t;
    if (class_w.defined()) terms = terms * class_w;
    Tensor loss = -terms.sum({cd});
    if (o.reduction == Reduction::Mean)
      return loss.sum() / static_cast<double>(input.dim() == 1 ? 1 : loss.numel());
    return reduce(loss, o.reduction);
  }

  Tensor nll = nll_loss(
      logp, target, {.reduction = o.reduction, .ignore_index = o.ignore_index, .weight = o.weight});
  if (eps == 0) return nll;
  // Label smoothing: mix in the (weighted) mean of -log p over all classes.
  Tensor valid = target != o.ignore_index;
  Tensor terms = class_w.defined() ? logp * class_w : logp;
  Tensor smooth = -terms.sum({cd}) * valid.to(logp.dtype());
  Tensor smooth_reduced;
  switch (o.reduction) {
    case Reduction::None:
      smooth_reduced = smooth;
      break;
    case Reduction::Sum:
      smooth_reduced = smooth.sum();
      break;
    case Reduction::Mean: {
      Tensor safe = where(valid, target, 0);
      smooth_reduced = smooth.sum() / target_weights(safe, valid, o.weight, logp.dtype()).sum();
      break;
    }
  }
  return nll * (1 - eps) + smooth_reduced * (eps / static_cast<double>(classes));
}

Tensor binary_cross_entropy_with_logits(const Tensor& input_in, const Tensor& target_in,
                                        Reduction reduction, const Tensor& weight_in,
                                        const Tensor& pos_weight_in) {
  const Tensor input = autocast_float32(input_in), target = autocast_float32(target_in),
               weight = autocast_float32(weight_in), pos_weight = autocast_float32(pos_weight_in);
  check_same_shape("binary_cross_entropy_with_logits", input, target);
  // log(1 + exp(-|x|)) + max(-x, 0) is log(1 + exp(-x)) without overflow.
  Tensor softplus_neg = log1p(exp(-abs(input))) + relu(-input);
  Tensor loss = pos_weight.defined()
                    ? (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus_neg
                    : (1 - target) * input + softplus_neg;
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor dropout(const Tensor& x, double p, bool training) {
  EMBER_CHECK(p >= 0 && p <= 1, "[dropout] dropout probability has to be between 0 and 1, but got ",
              p);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  Tensor keep = (rand_like(x) >= p).to(x.dtype());
  return x * keep * (1.0 / (1.0 - p));
}

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type) {
  EMBER_CHECK_KIND(DType, indices.dtype() == kInt64 || indices.dtype() == kInt32,
                   "[embedding] Expected indices of dtype int64 or int32, got ", indices.dtype());
  EMBER_CHECK_KIND(Shape, weight.dim() == 2, "[embedding] weight must be 2-D, got shape ",
                   shape_str(weight.sizes()));
  if (max_norm) {
    Tensor table = weight;
    embedding_renorm_(table, indices, *max_norm, norm_type);
  }
  Shape out_shape = indices.sizes();
  out_shape.push_back(weight.size(1));
  Tensor out = index_select(weight, 0, indices.reshape({-1})).view(out_shape);
  if (!padding_idx) return out;
  // The padding row reads as usual but passes no gradient.
  Tensor trainable = (indices != *padding_idx).unsqueeze(-1);
  return where(trainable, out, out.detach());
}

}  // namespace ember::nn::functional

namespace ember::nn::functional {

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK_KIND(Shape, weight.dim() == 3,
                   "[bilinear] weight must be 3-D (out_features, in1_features, in2_features), got ",
                   shape_str(weight.sizes()));
  EMBER_CHECK_KIND(Shape,
                   x1.dim() >= 1 && x2.dim() >= 1 && x1.size(-1) == weight.size(1) &&
                       x2.size(-1) == weight.size(2) &&
                       Shape(x1.sizes().begin(), x1.sizes().end() - 1) ==
                           Shape(x2.sizes().begin(), x2.sizes().end() - 1),
                   "[bilinear] input1 ", shape_str(x1.sizes()), " and input2 ",
                   shape_str(x2.sizes()), " must share their leading dims and end in weight ",
                   shape_str(weight.sizes()), "'s in1_features and in2_features");
  // 16-bit inputs compute in float32 and round once.
  if (is_reduced_float(x1.dtype()))
    return bilinear(to_opmath(x1), to_opmath(x2), to_opmath(weight), to_opmath(bias))
        .to(x1.dtype());
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  Shape lead(x1.sizes().begin(), x1.sizes().end() - 1);
  // (M, in1) times (in1, out in2) -> (M, out, in2), then the dot with x2 over in2.
  Tensor t = matmul(x1.reshape({-1, in1}), weight.permute({1, 0, 2}).reshape({in1, out * in2}))
                 .view({-1, out, in2});
  Tensor y = (t * x2.reshape({-1, 1, in2})).sum({2});
  if (bias.defined()) y = y + bias;
  lead.push_back(out);
  return y.view(lead);
}

}  // namespace ember::nn::functional
