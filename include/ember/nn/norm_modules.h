// ember/nn/norm_modules.h: the normalization layers beyond LayerNorm and BatchNorm -- RMSNorm,
// GroupNorm, InstanceNorm1d/2d/3d and LocalResponseNorm -- on their functional forms, with
// PyTorch's parameter and buffer names.
#pragma once

#include <optional>
#include <string>

#include "ember/nn/functional.h"
#include "ember/nn/module.h"

namespace ember::nn {

// x / sqrt(mean(x^2 over normalized_shape) + eps) * weight; weight (normalized_shape) starts at
// ones; eps by default the input dtype's epsilon.
class RMSNormImpl : public Module {
  EMBER_CLONE(RMSNormImpl, &RMSNormImpl::weight)
 public:
  explicit RMSNormImpl(Shape normalized_shape, std::optional<double> eps = std::nullopt,
                       bool elementwise_affine = true);
  Tensor forward(const Tensor& input) override;  // input: (..., normalized_shape)
  std::string extra_repr() const override;
  Shape normalized_shape;
  std::optional<double> eps;
  Tensor weight;
};
EMBER_BUILTIN_MODULE(RMSNorm);

// num_channels split into num_groups groups, each normalized; weight ones and bias zeros (C).
class GroupNormImpl : public Module {
  EMBER_CLONE(GroupNormImpl, &GroupNormImpl::weight, &GroupNormImpl::bias)
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& input) override;  // input: (N, num_channels, *)
  std::string extra_repr() const override;
  int64_t num_groups, num_channels;
  double eps;
  Tensor weight, bias;
};
EMBER_BUILTIN_MODULE(GroupNorm);

struct InstanceNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = false;
  bool track_running_stats = false;
};
// Each (sample, channel) plane normalized over its own elements. affine: weight ones and bias
// zeros (C); track_running_stats: running_mean / running_var buffers, updated while training
// and used in eval, as BatchNorm's.
class InstanceNormImplBase : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t num_features;
  InstanceNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 protected:
  InstanceNormImplBase(std::string name, int64_t spatial_dims, int64_t num_features,
                       const InstanceNormOptions& options);
  int64_t spatial_dims;
};
#define EMBER_INSTANCE_NORM(Name, dims)                                                         \
  class Name##Impl : public InstanceNormImplBase {                                              \
    EMBER_CLONE(Name##Impl, &Name##Impl::weight, &Name##Impl::bias, &Name##Impl::running_mean,  \
                &Name##Impl::running_var, &Name##Impl::num_batches_tracked)                     \
   public:                                                                                      \
    explicit Name##Impl(int64_t num_features, const InstanceNormOptions& options = {})          \
        : InstanceNormImplBase(#Name, dims, num_features, options) {}                           \
  };                                                                                            \
  EMBER_BUILTIN_MODULE_WITH(Name,                                                               \
                            Name(int64_t num_features, const InstanceNormOptions& options = {}) \
                            : ModuleHolder(std::make_shared<Name##Impl>(num_features, options)){})
EMBER_INSTANCE_NORM(InstanceNorm1d, 1);  // input: (N, C, L) or (C, L)
EMBER_INSTANCE_NORM(InstanceNorm2d, 2);  // input: (N, C, H, W) or (C, H, W)
EMBER_INSTANCE_NORM(InstanceNorm3d, 3);  // input: (N, C, D, H, W) or (C, D, H, W)
#undef EMBER_INSTANCE_NORM

class LocalResponseNormImpl : public Module {
 public:
  explicit LocalResponseNormImpl(int64_t size, double alpha = 1e-4, double beta = 0.75,
                                 double k = 1.0)
      : Module("LocalResponseNorm"), size(size), alpha(alpha), beta(beta), k(k) {}
  Tensor forward(const Tensor& input) override;  // input: (N, C, *)
  std::string extra_repr() const override;
  int64_t size;
  double alpha, beta, k;
};
EMBER_BUILTIN_MODULE(LocalResponseNorm);

}  // namespace ember::nn
