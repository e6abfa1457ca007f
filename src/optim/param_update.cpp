// optim/param_update.cpp: hands parameter updates to the backends' fused optimizer_step.
#include "optim/param_update.h"

#include <map>

namespace ember::optim::detail {

Tensor checked_grad(const char* op, const Tensor& param) {
  const Tensor& g = param.grad();
  EMBER_CHECK_KIND(Device, g.device() == param.device(), "[", op, "] gradient on ", g.device(),
                   " but parameter on ", param.device(), "; move them together with .to(device)");
  EMBER_CHECK_KIND(Shape, g.sizes() == param.sizes(), "[", op, "] gradient of shape ",
                   shape_str(g.sizes()), " for a parameter of shape ", shape_str(param.sizes()));
  EMBER_CHECK_KIND(DType, param.is_floating_point(), "[", op,
                   "] can only optimize floating point "
                   "parameters, got ",
                   param.dtype());
  EMBER_CHECK(param.is_contiguous(), "[", op,
              "] parameters must be contiguous; register a "
              "contiguous tensor (param.contiguous()) instead of a strided view");
  return g.dtype() == param.dtype() ? g.contiguous() : g.to(param.dtype()).contiguous();
}

void run(const OptimizerStep& step, const std::vector<Update>& updates) {
  std::map<std::pair<int, int>, std::vector<const Update*>> by_device;
  for (const Update& u : updates)
    by_device[{static_cast<int>(u.param.device().type()), u.param.device().index()}].push_back(&u);
  for (auto& [key, list] : by_device) {
    std::vector<View> params, grads, s1, s2, s3;
    for (const Update* u : list) {
      u->param.storage()->bump_version();
      params.push_back(view_of(u->param));
      grads.push_back(view_of(u->grad));
      for (int k = 0; k < 3; ++k) {
        if (!u->state[k].defined()) continue;
        (k == 0 ? s1 : k == 1 ? s2 : s3).push_back(view_of(u->state[k]));
      }
    }
    EMBER_CHECK(s1.empty() || s1.size() == params.size(), "[optimizer] internal: state mismatch");
    backend_for(list[0]->param).optimizer_step(step, params, grads, s1, s2, s3);
  }
}

}  // namespace ember::optim::detail
