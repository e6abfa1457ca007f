// ember/optim/optimizer.h: the optimizer base -- parameter groups with their own options,
// zero_grad, and state dicts for resuming training.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/nn/module.h"
#include "ember/tensor.h"

namespace ember::optim {

using nn::StateDict;

// Parameters that share options: {.params = model->parameters(), .options = {.lr = 1e-4}}.
template <class Options>
struct ParamGroup {
  std::vector<Tensor> params;
  Options options;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient.
  virtual void step() = 0;
  // Clears gradients: to undefined (PyTorch 2's default) or to zeros.
  void zero_grad(bool set_to_none = true);

  virtual size_t num_param_groups() const = 0;
  virtual const std::vector<Tensor>& params(size_t group) const = 0;
  virtual double lr(size_t group) const = 0;
  virtual void set_lr(size_t group, double lr) = 0;
  // The momentum a one-cycle schedule cycles (SGD's momentum, Adam's beta1).
  virtual double momentum(size_t group) const = 0;
  virtual void set_momentum(size_t group, double momentum) = 0;

  // Per-parameter state and group options as named tensors: "state.<i>.<name>" with i the
  // parameter's position across groups, and "param_groups.<g>.<option>" as 0-dim float64.
  StateDict state_dict() const;
  // Restores what state_dict() gave, checking names and shapes; the optimizer must hold the
  // same parameters in the same order.
  void load_state_dict(const StateDict& state);

 protected:
  // The named state tensors of one parameter, created on its first step.
  using ParamState = std::vector<std::pair<std::string, Tensor>>;
  ParamState& state_of(const Tensor& param) { return state_[&param.impl()]; }
  const ParamState* find_state(const Tensor& param) const;
  // The options of group g as (name, value) pairs, and setting them back.
  virtual std::vector<std::pair<std::string, double>> group_options(size_t g) const = 0;
  virtual void set_group_option(size_t g, const std::string& name, double value) = 0;

 private:
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

}  // namespace ember::optim
