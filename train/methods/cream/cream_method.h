// CREAM, Cross-modal Retrieval with Noisy Correspondence via Consistency Refining and Mining (TIP'24), as its
// official code runs it (XLearning-SCU/2024-TIP-CREAM, `train.py`, `model.py`, `InfoNCELoss.py`;
// docs/methods/cream.md):
//   two SGR (or SAF) networks A and B, each with its own Adam;
//   warm-up epochs   A, then B, each one pass over all pairs with the InfoNCE loss mean_i ℓ_i, ℓ_i = −log P^t_ii −
//                    log P^i_ii at temperature τ (`train.py: warmup`, `InfoNCELoss` mode "warmup"; §2.1);
//   each co-training epoch (`train.py: main`)
//     split          the per-pair InfoNCE losses of every training pair under A and under B (eval mode, one shuffled
//                    pass), min–max normalised, a two-component Gaussian mixture each (as NCR's: ncr_split), w^A and
//                    w^B the clean posteriors; clean by both nets: clean, by neither: noisy, by one: hard
//                    (`eval_train`, `split_samples`; §2.2); A trains, then B, on the same three sets;
//     refine         per iteration of net X (peer Y), X in eval mode: the clean batch's labels y = w^Y + (1 − w^Y)p^X,
//                    the hard batch's y = w̄ + (1 − w̄)p^X with w̄ = (w^A + w^B)/2, the noisy batch's y = (p^X + p^Y)/2
//                    (p = `SGRAF.predict`), and the filter f, the split-size-weighted mean of the three batches' mean
//                    labels (`train_one_epoch`; §2.3);
//     mine           one Adam step on the clean batch with cream_refined_loss (filter max(hard_start − e, f), or 0
//                    when more than 85% of the pairs are clean), then from co-training epoch --hard_start_epoch one
//                    on the hard batch (filter f, 0 above 85%), from --noisy_start_epoch one on the noisy batch
//                    (filter f) (§2.4).
//   Validation and test score the average of A's and B's matrices (`train.py: validate`, `evaluation.py: evalrank`).
//
// Steps: each train_step makes exactly one parameter update; the hard and noisy labels and the filter are computed in
// the clean step, before its update, as the code does, and kept (and checkpointed) for the iteration's later steps.
//
// State: A is "model."/"optim.", B "model_B."/"optim_B.", the split and the pending labels "cream.*".
#pragma once

#include <ostream>
#include <vector>

#include "train/methods/cream/cream_options.h"
#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"

namespace rematch::train {

// `split_samples`: 0 clean (both nets' clean flag), 1 hard (exactly one), 2 noisy (neither).
enum class CreamPart : uint8_t { Clean = 0, Hard = 1, Noisy = 2 };
std::vector<uint8_t> cream_parts(const std::vector<uint8_t>& clean_a, const std::vector<uint8_t>& clean_b);

class CreamMethod : public Method {
 public:
  // On the loaded data (load_pairs_data); A and B are built in that order from the model generator.
  // options.dtype: float32 for runs, float64 for the golden-step test.
  CreamMethod(const CommonOptions& common, const CreamOptions& options, PairsData data, std::ostream& log);

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
  // `train.py: main` saves model_best only in the co-training loop (`best_rsum = 0` there).
  bool best_candidate(int64_t epoch) const override { return !warmup(epoch); }
  std::string results_notes() const override;
  // The run folder's splits/: the clean set of the epoch (hard and noisy pairs shown as not kept).
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;
  // The clean, hard and noisy sets (labels 0, 1, 2 per pair): a pair that one rank calls hard and another noisy
  // changes no clean flag yet deals other batches (docs/distributed.md §4.2).
  std::vector<PlanSplit> plan_splits(int64_t epoch) const override;
  std::vector<EpochStat> epoch_stats() const override {
    return {{"clean_precision", 3, true, true, false}, {"hard_size", 0, true, true, false},
            {"noisy_size", 0, true, true, false}};
  }

  models::SgrafModel& net(int which) { return nets_[static_cast<size_t>(which)].model(); }
  const models::SgrafModel& net(int which) const { return nets_[static_cast<size_t>(which)].model(); }
  const PairsData& data() const { return kit_.data(); }
  // Per-pair InfoNCE losses of every training caption under A (0) and B (1), in eval mode (`eval_train`).
  std::pair<std::vector<double>, std::vector<double>> per_sample_losses(int64_t epoch);
  const std::vector<double>& probability(int which) const { return prob_[which]; }
  const std::vector<uint8_t>& parts() const { return parts_; }

 private:
  enum class Kind { Warmup, Clean, Hard, Noisy };
  struct StepRef {
    int net = 0;
    int64_t index = 0;
    Kind kind = Kind::Warmup;
  };
  // An iteration of a net: its clean batch, the hard batch it draws (the last one again once the hard loader has run
  // out, `hard_iter.next()` failing: then it does not train) and its noisy batch (the loader cycles).
  struct Iteration {
    std::vector<int64_t> clean, hard, noisy;
    bool hard_trains = false, noisy_trains = false;
  };
  bool warmup(int64_t epoch) const { return epoch < kit_.common().warmup_epoch; }
  int64_t co_epoch(int64_t epoch) const { return epoch - kit_.common().warmup_epoch; }
  void build_plans(int64_t epoch);
  EpochInfo epoch_info(int64_t epoch) const;
  std::vector<int64_t> part(CreamPart p) const;

  std::ostream& log_;
  CreamOptions cream_;
  PairsGenerators gens_;        // the model stream draws A, then B
  PairsKit kit_;
  std::vector<SgrafNet> nets_;  // A and B
  // The split of the epoch in progress: prob_[k] net k's clean posterior, parts_ the three sets.
  std::vector<double> prob_[2];
  std::vector<uint8_t> parts_;
  std::vector<std::vector<int64_t>> warmup_batches_[2];
  std::vector<Iteration> iterations_[2];
  std::vector<StepRef> steps_;
  // Computed in an iteration's clean step for its hard and noisy steps.
  std::vector<double> labels_h_, labels_n_;
  double filter_h_ = 0, filter_n_ = 0;
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
