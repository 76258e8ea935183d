// NCR, Learning with Noisy Correspondence for Cross-modal Matching (NeurIPS'21), as its official code runs it
// (XLearning-SCU/2021-NeurIPS-NCR, `NCR/co_train.py`, `NCR/model.py`; docs/methods/ncr.md):
//   two SGR (or SAF) networks A and B, each with its own Adam;
//   warm-up epochs   A, then B, each one pass over all pairs with the mean-hinge loss Σ_i mean_j [α + S_ij −
//                    S_ii]_+ + Σ_j mean_i [α + S_ij − S_jj]_+ (`co_train.py: warmup`, `model.py:
//                    ContrastiveLoss` mode "warmup"; §2.1);
//   each co-training epoch (`co_train.py: main`)
//     co-divide      the per-sample losses of every training pair under A and under B (eval mode, the same shuffled
//                    batches, §2.2), min–max normalised, a two-component 1-D Gaussian mixture each (sklearn's
//                    GaussianMixture(2, max_iter=10, tol=1e-2, reg_covar=5e-4): train/mixture/gaussian_mixture.h),
//                    w = the posterior of the smaller-mean component, clean iff w > --p_threshold
//                    (`eval_train`, `split_prob`); A trains on B's split, then B on A's;
//     co-rectify     per iteration of net X (peer Y): the labelled (clean) batch's targets y_ij = w_i + (1 − w_i) p_j
//                    with p = X's prediction, the unlabelled (noisy) batch's y_i = (p^X_i + p^Y_i)/2
//                    (`co_train.py: train`, `model.py: SGRAF.predict`, §2.3);
//     soft margin    the summed hardest-negative triplet with margins α·f(y) (`ContrastiveLoss` mode "train",
//                    --soft_margin, §2.4): one Adam step on the labelled batch and, from co-training epoch
//                    ⌊num_epochs/2⌋ on, a second one on the unlabelled batch.
//   Validation and test score the average of A's and B's matrices (`co_train.py: validate`,
//   `evaluation.py: evalrank`); the test also reports A and B alone.
//
// Steps: a warm-up epoch is A's batches, then B's; a co-training epoch is A's iterations, then B's, each iteration
// one step per Adam update (labelled, then, in the second half, unlabelled), so every train_step makes exactly one
// parameter update. The unlabelled targets are computed in the labelled step, before its update, as the code does,
// and kept (and checkpointed) for the next step.
//
// State: A is "model."/"optim.", B "model_B."/"optim_B.", the split "ncr.*".
#pragma once

#include <ostream>
#include <vector>

#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"
#include "train/methods/ncr/ncr_options.h"
#include "train/mixture/gaussian_mixture.h"

