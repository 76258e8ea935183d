// DSCMR (docs/methods/dscmr.md; Zhen et al., "Deep Supervised Cross-Modal Retrieval", CVPR 2019; official code
// penghu-cs/DSCMR `main.py`, `model.py`, `train_model.py`), a supervised cross-modal retrieval baseline that UOT-RCL
// runs under label noise, as a train::Method on its own networks (models/dscmr_model.h):
//
//   each batch (in file order: the official loader does not shuffle):
//     u, v = the common-space features, ŷ = their shared classifier's outputs,
//     L = term1 (label space) + α term2 (common space) + β term3 (invariance)          (dscmr_losses.h)
//     with the batch's noisy one-hot labels (image labels for term1/term2 of u, text labels for v)
//   Adam(lr 1e-4, betas (0.5, 0.999)), a constant learning rate.
// Model selection: the mean of the two mAPs on the validation split (UOT-RCL's protocol; the official code picks
// the epoch of the best test mAP and has no validation split: docs/methods/dscmr.md §4).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "models/dscmr_model.h"
#include "train/data/labeled_dataset.h"
#include "train/methods/dscmr/dscmr_options.h"
#include "train/methods/method.h"
#include "train/methods/train_config.h"

namespace rematch::train {

class DscmrMethod : public Method {
 public:
  DscmrMethod(const CommonOptions& common, const DscmrOptions& options, data::LabeledDataset data,
              std::ostream& log);

  std::string name() const override { return "dscmr"; }
  int64_t num_epochs() const override { return common_.num_epochs; }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  void end_epoch(int64_t epoch) override;
  EpochInfo current_epoch() const override { return info_; }
  EvalResult validate() override;
  EvalResult test() override;
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {}; }  // nothing draws after the initialisation
  double learning_rate() const override { return optimizer_->lr(); }
  void write_run_files(const std::string& dir) override;

  const data::NoisyLabels& noisy_labels() const { return noisy_; }
  models::DscmrModel& model() { return *model_; }

 private:
  EvalResult evaluate(const data::LabeledSplit& split, const std::string& name);
  EpochInfo epoch_info() const;

  CommonOptions common_;
  DscmrOptions options_;
  Device device_;
  data::LabeledDataset data_;
  data::NoisyLabels noisy_;
  std::ostream& log_;
  int64_t num_classes_ = 0;
  Tensor train_images_, train_texts_;  // on the device
  Tensor one_hot_v_, one_hot_t_;       // [N, K] noisy labels of each view
  std::unique_ptr<models::DscmrModel> model_;
  std::unique_ptr<nn::Adam> optimizer_;

  EpochInfo info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
