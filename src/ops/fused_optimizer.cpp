// ops/fused_optimizer.cpp: hands parameter updates to the backends' fused optimizer_step.
#include "ops/fused_optimizer.h"

#include <algorithm>
#include <optional>

#include "core/backend.h"

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

namespace {

// One backend call over the updates whose parameters live on `device` (all of them when
// `device` is empty).
void run_on(const OptimizerStep& step, const std::vector<Update>& updates,
            std::optional<Device> device) {
  std::vector<View> params, grads, s1, s2, s3;
  params.reserve(updates.size());
  grads.reserve(updates.size());
  const Update* first = nullptr;
  for (const Update& u : updates) {
    if (device && u.param.device() != *device) continue;
    first = first ? first : &u;
    u.param.storage()->bump_version();
    params.push_back(view_of(u.param));
    grads.push_back(view_of(u.grad));
    for (int k = 0; k < 3; ++k) {
      if (!u.state[k].defined()) continue;
      std::vector<View>& st = k == 0 ? s1 : k == 1 ? s2 : s3;
      if (st.empty()) st.reserve(updates.size());
      st.push_back(view_of(u.state[k]));
    }
  }
  if (!first) return;
  EMBER_CHECK(s1.empty() || s1.size() == params.size(), "[optimizer] internal: state mismatch");
  backend_for(first->param).optimizer_step(step, params, grads, s1, s2, s3);
}

}  // namespace

void run(const OptimizerStep& step, const std::vector<Update>& updates) {
  if (updates.empty()) return;
  Device device = updates[0].param.device();
  bool one_device = std::all_of(updates.begin(), updates.end(),
                                [&](const Update& u) { return u.param.device() == device; });
  if (one_device) return run_on(step, updates, std::nullopt);
  std::vector<Device> seen;
  for (const Update& u : updates) {
    if (std::find(seen.begin(), seen.end(), u.param.device()) != seen.end()) continue;
    seen.push_back(u.param.device());
    run_on(step, updates, u.param.device());
  }
}

}  // namespace ember::optim::detail
