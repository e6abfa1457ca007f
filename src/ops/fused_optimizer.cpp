// ops/fused_optimizer.cpp: hands parameter updates to the backends' fused sgd_step / adam_step.
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

// One backend call, call(backend, params, grads, state1, state2, state3), over the updates whose
// parameters live on `device` (all of them when `device` is empty).
template <class Call>
void run_on(const Call& call, const std::vector<Update>& updates, std::optional<Device> device) {
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
  call(backend_for(first->param), params, grads, s1, s2, s3);
}

template <class Call>
void run_all(const Call& call, const std::vector<Update>& updates) {
  if (updates.empty()) return;
  Device device = updates[0].param.device();
  bool one_device = std::all_of(updates.begin(), updates.end(),
                                [&](const Update& u) { return u.param.device() == device; });
  if (one_device) return run_on(call, updates, std::nullopt);
  std::vector<Device> seen;
  for (const Update& u : updates) {
    if (std::find(seen.begin(), seen.end(), u.param.device()) != seen.end()) continue;
    seen.push_back(u.param.device());
    run_on(call, updates, u.param.device());
  }
}

}  // namespace

void run(const SgdStep& step, const std::vector<Update>& updates) {
  run_all(
      [&](Backend& b, std::span<const View> p, std::span<const View> g, std::span<const View> s1,
          std::span<const View>, std::span<const View>) { b.sgd_step(step, p, g, s1); },
      updates);
}

void run(const AdamStep& step, const std::vector<Update>& updates) {
  run_all([&](Backend& b, std::span<const View> p, std::span<const View> g,
              std::span<const View> s1, std::span<const View> s2,
              std::span<const View> s3) { b.adam_step(step, p, g, s1, s2, s3); },
          updates);
}

}  // namespace ember::optim::detail
