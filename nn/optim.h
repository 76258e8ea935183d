// Optimizers: SGD (momentum, dampening, weight decay, Nesterov), Adam (weight decay as an L2 term added to
// the gradient) and AdamW (decoupled weight decay). Each update follows PyTorch 1.13's single-tensor path
// (torch/optim/{sgd,adam,adamw}.py) formula for formula and in the same order of operations, so a run agrees
// with PyTorch up to single roundings (ATen fuses some multiply-adds; in float64 that is ~1e-16). Updates are written with kernels:: primitives, so they run on the
// parameters' device and record no graph; parameters are updated in place (their handles stay valid).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/module.h"

namespace rematch::nn {

// Parameters that share hyperparameters; a group's lr and weight_decay override the optimizer's own.
struct ParamGroup {
  std::vector<Tensor> params;
  std::optional<double> lr;
  std::optional<double> weight_decay;
};

// What an optimizer constructor takes: a plain parameter list (one group) or explicit groups.
// Implicit on purpose: Adam(model.parameters(), 1e-3) and Adam(std::vector<ParamGroup>{...}, 1e-3) both read well.
struct ParamGroups {
  ParamGroups(std::vector<Tensor> params) : groups{ParamGroup{std::move(params), {}, {}}} {}
  ParamGroups(std::vector<ParamGroup> g) : groups(std::move(g)) {}
  std::vector<ParamGroup> groups;
};

// Everything an optimizer needs to continue exactly: its kind, each group's current lr (a schedule or
// set_lr may have moved it), each parameter's update count, and its buffers named "<index>.<buffer>"
// ("3.exp_avg"). Parameters are numbered 0, 1, ... across the groups in order, as in PyTorch's
// optimizer.state_dict().
struct OptimizerState {
  std::string kind;
  std::vector<double> lrs;
  std::vector<int64_t> steps;
  NamedTensors buffers;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient; a parameter without one is skipped (its step count
  // does not advance), as in PyTorch.
  void step();
  // Drops every parameter's .grad (PyTorch's set_to_none).
  void zero_grad();

  size_t group_count() const { return groups_.size(); }
  // The group with its effective lr and weight_decay filled in.
  const ParamGroup& group(size_t i) const;
  double lr(size_t group = 0) const;
  void set_lr(double lr);                 // every group
  void set_lr(size_t group, double lr);
  // Parameters in the numbering of OptimizerState, and how often each has been updated.
  std::vector<Tensor> params() const;
  int64_t step_count(size_t param_index) const;

  // Buffers are the optimizer's own tensors (a later step replaces rather than mutates them), so a returned
  // state stays a snapshot.
  OptimizerState state_dict() const;
  // Checks kind, group and parameter counts, buffer names and shapes (every problem is named), then copies
  // the buffers to each parameter's dtype and device and sets the lrs and step counts.
  void load_state_dict(const OptimizerState& state);

  virtual const char* kind() const = 0;

 protected:
  struct ParamState {
    int64_t step = 0;
    NamedTensors buffers;
    // The buffer called `name`, or an undefined tensor before the first update created it.
    Tensor get(const std::string& name) const;
    void set(const std::string& name, Tensor value);
  };

  Optimizer(ParamGroups groups, double lr, double weight_decay);
  // Updates `param` in place from `grad`; `state.step` has already been advanced for this update.
  virtual void update(const Tensor& param, const Tensor& grad, ParamState& state, double lr,
                      double weight_decay) = 0;
  // The buffers every updated parameter holds (load_state_dict requires exactly these).
  virtual std::vector<std::string> buffer_names() const = 0;

 private:
  std::vector<ParamGroup> groups_;
  std::vector<ParamState> states_;  // per parameter, in OptimizerState numbering
};

// torch.optim.SGD: d = g + wd·p; buf = momentum·buf + (1 - dampening)·d (buf = d on the first step);
// d = nesterov ? d + momentum·buf : buf; p = p - lr·d.
class SGD : public Optimizer {
 public:
  SGD(ParamGroups params, double lr, double momentum = 0, double dampening = 0, double weight_decay = 0,
      bool nesterov = false);
  const char* kind() const override { return "SGD"; }

 protected:
  void update(const Tensor& param, const Tensor& grad, ParamState& state, double lr, double weight_decay) override;
  std::vector<std::string> buffer_names() const override;

 private:
  double momentum_, dampening_;
  bool nesterov_;
};

struct AdamBetas {
  double beta1 = 0.9;
  double beta2 = 0.999;
};

// torch.optim.Adam (amsgrad off) with weight decay added to the gradient (L2), and torch.optim.AdamW, which
// instead shrinks the parameter by (1 - lr·wd) before the moment update.
class Adam : public Optimizer {
 public:
  Adam(ParamGroups params, double lr = 1e-3, AdamBetas betas = {}, double eps = 1e-8, double weight_decay = 0);
  const char* kind() const override { return decoupled_ ? "AdamW" : "Adam"; }

 protected:
  Adam(ParamGroups params, double lr, AdamBetas betas, double eps, double weight_decay, bool decoupled);
  void update(const Tensor& param, const Tensor& grad, ParamState& state, double lr, double weight_decay) override;
  std::vector<std::string> buffer_names() const override;

 private:
  AdamBetas betas_;
  double eps_;
  bool decoupled_;
};

class AdamW : public Adam {
 public:
  AdamW(ParamGroups params, double lr = 1e-3, AdamBetas betas = {}, double eps = 1e-8, double weight_decay = 1e-2)
      : Adam(std::move(params), lr, betas, eps, weight_decay, true) {}
};

}  // namespace rematch::nn
