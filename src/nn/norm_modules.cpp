// nn/norm_modules.cpp: the layers of ember/nn/norm_modules.h. InstanceNorm with running
// statistics runs as batch_norm over the (1, N C, *) view of its input, each plane a channel, its
// running statistics repeated per sample and averaged back, as PyTorch does.
#include "ember/nn/norm_modules.h"

#include "ember/ops.h"
#include "nn/format.h"

namespace ember::nn {

RMSNormImpl::RMSNormImpl(Shape shape, std::optional<double> eps, bool affine)
    : Module("RMSNorm"), normalized_shape(std::move(shape)), eps(eps) {
  if (affine) weight = register_parameter("weight", ones(normalized_shape));
}
Tensor RMSNormImpl::forward(const Tensor& input) {
  return F::rms_norm(input, normalized_shape, weight, eps);
}
std::string RMSNormImpl::extra_repr() const {
  std::string s = fmt_tuple(normalized_shape) + ", eps=";
  s += eps ? fmt_double(*eps) : "None";
  return s + ", elementwise_affine=" + fmt_bool(weight.defined());
}

GroupNormImpl::GroupNormImpl(int64_t groups, int64_t channels, double eps, bool affine)
    : Module("GroupNorm"), num_groups(groups), num_channels(channels), eps(eps) {
  EMBER_CHECK(groups > 0 && channels % groups == 0,
              "[GroupNorm] num_channels must be divisible by num_groups, got ", channels, " and ",
              groups);
  if (affine) {
    weight = register_parameter("weight", ones({channels}));
    bias = register_parameter("bias", zeros({channels}));
  }
}
Tensor GroupNormImpl::forward(const Tensor& input) {
  EMBER_CHECK_KIND(Shape, input.dim() >= 2 && input.size(1) == num_channels,
                   "[GroupNorm] expected input (N, ", num_channels, ", *), got ",
                   shape_str(input.sizes()));
  return F::group_norm(input, num_groups, weight, bias, eps);
}
std::string GroupNormImpl::extra_repr() const {
  return std::to_string(num_groups) + ", " + std::to_string(num_channels) +
         ", eps=" + fmt_double(eps) + ", affine=" + fmt_bool(weight.defined());
}

InstanceNormImplBase::InstanceNormImplBase(std::string name, int64_t dims, int64_t features,
                                           const InstanceNormOptions& o)
    : Module(std::move(name)), num_features(features), options(o), spatial_dims(dims) {
  if (o.affine) {
    weight = register_parameter("weight", ones({features}));
    bias = register_parameter("bias", zeros({features}));
  }
  if (o.track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({features}));
    running_var = register_buffer("running_var", ones({features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, {.dtype = kInt64}));
  }
}

Tensor InstanceNormImplBase::forward(const Tensor& input) {
  const int64_t d = input.dim();
  EMBER_CHECK_KIND(Shape, d == spatial_dims + 1 || d == spatial_dims + 2, "[", name(),
                   "] expected ", spatial_dims + 1, "D (unbatched) or ", spatial_dims + 2,
                   "D (batched) input, got input of size ", shape_str(input.sizes()));
  Tensor x = d == spatial_dims + 2 ? input : input.unsqueeze(0);
  EMBER_CHECK_KIND(Shape, x.size(1) == num_features, "[", name(), "] expected ", num_features,
                   " channels, got input of size ", shape_str(input.sizes()));
  Tensor y;
  const bool use_batch = is_training() || !options.track_running_stats;
  if (!options.track_running_stats) {
    y = F::instance_norm(x, weight, bias, options.eps);
  } else {
    const int64_t n = x.size(0), c = x.size(1);
    Tensor planes = x.reshape({1, n * c, -1});
    Tensor mean_n = running_mean.repeat({n}), var_n = running_var.repeat({n});
    y = F::batch_norm(planes, mean_n, var_n, Tensor(), Tensor(), use_batch, options.momentum,
                      options.eps)
            .view(x.sizes());
    if (use_batch) {
      NoGradGuard no_grad;
      running_mean.copy_(mean_n.view({n, c}).mean({0}));
      running_var.copy_(var_n.view({n, c}).mean({0}));
      num_batches_tracked.add_(1);
    }
    Shape channel(static_cast<size_t>(x.dim()), 1);
    channel[1] = c;
    if (weight.defined()) y = y * weight.view(channel) + bias.view(channel);
  }
  return d == spatial_dims + 2 ? y : y.squeeze(0);
}

std::string InstanceNormImplBase::extra_repr() const {
  return std::to_string(num_features) + ", eps=" + fmt_double(options.eps) +
         ", momentum=" + fmt_double(options.momentum) + ", affine=" + fmt_bool(options.affine) +
         ", track_running_stats=" + fmt_bool(options.track_running_stats);
}

Tensor LocalResponseNormImpl::forward(const Tensor& input) {
  return F::local_response_norm(input, size, alpha, beta, k);
}
std::string LocalResponseNormImpl::extra_repr() const {
  return std::to_string(size) + ", alpha=" + fmt_double(alpha) + ", beta=" + fmt_double(beta) +
         ", k=" + fmt_double(k);
}

}  // namespace ember::nn
