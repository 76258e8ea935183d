// MSCN, Noisy Correspondence Learning with Meta Similarity Correction (CVPR'23), as its official code runs it
// (hhc1997/MSCN, `main_MSCN.py`, `models.py`, `utils.py`, `data.py`; docs/methods/mscn.md):
//   two SGR (or SAF) networks A and B, each scoring its similarity vectors with its own meta network (meta_sim.h),
//   each pair with its own Adams;
//   warm-up epochs   A, then B, each a pass over all pairs in batches of 2 × --batch_size with the mean-hinge loss
//                    (mscn_scores.h `mscn_warmup_loss`), net and meta net stepped together, each clipped to
//                    --grad_clip (`warmup`, §2.1);
//   after the warm-up every Adam starts afresh, the meta nets' at --meta_lr (`main`);
//   each epoch       split by A (`split_data`: a Beta mixture whose components are fitted to A's meta-set scores of
//                    the clean and of the drawn pairs, refined on A's scores of the training pairs; clean iff the
//                    clean component's posterior > 0.5, §3), train B on A's clean pairs (`train`, §2.2), then
//                    split by B (after its training) and train A;
//   train(X)         fresh non-correspondences in the meta set (meta_set.h); per clean batch: every
//                    --meta_interval-th iteration a virtual SGD step of X (virtual_step.h), the BCE of the stepped
//                    copy's pair scores on a meta batch, one Adam step of X's meta net on its gradient (through the
//                    virtual step: a second derivative); then X's step on its adaptive-margin loss (the meta net
//                    frozen).
//   Validation and test score the average of (A, meta A)'s and (B, meta B)'s matrices (`validate`, `evalrank`).
//   Under mpirun every score matrix of a step is shared by columns, the virtual step's gradient summed over ranks in
//   the graph, and the split's scores dealt by batches: one process's run on every rank (docs/distributed.md §4.1,
//   item 13).
//
// Trainer epochs: the --warmup_epoch warm-up epochs (A's batches, then B's), then two per MSCN epoch, "train B" (A's
// split, B's steps) and "train A" (B's split, taken after B's half, A's steps): B's split needs B after its training,
// which a single trainer epoch could not count in advance. Only the warm-up's last epoch and each "train A" half
// (the ends of the code's `validate` calls) compete for the tested state.
//
// State: A "model."/"optim.", B "model_B."/"optim_B.", the meta nets "meta_A."/"meta_optim_A." and "meta_B."/
// "meta_optim_B.", the split of the half in progress "mscn.*". The meta set's draws are functions of --seed and the
// epoch, so a resumed run redraws them.
#pragma once

#include <array>
#include <memory>
#include <ostream>
#include <vector>

#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"
#include "train/methods/mscn/meta_set.h"
#include "train/methods/mscn/meta_sim.h"
#include "train/methods/mscn/mscn_options.h"
#include "train/mixture/beta_mixture.h"

namespace rematch::train {

// The split of `split_data` from the meta set's scores (with their labels) and the training pairs' scores: each
// clamped to [1e-3, 1 − 1e-3] (the code's `10e-4`), component 0 = Beta fitted to the label-0 scores, component 1 to
// the label-1 scores, equal weights, one `fit(stop_threshold=1e-2, max_iterations=10)` on the training scores,
// probability = component 1's posterior, clean iff > 0.5.
struct MscnSplit {
  std::vector<double> probability;
  std::vector<uint8_t> clean;
  mixture::BetaMixtureRefit mixture;
  std::array<mixture::BetaComponent, 2> initial;
};
MscnSplit mscn_split(const std::vector<double>& meta_scores, const std::vector<double>& meta_labels,
                     const std::vector<double>& train_scores);

class MscnMethod : public Method {
 public:
  // options.dtype: float32 for runs, float64 for the golden-step test.
  MscnMethod(const CommonOptions& common, const MscnOptions& options, PairsData data, std::ostream& log);

  std::string name() const override { return kit_.common().method; }
  int64_t num_epochs() const override { return kit_.common().warmup_epoch + 2 * kit_.common().num_epochs; }
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
  bool best_candidate(int64_t epoch) const override;
  std::string results_notes() const override;
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;
  std::vector<EpochStat> epoch_stats() const override {
    return {{"clean_precision", 3, true, true, false}, {"clean_recall", 3, false, true, false}};
  }

