// optim/optimizer.cpp: zero_grad and the optimizer state dict.
#include "ember/optim/optimizer.h"

#include <unordered_map>

#include "ember/ops.h"

namespace ember::optim {

void Optimizer::zero_grad(bool set_to_none) {
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      if (set_to_none) {
        const_cast<Tensor&>(p).mutable_grad() = Tensor();
      } else {
        NoGradGuard no_grad;
        const_cast<Tensor&>(p).mutable_grad().zero_();
      }
    }
  }
}

const Optimizer::ParamState* Optimizer::find_state(const Tensor& param) const {
  auto it = state_.find(&param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

StateDict Optimizer::state_dict() const {
  StateDict out;
  size_t index = 0;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : params(g)) {
      if (const ParamState* st = find_state(p))
        for (const auto& [name, t] : *st)
          out.emplace_back("state." + std::to_string(index) + "." + name, t.clone());
      ++index;
    }
  }
  for (size_t g = 0; g < num_param_groups(); ++g)
    for (const auto& [name, value] : group_options(g))
      out.emplace_back("param_groups." + std::to_string(g) + "." + name,
                       scalar_tensor(value, {.dtype = kFloat64}));
  return out;
}

void Optimizer::load_state_dict(const StateDict& state) {
  std::vector<const Tensor*> by_index;
  for (size_t g = 0; g < num_param_groups(); ++g)
    for (const Tensor& p : params(g)) by_index.push_back(&p);
  std::unordered_map<size_t, ParamState> loaded;
  std::vector<std::tuple<size_t, std::string, double>> options;
  for (const auto& [key, t] : state) {
    auto dot1 = key.find('.'), dot2 = key.find('.', dot1 + 1);
    EMBER_CHECK(dot1 != std::string::npos && dot2 != std::string::npos,
                "[Optimizer::load_state_dict] unexpected key \"", key, "\"");
    std::string kind = key.substr(0, dot1), name = key.substr(dot2 + 1);
    size_t index = std::stoul(key.substr(dot1 + 1, dot2 - dot1 - 1));
    if (kind == "state") {
      EMBER_CHECK(index < by_index.size(), "[Optimizer::load_state_dict] state for parameter ",
                  index, " but this optimizer has ", by_index.size(), " parameters");
      const Tensor& p = *by_index[index];
      bool per_element = name != "step";
      EMBER_CHECK_KIND(Shape, !per_element || t.sizes() == p.sizes(),
                       "[Optimizer::load_state_dict] ", key, " has shape ", shape_str(t.sizes()),
                       " but parameter ", index, " has shape ", shape_str(p.sizes()));
      loaded[index].emplace_back(name, per_element ? t.to(p.device(), p.dtype(), false, true)
                                                   : t.to(Device(kCPU), kFloat64, false, true));
    } else if (kind == "param_groups") {
      EMBER_CHECK(index < num_param_groups(), "[Optimizer::load_state_dict] options for group ",
                  index, " but this optimizer has ", num_param_groups(), " groups");
      options.emplace_back(index, name, t.item<double>());
    } else {
      EMBER_THROW(Value, "[Optimizer::load_state_dict] unexpected key \"", key, "\"");
    }
  }
  for (auto& [g, name, value] : options) set_group_option(g, name, value);
  state_.clear();
  for (auto& [index, st] : loaded) state_[&by_index[index]->impl()] = std::move(st);
}

}  // namespace ember::optim
