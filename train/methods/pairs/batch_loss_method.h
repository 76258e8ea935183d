// The methods whose step is one loss of a batch's B×B score matrix S under one SGR or SAF network (rows images,
// columns captions, the diagonal the given — possibly mismatched — pairs), one method per loss:
//   triplet  VSE++ hardest-negative triplet, summed (docs/methods/triplet.md §5.1; --triplet_negatives mean: the sum
//            over all negatives instead of the hardest)
//   infonce  −log p_ii of the row and column softmax of S/τ (RCL's infoNCE baseline, docs/methods/infonce.md §6.1)
//   rcl      the complementary contrastive loss Σ_{j∈N_i} φ(p_ij) (RCL, docs/methods/rcl.md §2.1)
// Each is this class with its loss, given by its MethodSpec (batch_loss_method.cpp). Adam at --learning_rate, ×0.1
// every --lr_update epochs (docs/methods/rcl.md §2.2), global gradient-norm clip --grad_clip, shuffled batches (the
// last, partial one kept unless it has a single pair), validation rSum on dev, test on --test_split (and COCO's
// 5-fold 1K with --coco_folds): the pairs kit's (train/methods/kit/pairs_kit.h).
#pragma once

#include <ostream>
#include <vector>

#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

// The loss of a batch-loss method, given by its spec.
enum class BatchLoss { Triplet, Infonce, Rcl };

class BatchLossMethod : public Method {
 public:
  // The net on the loaded data (load_pairs_data). `log` must outlive this. The model's dtype (and every training
  // tensor's) is options.dtype: float32 for runs, float64 for the golden-step tests.
  BatchLossMethod(const CommonOptions& common, const PairsOptions& options, BatchLoss loss, PairsData data,
                  std::ostream& log);

  std::string name() const override { return kit_.common().method; }
  int64_t num_epochs() const override { return kit_.common().warmup_epoch + kit_.common().num_epochs; }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  EpochInfo current_epoch() const override { return epoch_info_; }
  EvalResult validate() override { return kit_.validate(net_.model()); }
  EvalResult test() override { return kit_.test(net_.model()); }
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {&gens_.model, &gens_.sample}; }
  double learning_rate() const override { return net_.lr(); }
  void write_run_files(const std::string& dir) override { kit_.write_run_files(dir); }

  models::SgrafModel& model() { return net_.model(); }
  const PairsData& data() const { return kit_.data(); }

 private:
  Tensor batch_loss(const Tensor& S);

  PairsOptions options_;
  BatchLoss loss_;
  PairsGenerators gens_;  // the sample stream: RCL's random negatives
  PairsKit kit_;
  SgrafNet net_;
  std::vector<std::vector<int64_t>> plan_;  // the batches of the epoch in progress
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
