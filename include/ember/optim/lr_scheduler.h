// ember/optim/lr_scheduler.h: learning-rate schedules (torch.optim.lr_scheduler). Call step()
// once per epoch (or per batch for OneCycleLR) after optimizer.step().
#pragma once

#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  // The learning rate of group g at epoch `epoch` (closed form).
  virtual double lr_at(size_t g, int64_t epoch) const = 0;
  // Sets everything for `epoch` (schedules that also move momentum override this).
  virtual void apply(int64_t epoch);
  // Call at the end of a derived constructor: applies epoch 0, as PyTorch's constructor does.
  void initialize();

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;

 private:
  int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;
};

// lr = base * gamma^(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base * gamma^(number of milestones <= epoch)
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr = base * gamma^epoch
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;

 private:
  double gamma_;
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Warm-up: the factor goes linearly from start_factor to end_factor over total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;

 private:
  double start_, end_;
  int64_t total_;
};

struct OneCycleOptions {
  double max_lr;
  int64_t total_steps;
  double pct_start = 0.3;
  bool cos_anneal = true;  // false: linear
  double div_factor = 25;
  double final_div_factor = 1e4;
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  bool three_phase = false;
};

// The one-cycle policy (Smith & Topin): warm up to max_lr, then anneal far below the start,
// moving momentum the opposite way. Step once per batch; total_steps steps in all.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, OneCycleOptions options);

 protected:
  double lr_at(size_t g, int64_t epoch) const override;
  void apply(int64_t epoch) override;

 private:
  struct Phase {
    double end_step;
    double start_lr, end_lr, start_momentum, end_momentum;
  };
  double anneal(double start, double end, double pct) const;
  // (lr, momentum) at step `epoch`.
  std::pair<double, double> at(int64_t epoch) const;

  OneCycleOptions options_;
  std::vector<Phase> phases_;
};

}  // namespace ember::optim
