// Learning-rate schedules over epochs: StepLR, MultiStepLR, CosineAnnealingLR. Each is evaluated in
// PyTorch's closed form (`_get_closed_form_lr`, torch 1.13) at the current epoch rather than by PyTorch's
// default chained updates, which multiply the previous lr and so round differently: the closed form is
// what the SGRAF-lineage code computes by hand (lr = learning_rate · 0.1^(epoch // lr_update)), and it makes
// the whole schedule state two numbers per group, so a resumed run gets bit-identical rates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/optim.h"

namespace rematch::nn {

struct ScheduleState {
  std::string kind;
  int64_t last_epoch = 0;
  std::vector<double> base_lrs;  // per parameter group
};

class LRSchedule {
 public:
  virtual ~LRSchedule() = default;
  LRSchedule(const LRSchedule&) = delete;
  LRSchedule& operator=(const LRSchedule&) = delete;

  // Advances one epoch and sets every group's lr to the schedule's value there.
  void step();
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  // Every group's lr at `epoch` (epoch 0 gives the base lrs, as in PyTorch).
  std::vector<double> lrs_at(int64_t epoch) const;

  ScheduleState state() const;
  // Restores the epoch and base lrs and sets the optimizer's lrs to the schedule's value at that epoch.
  void load_state(const ScheduleState& state);
  virtual const char* kind() const = 0;

 protected:
  // Takes the optimizer's current lrs as the base lrs; the schedule is at epoch 0. The optimizer must
  // outlive the schedule.
  explicit LRSchedule(Optimizer& optimizer);
  virtual double lr_at(double base_lr, int64_t epoch) const = 0;

 private:
  void apply();
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = 0;
};

// base_lr · gamma^(epoch // step_size): × gamma every step_size epochs.
class StepLR : public LRSchedule {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  const char* kind() const override { return "StepLR"; }

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// base_lr · gamma^(number of milestones <= epoch); a repeated milestone counts as often as it is listed.
class MultiStepLR : public LRSchedule {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);
  const char* kind() const override { return "MultiStepLR"; }

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// eta_min + (base_lr - eta_min) · (1 + cos(pi · epoch / T_max)) / 2.
class CosineAnnealingLR : public LRSchedule {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0);
  const char* kind() const override { return "CosineAnnealingLR"; }

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace rematch::nn
