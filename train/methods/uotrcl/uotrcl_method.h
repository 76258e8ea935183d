// UOT-RCL (docs/methods/uotrcl.md; "A Unified Optimal Transport Framework for Cross-Modal Retrieval with Noisy
// Labels"), supervised cross-modal retrieval under label noise, as a train::Method on the MLP+prototype model
// (models/mlp_prototype.h). The paper has no public code; the loop is docs/methods/uotrcl.md §4.3 and every open
// choice, with the study that fixed the unpublished numbers, is in docs/uotrcl-choices.md.
//
//   epochs [0, warmup):      L_CE with the noisy labels (Eq. 2)
//   each later epoch, first: a no-grad pass over the training set; JSD, confident set G, cross-modal consistent
//                            cost C_S, partial OT with mass s_e → corrected labels Ŷ (Eqs. 4–14, per epoch), and
//                            the target moving average (Eq. 9; per epoch, or per batch with --target_update)
//   each batch:              L_PLC with Ŷ (Eq. 15) + λ·L_BHG (Eq. 18) under the B×B relation OT plan (Eqs. 16–17)
//                            against the current embeddings of G
// Adam (lr 1e-4, PyTorch's betas), constant learning rate unless --lr_update; prototypes renormalised after
// every update.
// Model selection: the mean of the two mAPs on the validation split (MRL's protocol, docs/methods/uotrcl.md §4.4).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "models/mlp_prototype.h"
#include "train/data/labeled_dataset.h"
#include "train/methods/method.h"
#include "train/methods/train_config.h"
#include "train/methods/uotrcl/label_correction.h"
#include "train/methods/uotrcl/uotrcl_losses.h"
#include "train/methods/uotrcl/uotrcl_options.h"

namespace rematch::train {

class UotrclMethod : public Method {
 public:
  // `data` already loaded (data::load_labeled); the noisy labels are drawn (or read from --noise_file) here.
  UotrclMethod(const CommonOptions& common, const UotrclOptions& options, data::LabeledDataset data,
               std::ostream& log);

  std::string name() const override { return "uotrcl"; }
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
  // plots/corrected_labels.png: the confusion matrix of the corrected labels against the clean ones.
  void write_plots(const std::string& dir, int64_t epoch) override;
  std::string results_notes() const override;
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;
  // The corrected labels' accuracy against the clean ones: on the epoch line and plotted.
  std::vector<EpochStat> epoch_stats() const override { return {{"label_accuracy", 3, true, true, false}}; }
  // noisy_labels.npy: the training labels actually used (data::save_label_noise).
  void write_run_files(const std::string& dir) override;

  // The training labels in use (for the run folder: data::save_label_noise), and the clean ones.
  const data::NoisyLabels& noisy_labels() const { return noisy_; }
  const std::vector<int64_t>& clean_labels() const { return data_.train.image_labels; }
  // Ŷ of the epoch in progress [N, K] (undefined during warm-up), the targets y [N, K], the confident set.
  const Tensor& corrected_labels() const { return corrected_; }
  const Tensor& targets() const { return targets_; }
  const std::vector<int64_t>& confident() const { return confident_; }
  models::MlpPrototypeModel& model() { return *model_; }
  const UotrclOptions& options() const { return options_; }

 private:
  struct Embeddings {
    Tensor z_v, z_t;
  };
  // No-grad embeddings of a split, eval_batch rows at a time.
  Embeddings embed(const data::LabeledSplit& split);
  EvalResult evaluate(const data::LabeledSplit& split, const std::string& name);
  void correct_labels(int64_t epoch);
  Tensor batch_rows(int64_t step) const;  // int64 [b] training rows of `step` on the device

  CommonOptions common_;
  UotrclOptions options_;
  data::LabelNoise noise_mode_;
  uint64_t noise_seed_;                   // --noise_seed, else --seed
  int64_t knn_;                           // 𝒦 (--knn; 5 % of the training set when -1)
  Device device_;
  uotrcl::LabelCorrectionOptions label_correction_;
  uotrcl::RelationOtOptions relation_;
  data::LabeledDataset data_;
  data::NoisyLabels noisy_;
  std::ostream& log_;
  int64_t num_classes_ = 0;
  bool plot_left_out_said_ = false;  // write_plots said once that the confusion matrix has too many classes
  Tensor train_images_, train_texts_;     // on the device
  Tensor noisy_one_hot_v_, noisy_one_hot_t_;  // [N, K], warm-up targets (Eq. 2)
  std::unique_ptr<models::MlpPrototypeModel> model_;
  std::unique_ptr<nn::Adam> optimizer_;
  Generator shuffle_gen_;

  // The state begin_epoch() builds (saved for exact resumption).
  EpochInfo info_;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;            // the epoch's permutation of the training rows
  Tensor targets_;                        // y [N, K] (Eq. 9), on the device
  Tensor corrected_;                      // Ŷ [N, K] (Eq. 14), on the device
  std::vector<int64_t> confident_;        // G (Eq. 5)
};

}  // namespace rematch::train
