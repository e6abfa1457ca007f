// ember/optim/sgd.h: stochastic gradient descent with momentum, dampening, Nesterov and weight
// decay, with PyTorch's update rule, applied in one pass over each parameter.
#pragma once

#include <optional>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;
  // The momentum buffer's dtype: the parameter's unless set; kFloat32 for float16 / bfloat16
  // parameters keeps it in float32.
  std::optional<DType> state_dtype = std::nullopt;
};

class SGD : public Optimizer {
 public:
  explicit SGD(std::vector<Tensor> params, SGDOptions options = {});
  explicit SGD(std::vector<ParamGroup<SGDOptions>> groups);
  void add_param_group(ParamGroup<SGDOptions> group);
  void step() override;

  size_t num_param_groups() const override { return groups_.size(); }
  const std::vector<Tensor>& params(size_t g) const override { return groups_.at(g).params; }
  double lr(size_t g) const override { return groups_.at(g).options.lr; }
  void set_lr(size_t g, double lr) override { groups_.at(g).options.lr = lr; }
  double momentum(size_t g) const override { return groups_.at(g).options.momentum; }
  void set_momentum(size_t g, double m) override { groups_.at(g).options.momentum = m; }
  std::vector<ParamGroup<SGDOptions>>& param_groups() { return groups_; }

 protected:
  std::vector<std::pair<std::string, double>> group_options(size_t g) const override;
  void set_group_option(size_t g, const std::string& name, double value) override;

 private:
  std::vector<ParamGroup<SGDOptions>> groups_;
};

}  // namespace ember::optim
