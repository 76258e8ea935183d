// The schedules' closed forms, written in the order torch/optim/lr_scheduler.py evaluates them (Python's
// `**` on floats and math.cos are the C library's pow and cos, as here).
#include "nn/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace rematch::nn {

constexpr double kPi = 3.141592653589793238462643383279502884;  // math.pi

LRSchedule::LRSchedule(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer.group_count(); ++g) base_lrs_.push_back(optimizer.lr(g));
}

std::vector<double> LRSchedule::lrs_at(int64_t epoch) const {
  REMATCH_CHECK(epoch >= 0, kind(), ": epoch must be >= 0, got ", epoch);
  if (epoch == 0) return base_lrs_;
  std::vector<double> out;
  for (double base : base_lrs_) out.push_back(lr_at(base, epoch));
  return out;
}

void LRSchedule::apply() {
  const std::vector<double> lrs = lrs_at(last_epoch_);
  for (size_t g = 0; g < lrs.size(); ++g) optimizer_.set_lr(g, lrs[g]);
}

void LRSchedule::step() {
  ++last_epoch_;
  apply();
}

ScheduleState LRSchedule::state() const { return {kind(), last_epoch_, base_lrs_}; }

void LRSchedule::load_state(const ScheduleState& state) {
  REMATCH_CHECK(state.kind == kind(), kind(), ".load_state: the state belongs to a ", state.kind, " schedule");
  REMATCH_CHECK(state.base_lrs.size() == optimizer_.group_count(), kind(), ".load_state: the state has ",
                state.base_lrs.size(), " base lrs, the optimizer ", optimizer_.group_count(), " parameter groups");
  REMATCH_CHECK(state.last_epoch >= 0, kind(), ".load_state: invalid epoch ", state.last_epoch);
  for (double lr : state.base_lrs)
    REMATCH_CHECK(std::isfinite(lr) && lr >= 0, kind(), ".load_state: invalid base lr ", lr);
  base_lrs_ = state.base_lrs;
  last_epoch_ = state.last_epoch;
  apply();
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRSchedule(optimizer), step_size_(step_size), gamma_(gamma) {
  REMATCH_CHECK(step_size > 0, "StepLR: step_size must be > 0, got ", step_size);
  REMATCH_CHECK(std::isfinite(gamma) && gamma >= 0, "StepLR: invalid gamma ", gamma);
}

double StepLR::lr_at(double base_lr, int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRSchedule(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  REMATCH_CHECK(std::isfinite(gamma) && gamma >= 0, "MultiStepLR: invalid gamma ", gamma);
  std::sort(milestones_.begin(), milestones_.end());
}

double MultiStepLR::lr_at(double base_lr, int64_t epoch) const {
  // bisect_right: how many milestones are <= epoch.
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr * std::pow(gamma_, static_cast<double>(passed));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LRSchedule(optimizer), t_max_(t_max), eta_min_(eta_min) {
  REMATCH_CHECK(t_max > 0, "CosineAnnealingLR: T_max must be > 0, got ", t_max);
  REMATCH_CHECK(std::isfinite(eta_min) && eta_min >= 0, "CosineAnnealingLR: invalid eta_min ", eta_min);
}

double CosineAnnealingLR::lr_at(double base_lr, int64_t epoch) const {
  const double cosine = std::cos(kPi * static_cast<double>(epoch) / static_cast<double>(t_max_));
  return eta_min_ + (base_lr - eta_min_) * (1 + cosine) / 2;
}

}  // namespace rematch::nn