  models::SgrafModel& net(int which) { return nets_[static_cast<size_t>(which)].model(); }
  MetaSim& meta(int which) { return *meta_[static_cast<size_t>(which)]; }
  nn::Adam& optimizer(int which) { return nets_[static_cast<size_t>(which)].optimizer(); }
  nn::Adam& meta_optimizer(int which) { return *meta_optim_[static_cast<size_t>(which)]; }
  MetaSet& meta_set() { return *meta_set_; }
  const PairsData& data() const { return kit_.data(); }
  // The captions that train (all but a --meta_source train meta set's).
  const std::vector<int64_t>& training_captions() const { return train_captions_; }
  // The split of the half in progress (index = caption; empty in the warm-up).
  const std::vector<double>& probability() const { return prob_; }
  const std::vector<uint8_t>& clean() const { return clean_; }

  // The tensors of a training batch of caption indices (the run's device and dtype).
  data::Batch batch(const std::vector<int64_t>& captions) const { return kit_.batch(captions); }
  // One MSCN training iteration of net `x` on batch `b` (the golden-step test drives it): when `meta_batch` is given,
  // the virtual step, meta loss and meta update first; then the main step. Returns the main loss (and sets
  // `meta_loss` when a meta step ran).
  // `step` only names the step in errors.
  double train_iteration(int x, const data::Batch& b, const MetaBatch* meta_batch, double* meta_loss = nullptr,
                         int64_t step = -1);
  // The scores of every training caption (index = caption) and of every meta item under (net k, meta k), eval mode.
  std::vector<double> training_scores_of(int k, int64_t epoch);
  std::vector<double> meta_scores_of(int k);
  // A fresh start of every Adam (nets at --learning_rate, meta nets at --meta_lr), as `main` builds them after the
  // warm-up.
  void restart_optimizers();

 private:
  struct Phase {
    bool warmup = false;
    int64_t round = 0;  // the MSCN epoch after the warm-up
    int trained = 0;    // the net that steps (A = 0, B = 1); its peer splits
  };
  Phase phase(int64_t epoch) const;
  Generator draw_generator(int64_t index, uint64_t stream) const;
  void build_split(int64_t epoch);
  void build_plans(int64_t epoch);
  EpochInfo epoch_info(int64_t epoch) const;
  // Net x's step on `loss` (its gradients, and with `with_meta` its meta net's, summed over ranks when `shared`).
  void step_net(int x, const Tensor& loss, bool shared, bool with_meta, int64_t epoch, int64_t step);
  // A copy of meta net x whose parameters are its values without gradient (the meta step's scorer on ranks other
  // than 0 under mpirun).
  MetaSim* detached_meta(int x);
  // The [images, captions] matrix of a split under (net k, meta k), its image rows dealt among the ranks.
  Tensor split_scores_of(int k, const data::PrecompDataset& split);  // mscn_evaluation.cpp
  static const char* net_name(int k);  // "A", "B"

  std::ostream& log_;
  MscnOptions mscn_;
  PairsGenerators gens_;
  PairsKit kit_;
  std::vector<SgrafNet> nets_;                      // A and B
  std::vector<std::unique_ptr<MetaSim>> meta_;      // their meta nets
  std::vector<std::unique_ptr<nn::Adam>> meta_optim_;
  std::vector<std::unique_ptr<models::SgrafModel>> shadows_;  // the virtual-step copies (virtual_step.h)
  std::array<std::unique_ptr<MetaSim>, 2> meta_copies_;         // detached_meta's, made on first use
  Generator copy_gen_{0};
  std::unique_ptr<data::PrecompDataset> meta_split_;  // --meta_source split
  std::unique_ptr<MetaSet> meta_set_;
  std::vector<int64_t> train_captions_;
  std::vector<double> prob_;
  std::vector<uint8_t> clean_;
  data::SplitQuality quality_;
  MscnSplit last_split_;
  // The epoch's steps: warm-up (net, batch), or the trained net's clean batches with their meta batch (empty: none).
  std::vector<std::pair<int, std::vector<int64_t>>> steps_;
  std::vector<std::vector<int64_t>> meta_batches_;
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