namespace rematch::train {

// NCR's soft-margin triplet (`NCR/model.py: ContrastiveLoss.forward`, mode "train", hard_negative=True):
//   Σ_i max_{j≠i} [M_ij + S_ij − S_ii]_+ + Σ_j max_{i≠j} [M_ij + S_ij − S_jj]_+,
// M broadcastable to S ([B, B] or [B, 1]: the same M_ij in both directions, as the code's broadcast).
Tensor ncr_soft_margin_triplet(const Tensor& scores, const Tensor& margins);

// The margin α·f(y) of a rectified label y (--soft_margin).
double ncr_soft_margin(double alpha, double y, SoftMargin shape);

// `SGRAF.predict`'s rectified labels from a batch's scores S [B, B] (no graph): p_i = clamp(α − ℓ_i/2, 0, α) with
// ℓ_i the per-sample mean-hinge loss, divided by the mean of the largest ⌊B/10⌋ + 1 values of p, clamped to
// [0, 1]. When those are all 0 the code divides 0 by 0 (NaN); here every p_i is 0 (docs/methods/ncr.md §3).
std::vector<double> ncr_predict_labels(const Tensor& scores, double alpha);

// NCR's co-divide of one net (`co_train.py: eval_train`, `split_prob`): the losses min–max normalised in `dtype`
// (the code's `torch.zeros(data_size)`: the default dtype), the Gaussian mixture initialised from `seed` (or from
// `initial_labels` when given: a reference's k-means labels), w = the clean posterior, clean iff w > threshold, and
// when no w is at most the threshold, the threshold becomes the ⌊N/100⌋-th smallest w.
struct NcrSplit {
  std::vector<double> normalised;  // the GMM's input
  std::vector<double> probability;
  std::vector<uint8_t> clean;
  mixture::GaussianMixtureResult mixture;
};
NcrSplit ncr_split(const std::vector<double>& losses, DType dtype, double threshold, uint64_t seed,
                   const std::vector<int>& initial_labels = {});

class NcrMethod : public Method {
 public:
  // On the loaded data (load_pairs_data); A and B are built in that order from the model generator.
  // options.dtype: float32 for runs, float64 for the golden-step test.
  // Under mpirun (docs/distributed.md §4.1): each training-mode score matrix by columns of the net that steps
  // (PairsKit::training_scores), the net's gradients summed before its clip; the co-divide's losses by batches dealt
  // round-robin and summed; the eval-mode predictions, the mixtures and the validation whole on every rank.
  NcrMethod(const CommonOptions& common, const NcrOptions& options, PairsData data, std::ostream& log);

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
  // Net A's (both nets follow one schedule).
  double learning_rate() const override { return nets_[0].lr(); }
  void write_run_files(const std::string& dir) override { kit_.write_run_files(dir); }
  // `co_train.py: main` saves model_best only in the co-training loop (`best_rsum` starts at 0 there; the warm-up's
  // validation is printed, never saved), so only co-training epochs compete for the tested state.
  bool best_candidate(int64_t epoch) const override { return !warmup(epoch); }
  std::string results_notes() const override;
  // The run folder's splits/ (viz/epoch_splits.h): net A's co-divide of the epoch (the split that trains B).
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;
  // Both nets' clean flags: each chooses its peer's batches (docs/distributed.md §4.2).
  std::vector<PlanSplit> plan_splits(int64_t epoch) const override;
  std::vector<EpochStat> epoch_stats() const override {
    return {{"clean_precision_A", 3, true, true, false}, {"clean_precision_B", 3, true, true, false}};
  }

  models::SgrafModel& net(int which) { return nets_[static_cast<size_t>(which)].model(); }
  const models::SgrafModel& net(int which) const { return nets_[static_cast<size_t>(which)].model(); }
  const PairsData& data() const { return kit_.data(); }
  // Per-sample mean-hinge losses of every training caption (index = caption) under A (0) and B (1), in eval mode,
  // on the same batches (`eval_train`'s one loader pass).
  std::pair<std::vector<double>, std::vector<double>> per_sample_losses(int64_t epoch);
  // The clean probabilities and flags of net 0's and net 1's split (index = caption); empty in warm-up.
  const std::vector<double>& probability(int which) const { return prob_[which]; }
  const std::vector<uint8_t>& clean(int which) const { return clean_[which]; }

 private:
  // One step: which net, which of its iterations, labelled or unlabelled.
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
  Tensor margins(const std::vector<double>& y, int64_t rows, int64_t cols) const;

  std::ostream& log_;
  NcrOptions ncr_;
  PairsGenerators gens_;        // the model stream draws A, then B
  PairsKit kit_;
  std::vector<SgrafNet> nets_;  // A and B
  // The split of the epoch in progress: prob_[k], clean_[k] are net k's (A's trains B and B's trains A).
  std::vector<double> prob_[2];
  std::vector<uint8_t> clean_[2];
  data::SplitQuality quality_[2];
  // Net k's iterations: labelled[k][i] with unlabelled[k][i] (warm-up: labelled[k] holds all batches).
  std::vector<std::vector<int64_t>> labeled_[2], unlabeled_[2];
  std::vector<StepRef> steps_;
  Tensor targets_u_;  // [B, 1]: the unlabelled targets of the iteration in progress (between its two steps)
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
