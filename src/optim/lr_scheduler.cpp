// optim/lr_scheduler.cpp: learning-rate schedules in closed form (equal to PyTorch's chained
// updates when nothing else changes the learning rate).
#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ember/error.h"

namespace ember::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer.num_param_groups(); ++g) base_lrs_.push_back(optimizer.lr(g));
}

void LRScheduler::initialize() {
  step();
}

void LRScheduler::step() {
  ++last_epoch_;
  apply(last_epoch_);
  last_lr_.clear();
  for (size_t g = 0; g < optimizer_.num_param_groups(); ++g) last_lr_.push_back(optimizer_.lr(g));
}

void LRScheduler::apply(int64_t epoch) {
  for (size_t g = 0; g < optimizer_.num_param_groups(); ++g) optimizer_.set_lr(g, lr_at(g, epoch));
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size > 0, "[StepLR] step_size must be positive, got ", step_size);
  initialize();
}
double StepLR::lr_at(size_t g, int64_t epoch) const {
  return base_lrs_[g] * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initialize();
}
double MultiStepLR::lr_at(size_t g, int64_t epoch) const {
  auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lrs_[g] * std::pow(gamma_, static_cast<double>(passed));
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  initialize();
}
double ExponentialLR::lr_at(size_t g, int64_t epoch) const {
  return base_lrs_[g] * std::pow(gamma_, static_cast<double>(epoch));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK(T_max > 0, "[CosineAnnealingLR] T_max must be positive, got ", T_max);
  initialize();
}
double CosineAnnealingLR::lr_at(size_t g, int64_t epoch) const {
  double c = std::cos(std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(t_max_));
  return eta_min_ + (base_lrs_[g] - eta_min_) * (1 + c) / 2;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer), start_(start_factor), end_(end_factor), total_(total_iters) {
  EMBER_CHECK(start_factor > 0 && start_factor <= 1,
              "[LinearLR] Starting multiplicative factor "
              "expected to be greater than 0 and less or equal to 1, got ",
              start_factor);
  EMBER_CHECK(end_factor >= 0 && end_factor <= 1,
              "[LinearLR] Ending multiplicative factor "
              "expected to be between 0 and 1, got ",
              end_factor);
  EMBER_CHECK(total_iters > 0, "[LinearLR] total_iters must be positive, got ", total_iters);
  initialize();
}
double LinearLR::lr_at(size_t g, int64_t epoch) const {
  double t = static_cast<double>(std::min(epoch, total_)) / static_cast<double>(total_);
  return base_lrs_[g] * (start_ + (end_ - start_) * t);
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, OneCycleOptions o)
    : LRScheduler(optimizer), options_(o) {
  EMBER_CHECK(o.total_steps > 0, "[OneCycleLR] Expected positive integer total_steps, but got ",
              o.total_steps);
  EMBER_CHECK(o.pct_start >= 0 && o.pct_start <= 1,
              "[OneCycleLR] Expected float between 0 and 1 "
              "pct_start, but got ",
              o.pct_start);
  double initial = o.max_lr / o.div_factor, min_lr = initial / o.final_div_factor;
  double total = static_cast<double>(o.total_steps);
  if (o.three_phase) {
    phases_ = {{o.pct_start * total - 1, initial, o.max_lr, o.max_momentum, o.base_momentum},
               {2 * o.pct_start * total - 2, o.max_lr, initial, o.base_momentum, o.max_momentum},
               {total - 1, initial, min_lr, o.max_momentum, o.max_momentum}};
  } else {
    phases_ = {{o.pct_start * total - 1, initial, o.max_lr, o.max_momentum, o.base_momentum},
               {total - 1, o.max_lr, min_lr, o.base_momentum, o.max_momentum}};
  }
  for (auto& lr : base_lrs_) lr = initial;
  initialize();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (!options_.cos_anneal) return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}

std::pair<double, double> OneCycleLR::at(int64_t epoch) const {
  // As PyTorch: the constructor's step 0 plus total_steps step() calls, one per batch, are
  // allowed; only a step past total_steps is an error.
  EMBER_CHECK(epoch <= options_.total_steps, "[OneCycleLR] Tried to step ", epoch,
              " times. The specified number of total steps is ", options_.total_steps);
  double step = static_cast<double>(epoch), start_step = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (step <= p.end_step || i + 1 == phases_.size()) {
      double pct = p.end_step == start_step ? 1.0 : (step - start_step) / (p.end_step - start_step);
      return {anneal(p.start_lr, p.end_lr, pct), anneal(p.start_momentum, p.end_momentum, pct)};
    }
    start_step = p.end_step;
  }
  return {phases_.back().end_lr, phases_.back().end_momentum};
}

double OneCycleLR::lr_at(size_t, int64_t epoch) const {
  return at(epoch).first;
}

void OneCycleLR::apply(int64_t epoch) {
  auto [lr, momentum] = at(epoch);
  for (size_t g = 0; g < optimizer_.num_param_groups(); ++g) {
    optimizer_.set_lr(g, lr);
    if (options_.cycle_momentum) optimizer_.set_momentum(g, momentum);
  }
}

}  // namespace ember::optim
