// ember/optim/adam.h: Adam and AdamW (decoupled weight decay) with betas, eps, weight_decay and
// amsgrad, following PyTorch's update rule, applied in one pass over each parameter.
#pragma once

#include <optional>

#include <utility>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdamOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;
  // The dtype of exp_avg / exp_avg_sq: the parameter's (PyTorch's behaviour) unless set;
  // kFloat32 keeps float32 state for float16 / bfloat16 parameters (small second moments of
  // float16 gradients would flush to zero in float16).
  std::optional<DType> state_dtype = std::nullopt;
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<Tensor> params, AdamOptions options = {});
  explicit Adam(std::vector<ParamGroup<AdamOptions>> groups);
  void add_param_group(ParamGroup<AdamOptions> group);
  void step() override;

  size_t num_param_groups() const override { return groups_.size(); }
  const std::vector<Tensor>& params(size_t g) const override { return groups_.at(g).params; }
  double lr(size_t g) const override { return groups_.at(g).options.lr; }
  void set_lr(size_t g, double lr) override { groups_.at(g).options.lr = lr; }
  double momentum(size_t g) const override { return groups_.at(g).options.betas.first; }
  void set_momentum(size_t g, double m) override { groups_.at(g).options.betas.first = m; }
  std::vector<ParamGroup<AdamOptions>>& param_groups() { return groups_; }

 protected:
  Adam(std::vector<ParamGroup<AdamOptions>> groups, bool decoupled_weight_decay);
  std::vector<std::pair<std::string, double>> group_options(size_t g) const override;
  void set_group_option(size_t g, const std::string& name, double value) override;

 private:
  std::vector<ParamGroup<AdamOptions>> groups_;
  bool decoupled_;
};

struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
};

class AdamW : public Adam {
 public:
  explicit AdamW(std::vector<Tensor> params, AdamWOptions options = {});
  explicit AdamW(std::vector<ParamGroup<AdamWOptions>> groups);
};

}  // namespace ember::optim
