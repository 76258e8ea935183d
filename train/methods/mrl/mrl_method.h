// MRL (docs/methods/mrl.md; Hu et al., "Learning Cross-Modal Retrieval with Noisy Labels", CVPR 2021; official
// code penghu-cs/MRL `main_noisy.py`), supervised cross-modal retrieval under label noise, as a train::Method on
// MRL's own networks: the MLP+prototype model (models/mlp_prototype.h) with MRL's bare-norm output.
//
//   each batch:  C's columns unit length (MRL renormalises at the top of every batch; rematch right after each
//                update, the same iterates), z = f(x), logits z·C,
//                L = β Σ_v L_r(logits_v, noisy labels_v) + (1 − β) L_c(z_v, z_t)          (mrl_losses.h)
//                (--label_loss ce: cross-entropy on z·C in place of L_r)
//   Adam(β = (0.5, 0.999)) over C and both networks, learning rate per epoch from --ls.
// Model selection: the mean of the two mAPs on the validation split (MRL `main_noisy.py: test`).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "models/mlp_prototype.h"
#include "train/data/labeled_dataset.h"
#include "train/methods/method.h"
#include "train/methods/mrl/mrl_options.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// MRL's learning rate in epoch `epoch` (0-based) of `num_epochs`: `lr_schedu.step(epoch)` runs after epoch
// `epoch` trains, so epoch e trains at the closed form of max(e − 1, 0) (CosineAnnealingLR, eta_min 0, or
// MultiStepLR([200, 400], 0.1)).
double mrl_learning_rate(double base, int64_t epoch, int64_t num_epochs, MrlSchedule schedule);

class MrlMethod : public Method {
 public:
  MrlMethod(const CommonOptions& common, const MrlOptions& options, data::LabeledDataset data, std::ostream& log);

  std::string name() const override { return "mrl"; }
  int64_t num_epochs() const override { return common_.num_epochs; }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  void end_epoch(int64_t epoch) override;
  EpochInfo current_epoch() const override { return info_; }
  EvalResult validate() override;
  EvalResult test() override;
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {&shuffle_gen_}; }
  double learning_rate() const override { return optimizer_->lr(); }
  // noisy_labels.npy: the training labels actually used (data::save_label_noise).
  void write_run_files(const std::string& dir) override;

  const data::NoisyLabels& noisy_labels() const { return noisy_; }
  models::MlpPrototypeModel& model() { return *model_; }

 private:
  EvalResult evaluate(const data::LabeledSplit& split, const std::string& name);

  CommonOptions common_;
  MrlOptions options_;
  Device device_;
  data::LabeledDataset data_;
  data::NoisyLabels noisy_;
  std::ostream& log_;
  int64_t num_classes_ = 0;
  Tensor train_images_, train_texts_;         // on the device
  Tensor one_hot_v_, one_hot_t_;              // [N, K] noisy labels of each view
  std::unique_ptr<models::MlpPrototypeModel> model_;
  std::unique_ptr<nn::Adam> optimizer_;
  Generator shuffle_gen_;

  EpochInfo info_;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;                // the epoch's permutation of the training rows
};

}  // namespace rematch::train
