// optim/adam.cpp: Adam and AdamW as PyTorch defines them -- per-parameter step counts, bias
// corrections, optional amsgrad -- in one fused pass per parameter.
#include "ember/optim/adam.h"

#include <algorithm>
#include <cmath>

#include "ember/ops.h"
#include "ops/fused_optimizer.h"

namespace ember::optim {

namespace {
void check(const AdamOptions& o, const char* name) {
  EMBER_CHECK(o.lr >= 0, "[", name, "] Invalid learning rate: ", o.lr);
  EMBER_CHECK(o.eps >= 0, "[", name, "] Invalid epsilon value: ", o.eps);
  EMBER_CHECK(o.betas.first >= 0 && o.betas.first < 1, "[", name,
              "] Invalid beta parameter at index 0: ", o.betas.first);
  EMBER_CHECK(o.betas.second >= 0 && o.betas.second < 1, "[", name,
              "] Invalid beta parameter at index 1: ", o.betas.second);
  EMBER_CHECK(o.weight_decay >= 0, "[", name, "] Invalid weight_decay value: ", o.weight_decay);
}

AdamOptions from_adamw(const AdamWOptions& o) {
  return {.lr = o.lr,
          .betas = o.betas,
          .eps = o.eps,
          .weight_decay = o.weight_decay,
          .amsgrad = o.amsgrad,
          .maximize = o.maximize};
}
}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam(std::vector<ParamGroup<AdamOptions>>{{std::move(params), options}}, false) {}

Adam::Adam(std::vector<ParamGroup<AdamOptions>> groups) : Adam(std::move(groups), false) {}

Adam::Adam(std::vector<ParamGroup<AdamOptions>> groups, bool decoupled) : decoupled_(decoupled) {
  for (auto& g : groups) add_param_group(std::move(g));
}

void Adam::add_param_group(ParamGroup<AdamOptions> group) {
  const char* name = decoupled_ ? "AdamW" : "Adam";
  check(group.options, name);
  for (const Tensor& p : group.params)
    EMBER_CHECK(p.is_leaf() && p.requires_grad(), "[", name,
                "] can't optimize a tensor that is "
                "not a leaf requiring grad; pass model->parameters()");
  groups_.push_back(std::move(group));
}

void Adam::step() {
  NoGradGuard no_grad;
  const char* name = decoupled_ ? "AdamW" : "Adam";
  for (auto& group : groups_) {
    const AdamOptions& o = group.options;
    // Parameters at the same step share bias corrections, so they go in one fused call.
    std::vector<std::pair<double, std::vector<detail::Update>>> by_step;
    for (const Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      ParamState& st = state_of(p);
      if (st.empty()) {
        const TensorOptions state{.dtype = detail::state_dtype(name, p, o.state_dtype),
                                  .device = p.device()};
        st.emplace_back("step", zeros({}, {.dtype = kFloat64}));
        st.emplace_back("exp_avg", zeros(p.sizes(), state));
        st.emplace_back("exp_avg_sq", zeros(p.sizes(), state));
        if (o.amsgrad) st.emplace_back("max_exp_avg_sq", zeros(p.sizes(), state));
      }
      EMBER_CHECK(!o.amsgrad || st.size() == 4, "[", name,
                  "] amsgrad was turned on after the "
                  "first step; its state is missing");
      double& step_count = *st[0].second.data_ptr<double>();  // a 0-dim float64 CPU tensor
      double step = ++step_count;
      detail::Update u{p, detail::checked_grad(name, p), {st[1].second, st[2].second, Tensor()}};
      if (o.amsgrad) u.state[2] = st[3].second;
      auto same = std::find_if(by_step.begin(), by_step.end(),
                               [step](const auto& entry) { return entry.first == step; });
      if (same == by_step.end()) same = by_step.insert(by_step.end(), {step, {}});
      same->second.push_back(std::move(u));
    }
    for (auto& [step, updates] : by_step) {
      AdamStep s{.lr = o.lr,
                 .weight_decay = o.weight_decay,
                 .maximize = o.maximize,
                 .beta1 = o.betas.first,
                 .beta2 = o.betas.second,
                 .eps = o.eps,
                 .bias_correction1 = 1 - std::pow(o.betas.first, step),
                 .bias_correction2 = 1 - std::pow(o.betas.second, step),
                 .amsgrad = o.amsgrad,
                 .decoupled_weight_decay = decoupled_};
      detail::run(s, updates);
    }
  }
}

std::vector<std::pair<std::string, double>> Adam::group_options(size_t g) const {
  const AdamOptions& o = groups_.at(g).options;
  return {{"lr", o.lr},
          {"beta1", o.betas.first},
          {"beta2", o.betas.second},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad ? 1.0 : 0.0},
          {"maximize", o.maximize ? 1.0 : 0.0}};
}

void Adam::set_group_option(size_t g, const std::string& name, double v) {
  AdamOptions& o = groups_.at(g).options;
  if (name == "lr")
    o.lr = v;
  else if (name == "beta1")
    o.betas.first = v;
  else if (name == "beta2")
    o.betas.second = v;
  else if (name == "eps")
    o.eps = v;
  else if (name == "weight_decay")
    o.weight_decay = v;
  else if (name == "amsgrad")
    o.amsgrad = v != 0;
  else if (name == "maximize")
    o.maximize = v != 0;
  else
    EMBER_THROW(Value, "[Adam::load_state_dict] unknown option \"", name, "\"");
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Adam(std::vector<ParamGroup<AdamOptions>>{{std::move(params), from_adamw(options)}}, true) {}

AdamW::AdamW(std::vector<ParamGroup<AdamWOptions>> groups)
    : Adam(std::vector<ParamGroup<AdamOptions>>{}, true) {
  for (auto& g : groups) add_param_group({std::move(g.params), from_adamw(g.options)});
}

}  // namespace ember::optim
