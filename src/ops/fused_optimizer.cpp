// ops/fused_optimizer.cpp: hands parameter updates to the backends' fused sgd_step / adam_step.
#include "ops/fused_optimizer.h"

#include <algorithm>
#include <optional>

#include "core/backend.h"
#include "ember/ops.h"

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

DType state_dtype(const char* op, const Tensor& param, std::optional<DType> requested) {
  if (!requested || *requested == param.dtype()) return param.dtype();
  EMBER_CHECK_KIND(DType, is_reduced_float(param.dtype()) && *requested == kFloat32, "[", op,
                   "] state_dtype ", *requested, " for a ", param.dtype(),
                   " parameter: state may differ from its parameter only as float32 state for "
                   "float16 or bfloat16 parameters");
  return *requested;
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

// float16 and bfloat16 parameters (and their state, which has the parameter's dtype) are updated
// in float32: the backend steps float32 copies, and the results are rounded back once per step,
// as a fused kernel loading 16-bit values into float registers would.
template <class Call>
void run_all(const Call& call, const std::vector<Update>& updates);

template <class Call>
bool run_reduced_in_float(const Call& call, const std::vector<Update>& updates) {
  // The common case (no 16-bit parameter) costs one pass and no copies.
  if (std::none_of(updates.begin(), updates.end(),
                   [](const Update& u) { return is_reduced_float(u.param.dtype()); }))
    return false;
  std::vector<Update> wide, rest;
  std::vector<const Update*> origin;
  for (const Update& u : updates) {
    if (!is_reduced_float(u.param.dtype())) {
      rest.push_back(u);
      continue;
    }
    Update w;
    w.param = u.param.detach().to(kFloat32);
    w.grad = u.grad.to(kFloat32);
    for (int k = 0; k < 3; ++k)
      if (u.state[k].defined()) w.state[k] = u.state[k].to(kFloat32);
    wide.push_back(std::move(w));
    origin.push_back(&u);
  }
  run_all(call, rest);
  run_all(call, wide);
  for (size_t i = 0; i < wide.size(); ++i) {
    origin[i]->param.detach().copy_(wide[i].param);
    for (int k = 0; k < 3; ++k) {
      Tensor state = origin[i]->state[k];  // float32 state was updated in place
      if (state.defined() && !state.is_same(wide[i].state[k])) state.copy_(wide[i].state[k]);
    }
  }
  return true;
}

template <class Call>
void run_all(const Call& call, const std::vector<Update>& updates) {
  if (updates.empty()) return;
  if (run_reduced_in_float(call, updates)) return;
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
