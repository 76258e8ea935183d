// SDML (docs/methods/sdml.md; Hu, Zhen, Peng, Liu, "Scalable Deep Multimodal Learning for Cross-Modal Retrieval",
// SIGIR 2019; official code penghu-cs/SDML `SDML.py: Solver.train_view`), a label-wise baseline of UOT-RCL's
// Tables I–II, as a train::Method on its own networks (models/sdml_model.h). Each view trains alone against a
// predefined common space W (fixed, orthogonal): the official code runs one process per view; here both views step
// in the same train_step, on the same batch rows (both of the official processes seed NumPy with 0 and draw the
// same permutation), each with its own Adam.
//
//   per view v:  z = net_v(x), L_v = α mean_i ‖ae_v(z_i) − x_i‖ + (1 − α) mean_{labelled i} ‖z_i W − y_i‖
//   Adam(betas (0.5, 0.999)) per view: --learning_rate (image), --sdml_text_lr (text); full batches only.
// Model selection: the mean of the two mAPs on the validation split (the official picks each view's epoch of
// lowest validation label loss on its own: docs/methods/sdml.md §4).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "models/sdml_model.h"
#include "train/data/labeled_dataset.h"
#include "train/methods/method.h"
#include "train/methods/sdml/sdml_options.h"
#include "train/methods/train_config.h"

namespace rematch::train {

class SdmlMethod : public Method {
 public:
  SdmlMethod(const CommonOptions& common, const SdmlOptions& options, data::LabeledDataset data, std::ostream& log);

  std::string name() const override { return "sdml"; }
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
  double learning_rate() const override { return img_optimizer_->lr(); }
  void write_run_files(const std::string& dir) override;

  const data::NoisyLabels& noisy_labels() const { return noisy_; }
  models::SdmlModel& model() { return *model_; }

 private:
  struct ViewLoss {
    Tensor ae, d;
  };
  // One view's two terms on the batch `rows` (labelled: the rows whose one-hot label is not all zero).
  ViewLoss view_loss(models::SdmlView& view, const Tensor& x, const Tensor& y, const Tensor& labelled);
  EvalResult evaluate(const data::LabeledSplit& split, const std::string& name);
  EpochInfo epoch_info() const;

  CommonOptions common_;
  SdmlOptions options_;
  Device device_;
  data::LabeledDataset data_;
  data::NoisyLabels noisy_;
  std::ostream& log_;
  int64_t num_classes_ = 0;
  Tensor train_images_, train_texts_;
  Tensor one_hot_v_, one_hot_t_;
  std::unique_ptr<models::SdmlModel> model_;
  std::unique_ptr<nn::Adam> img_optimizer_, txt_optimizer_;
  Generator shuffle_gen_;

  EpochInfo info_;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;
};

}  // namespace rematch::train
