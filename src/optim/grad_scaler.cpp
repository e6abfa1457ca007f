// optim/grad_scaler.cpp: GradScaler -- scaling, unscaling with the inf/NaN check, step skipping
// and the scale's growth and backoff, with PyTorch's rules and error messages.
#include "ember/optim/grad_scaler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ember/ops.h"

namespace ember::amp {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {
  EMBER_CHECK(!options.enabled || options.init_scale > 0,
              "[GradScaler] init_scale must be > 0, got ", options.init_scale);
  EMBER_CHECK(options.growth_factor > 1, "[GradScaler] The growth factor must be > 1.0, got ",
              options.growth_factor);
  EMBER_CHECK(options.backoff_factor > 0 && options.backoff_factor < 1,
              "[GradScaler] The backoff factor must be < 1.0 and > 0, got ",
              options.backoff_factor);
  EMBER_CHECK(options.growth_interval > 0,
              "[GradScaler] growth_interval must be a positive integer, got ",
              options.growth_interval);
}

Tensor GradScaler::scale(const Tensor& outputs) const {
  if (!options_.enabled) return outputs;
  return outputs * scale_;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  PerOptimizer& st = per_optimizer_[&optimizer];
  EMBER_CHECK(st.stage != Stage::Unscaled,
              "[GradScaler] unscale_() has already been called on this optimizer since the last "
              "update()");
  EMBER_CHECK(st.stage != Stage::Stepped, "[GradScaler] unscale_() is being called after step()");
  const double inv = 1.0 / scale_;
  // One float64 sum of |g| per device: inf or NaN in any gradient makes it non-finite (a sum of
  // finite float32 magnitudes cannot overflow float64). One synchronization per device.
  std::vector<std::pair<Device, Tensor>> totals;
  for (size_t g = 0; g < optimizer.num_param_groups(); ++g) {
    for (const Tensor& p : optimizer.params(g)) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      EMBER_CHECK_KIND(DType, grad.dtype() != kFloat16,
                       "[GradScaler] Attempting to unscale FP16 gradients: keep the parameters in "
                       "float32 and let ember::autocast compute in float16");
      grad.mul_(inv);
      Tensor s = sum(abs(grad), kFloat64);
      auto it = std::find_if(totals.begin(), totals.end(),
                             [&](const auto& e) { return e.first == grad.device(); });
      if (it == totals.end())
        totals.emplace_back(grad.device(), s);
      else
        it->second = it->second + s;
    }
  }
  bool found = false;
  for (const auto& [device, total] : totals) found |= !std::isfinite(total.item<double>());
  st.found_inf = found;
  st.stage = Stage::Unscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  PerOptimizer& st = per_optimizer_[&optimizer];
  EMBER_CHECK(st.stage != Stage::Stepped,
              "[GradScaler] step() has already been called since the last update()");
  if (st.stage == Stage::Ready) unscale_(optimizer);
  PerOptimizer& now = per_optimizer_[&optimizer];
  const bool run = !now.found_inf;
  if (run) optimizer.step();
  now.stage = Stage::Stepped;
  return run;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!options_.enabled) return;
  if (new_scale) {
    EMBER_CHECK(*new_scale > 0, "[GradScaler] new_scale must be > 0, got ", *new_scale);
    scale_ = *new_scale;
  } else {
    EMBER_CHECK(!per_optimizer_.empty(),
                "[GradScaler] No inf checks were recorded prior to update.");
    bool found = false;
    for (const auto& [opt, st] : per_optimizer_) found |= st.found_inf;
    if (found) {
      scale_ *= options_.backoff_factor;
      growth_tracker_ = 0;
    } else if (++growth_tracker_ == options_.growth_interval) {
      scale_ *= options_.growth_factor;
      growth_tracker_ = 0;
    }
  }
  per_optimizer_.clear();
}

nn::StateDict GradScaler::state_dict() const {
  if (!options_.enabled) return {};
  auto value = [](double v) { return scalar_tensor(v, {.dtype = kFloat64}); };
  return {{"scale", value(scale_)},
          {"growth_factor", value(options_.growth_factor)},
          {"backoff_factor", value(options_.backoff_factor)},
          {"growth_interval", value(static_cast<double>(options_.growth_interval))},
          {"_growth_tracker", value(static_cast<double>(growth_tracker_))}};
}

void GradScaler::load_state_dict(const nn::StateDict& state) {
  EMBER_CHECK(options_.enabled, "[GradScaler] load_state_dict() on a disabled GradScaler");
  EMBER_CHECK(!state.empty(),
              "[GradScaler] The source state dict is empty, possibly because it was saved from "
              "a disabled instance of GradScaler.");
  auto get = [&](const std::string& key) {
    for (const auto& [name, t] : state)
      if (name == key) return t.to(kFloat64).item<double>();
    EMBER_THROW(Value, "[GradScaler] load_state_dict: missing \"", key, "\"");
  };
  scale_ = get("scale");
  options_.growth_factor = get("growth_factor");
  options_.backoff_factor = get("backoff_factor");
  options_.growth_interval = static_cast<int64_t>(get("growth_interval"));
  growth_tracker_ = static_cast<int64_t>(get("_growth_tracker"));
}

}  // namespace ember::amp
