// optim/sgd.cpp: SGD as PyTorch defines it -- weight decay, momentum buffer (a copy of the first
// gradient), dampening, Nesterov -- in one fused pass per parameter.
#include "ember/optim/sgd.h"

#include "ember/ops.h"
#include "ops/fused_optimizer.h"

namespace ember::optim {

namespace {
void check(const SGDOptions& o) {
  EMBER_CHECK(o.lr >= 0, "[SGD] Invalid learning rate: ", o.lr);
  EMBER_CHECK(o.momentum >= 0, "[SGD] Invalid momentum value: ", o.momentum);
  EMBER_CHECK(o.weight_decay >= 0, "[SGD] Invalid weight_decay value: ", o.weight_decay);
  EMBER_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
              "[SGD] Nesterov momentum requires a momentum and zero dampening");
}
}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup<SGDOptions>>{{std::move(params), options}}) {}

SGD::SGD(std::vector<ParamGroup<SGDOptions>> groups) {
  for (auto& g : groups) add_param_group(std::move(g));
}

void SGD::add_param_group(ParamGroup<SGDOptions> group) {
  check(group.options);
  for (const Tensor& p : group.params)
    EMBER_CHECK(p.is_leaf() && p.requires_grad(),
                "[SGD] can't optimize a tensor that is not a "
                "leaf requiring grad; pass model->parameters()");
  groups_.push_back(std::move(group));
}

void SGD::step() {
  NoGradGuard no_grad;
  for (auto& group : groups_) {
    const SGDOptions& o = group.options;
    std::vector<detail::Update> fresh, continuing;
    for (const Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      detail::Update u{p, detail::checked_grad("SGD", p), {}};
      if (o.momentum != 0) {
        ParamState& st = state_of(p);
        if (st.empty()) {
          st.emplace_back("momentum_buffer",
                          empty(p.sizes(), {.dtype = detail::state_dtype("SGD", p, o.state_dtype),
                                            .device = p.device()}));
          u.state[0] = st[0].second;
          fresh.push_back(std::move(u));
          continue;
        }
        u.state[0] = st[0].second;
      }
      continuing.push_back(std::move(u));
    }
    SgdStep s{.lr = o.lr,
              .weight_decay = o.weight_decay,
              .maximize = o.maximize,
              .momentum = o.momentum,
              .dampening = o.dampening,
              .nesterov = o.nesterov};
    detail::run(s, continuing);
    s.first_step = true;
    detail::run(s, fresh);
  }
}

std::vector<std::pair<std::string, double>> SGD::group_options(size_t g) const {
  const SGDOptions& o = groups_.at(g).options;
  return {{"lr", o.lr},
          {"momentum", o.momentum},
          {"dampening", o.dampening},
          {"weight_decay", o.weight_decay},
          {"nesterov", o.nesterov ? 1.0 : 0.0},
          {"maximize", o.maximize ? 1.0 : 0.0}};
}

void SGD::set_group_option(size_t g, const std::string& name, double v) {
  SGDOptions& o = groups_.at(g).options;
  if (name == "lr")
    o.lr = v;
  else if (name == "momentum")
    o.momentum = v;
  else if (name == "dampening")
    o.dampening = v;
  else if (name == "weight_decay")
    o.weight_decay = v;
  else if (name == "nesterov")
    o.nesterov = v != 0;
  else if (name == "maximize")
    o.maximize = v != 0;
  else
    EMBER_THROW(Value, "[SGD::load_state_dict] unknown option \"", name, "\"");
}

}  // namespace ember::optim
