// ember/optim/grad_scaler.h: loss scaling for float16 training, as torch.amp.GradScaler --
// scale the loss before backward so small float16 gradients do not flush to zero, unscale the
// gradients before the step, skip steps whose gradients hold inf or NaN, and adapt the scale:
//
//   amp::GradScaler scaler;
//   scaler.scale(loss).backward();
//   scaler.step(optimizer);  // unscale_ + step, skipped on inf/NaN gradients
//   scaler.update();
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "ember/optim/optimizer.h"

namespace ember::amp {

// PyTorch's defaults.
struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * scale (outputs unchanged when disabled).
  Tensor scale(const Tensor& outputs) const;
  // Divides the gradients of `optimizer`'s parameters by the scale, once per step, and records
  // whether any of them is inf or NaN.
  void unscale_(optim::Optimizer& optimizer);
  // unscale_ (unless done), then optimizer.step() unless a gradient was inf or NaN; returns
  // whether the step ran.
  bool step(optim::Optimizer& optimizer);
  // After the steps of an iteration: backs the scale off after inf/NaN gradients, grows it after
  // growth_interval clean steps in a row; new_scale sets it outright.
  void update(std::optional<double> new_scale = std::nullopt);

  double get_scale() const { return options_.enabled ? scale_ : 1.0; }
  double get_growth_factor() const { return options_.growth_factor; }
  double get_backoff_factor() const { return options_.backoff_factor; }
  int64_t get_growth_interval() const { return options_.growth_interval; }
  bool is_enabled() const { return options_.enabled; }

  // "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" as 0-dim
  // float64 tensors (PyTorch's keys), for checkpoints; empty when disabled.
  nn::StateDict state_dict() const;
  void load_state_dict(const nn::StateDict& state);

 private:
  enum class Stage : uint8_t { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    bool found_inf = false;
  };
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  std::unordered_map<const optim::Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace ember::amp
