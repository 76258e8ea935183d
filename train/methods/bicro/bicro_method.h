// BiCro, Noisy-correspondence robust cross-modal matching with bidirectional cross-modal similarity consistency
// (Yang et al., CVPR'23), as its official code runs it (xu5zhao/BiCro, `co_train.py`, `model.py`, `run.py`,
// `train_*.sh`; docs/methods/bicro.md). NCR's co-training (ncr_method.h) with other labels:
//   two SGR (or SAF) networks A and B, each with its own Adam;
//   warm-up epochs   A, then B, each one pass over all pairs; per batch only the ⌊B·--warmup_rate⌋ pairs of
//                    smallest mean-hinge loss ℓ_i = mean_j [α + S_ij − S_ii]_+ + mean_j [α + S_ji − S_ii]_+ train
//                    (Σ of those ℓ_i; `co_train.py: warmup`, `ContrastiveLoss` mode "warmup_sele");
//   each co-training epoch (`co_train.py: main`)
//     split          the per-pair losses ℓ of every training pair under A and under B (eval mode, the same
//                    shuffled batches), min–max normalised, BiCro's Beta mixture (bicro_beta_mixture.h; or with
//                    --fit_type gmm NCR's Gaussian one), w = the clean posterior, clean iff w > --p_threshold
//                    (`eval_train`, `split_prob`); A trains on B's split, then B on A's;
//     soft labels    per iteration of net X, its peer Y in eval mode labels the labelled (clean) batch and, from
//                    co-training epoch ⌊num_epochs/2⌋ on, the unlabelled one (bicro_labels.h: anchors and the
//                    bidirectional cross-modal similarity consistency; `co_train.py: train`, `SGRAF.predict`);
//     soft margin    the summed hardest-negative triplet with margin α·f(y_j) for caption j in both directions
//                    (`ContrastiveLoss` mode "noise_soft", f of --soft_margin): in the second half one Adam step
//                    on the unlabelled batch first, then one on the labelled batch; in the first half only the
//                    latter.
//   Validation and test score the average of A's and B's matrices (`co_train.py: validate`).
//
// Steps: a warm-up epoch is A's batches, then B's; a co-training epoch is A's iterations, then B's, each iteration
// one step per Adam update, so every train_step makes exactly one parameter update. The peer's labels of an
// iteration are computed at its first step (the peer does not move while X trains) and kept, and checkpointed, for
// its second.
//
// State: A is "model."/"optim.", B "model_B."/"optim_B.", the split and the kept labels "bicro.*".
#pragma once

#include <ostream>
#include <vector>

#include "train/methods/bicro/bicro_labels.h"
#include "train/methods/bicro/bicro_options.h"
#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"

namespace rematch::train {

// The margins M [B, B] of labels y [B]: M_ij = α·f(y_j), the code's [B] margin broadcast along the rows in both
// directions (`margin.t()` of a 1-D tensor is itself).
Tensor bicro_margins(const std::vector<double>& y, double alpha, SoftMargin shape, DType dtype, Device device);

// The warm-up loss (`ContrastiveLoss` mode "warmup_sele"): the sum of the ⌊B·rate⌋ smallest ℓ_i of S [B, B].
Tensor bicro_warmup_loss(const Tensor& scores, double margin, double rate);

// The split of one net: the losses min–max normalised in `dtype` (the code's `torch.zeros(data_size)`), the
// mixture's clean posterior, clean iff > threshold, and `split_prob`'s rule when no posterior is at most the
// threshold (the ⌊N/100⌋-th smallest becomes it).
struct BicroSplit {
  std::vector<double> normalised;
  std::vector<double> probability;
  std::vector<uint8_t> clean;
};
BicroSplit bicro_split(const std::vector<double>& losses, DType dtype, double threshold, BicroFit fit, uint64_t seed);

class BicroMethod : public Method {
 public:
  // On the loaded data (load_pairs_data); A and B are built in that order from the model generator.
  // Under mpirun: as NCR (ncr_method.h): training scores by columns, the split's losses by batches, the peer's
  // labels and the mixtures whole on every rank.
  BicroMethod(const CommonOptions& common, const BicroOptions& options, PairsData data, std::ostream& log);

  std::string name() const override { return kit_.common().method; }
  int64_t num_epochs() const override { return kit_.common().warmup_epoch + kit_.common().num_epochs; }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  EpochInfo current_epoch() const override { return epoch_info_; }
  EvalResult validate() override;
  EvalResult test() override;
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {&gens_.model, &gens_.sample}; }
  double learning_rate() const override { return nets_[0].lr(); }
  void write_run_files(const std::string& dir) override { kit_.write_run_files(dir); }
  // `co_train.py: main` saves checkpoints only in the co-training loop.
  bool best_candidate(int64_t epoch) const override { return !warmup(epoch); }
  std::string results_notes() const override;
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;
  // Both nets' clean flags: each chooses its peer's batches (docs/distributed.md §4.2).
  std::vector<PlanSplit> plan_splits(int64_t epoch) const override;
  std::vector<EpochStat> epoch_stats() const override {
    return {{"clean_precision_A", 3, true, true, false}, {"clean_precision_B", 3, true, true, false}};
  }

  models::SgrafModel& net(int which) { return nets_[static_cast<size_t>(which)].model(); }
  const PairsData& data() const { return kit_.data(); }
  // Per-pair mean-hinge losses of every training caption under A (0) and B (1), eval mode (`eval_train`).
  std::pair<std::vector<double>, std::vector<double>> per_sample_losses(int64_t epoch);
  const std::vector<double>& probability(int which) const { return prob_[which]; }
  const std::vector<uint8_t>& clean(int which) const { return clean_[which]; }
  // The labels the peer gave the iteration in progress (empty before its first step and after its last).
  const std::vector<double>& labels_labeled() const { return labels_l_; }
  const std::vector<double>& labels_unlabeled() const { return labels_u_; }

 private:
  struct StepRef {
    int net = 0;
    int64_t index = 0;
    bool unlabeled = false;
  };
  bool warmup(int64_t epoch) const { return epoch < kit_.common().warmup_epoch; }
  bool second_half(int64_t epoch) const {
    return epoch - kit_.common().warmup_epoch >= kit_.common().num_epochs / 2;
  }
  void build_plans(int64_t epoch);
  EpochInfo epoch_info(int64_t epoch) const;
  // The peer's labels of net x's iteration `index` (`SGRAF.predict`).
  void predict(int x, int64_t index, bool both);

  std::ostream& log_;
  BicroOptions bicro_;
  PairsGenerators gens_;
  PairsKit kit_;
  std::vector<SgrafNet> nets_;  // A and B
  std::vector<double> prob_[2];
  std::vector<uint8_t> clean_[2];
  data::SplitQuality quality_[2];
  std::vector<std::vector<int64_t>> labeled_[2], unlabeled_[2];
  std::vector<StepRef> steps_;
  std::vector<double> labels_l_, labels_u_;  // the iteration in progress's labels
  int64_t labels_of_ = -1;                    // the step whose iteration they belong to (its first step)
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
