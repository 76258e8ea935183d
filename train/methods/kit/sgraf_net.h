// One SGR or SAF network as a training method holds it (docs/backbones.md): the model, its optimizer and its part
// of a run's checkpoint. A method holds one per network it trains, each on equal terms (NCR's nets A and B), and
// makes a new one when its training starts over (CRCL's rounds). A step's update of a net is the pairs kit's
// (pairs_kit.h: it knows whether the step's scores were shared among ranks).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "models/sgraf_model.h"
#include "nn/nn.h"
#include "train/run/training_state.h"

namespace rematch::train {

// The optimizer of a net: Adam at `learning_rate`, or with `adamw_weight_decay` AdamW (CRCL's `CRCL.py`:
// torch.optim.AdamW(params, lr=opt.learning_rate), betas and eps PyTorch's defaults).
struct NetOptimizer {
  double learning_rate = 0;
  std::optional<double> adamw_weight_decay;
};

class SgrafNet {
 public:
  // A model of `config` in `dtype`, its initial weights drawn from `gen` (and later its dropout masks: `gen` must
  // outlive the net), moved to `device`, and a new optimizer over its parameters.
  SgrafNet(const models::SgrafConfig& config, DType dtype, Device device, Generator& gen,
           const NetOptimizer& optimizer);

  models::SgrafModel& model() { return *model_; }
  const models::SgrafModel& model() const { return *model_; }
  nn::Adam& optimizer() { return *optimizer_; }
  double lr() const { return optimizer_->lr(); }
  void set_lr(double lr) { optimizer_->set_lr(lr); }

  // The model's tensors under `model_prefix` ("model.") and the optimizer's under `optim_prefix` ("optim."); load
  // checks both against this net (names, shapes, the optimizer's kind).
  void save(TrainingState& state, const std::string& model_prefix, const std::string& optim_prefix) const;
  void load(const TrainingState& state, const std::string& model_prefix, const std::string& optim_prefix);

 private:
  std::unique_ptr<models::SgrafModel> model_;
  std::unique_ptr<nn::Adam> optimizer_;
};

// The step decay of the methods' learning rate (docs/methods/l2rm.md §1.1, docs/methods/rcl.md §2.2):
// base·0.1^⌊(epoch − warmup)/lr_update⌋, the base rate during the warm-up and when lr_update <= 0.
double step_decay_lr(double base, int64_t epoch, int64_t warmup, int64_t lr_update);

}  // namespace rematch::train
