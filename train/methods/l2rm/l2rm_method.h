// L2RM, Learning to Rematch Mismatched Pairs (CVPR'24), as the official code runs it (docs/methods/l2rm.md):
//   warm-up epochs   0.5·(InfoNCE + RCE) on all pairs (§1.2)
//   each main epoch  the per-sample loss of every training pair (eval mode, shuffled batches, §1.3), a
//                    two-component Beta mixture over it, clean (D_m) iff the low-loss component's posterior
//                    exceeds 0.5; a clean loader and a cycling noisy loader (both drop_last)
//   each main step   (a) the cost net f_c learns from reconstructed pairs: 1..max_reserved clean images are
//                        planted in a copy of the image queue (the previous noisy batch's images), and
//                        L_OT = Σ π^sup ⊙ f_c(S^key) takes one Adam step on f_c (§1.4);
//                    (b) the noisy batch's rematch plan: masked partial OT on C = max(f_c(S), 1e-10) with
//                        mass ρ through the dummy row/column (§1.5, ot/partial.h), and the symmetric-KL loss
//                        between the plan and the softmax of S/τ (§1.6);
//                    (c) the clean batch's summed hardest-negative triplet (§1.7);
//                    L = L_trip + L_re, one clipped Adam step of the retrieval net.
// The switches of the ⚠ notes (--split_loss, --rce_label, --mask_positives, --rematch_loss, --dummy_costs)
// default to the code's behaviour; --dummy_costs shifted gives the plan of ξ = 100·max C exactly but never
// subtracts numbers of size ξ/ε (docs/ot.md §1.3). Table 3's ablations: --rematch_ot full, --mask_positives off,
// --cost_function cosine, --rematch_loss kl | soft_infonce (l2rm_options.h).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "models/cost_net.h"
#include "train/methods/kit/pairs_kit.h"
#include "train/methods/l2rm/l2rm_options.h"
#include "train/methods/method.h"
#include "train/mixture/beta_mixture.h"

namespace rematch::train {

class L2rmMethod : public Method {
 public:
  // On the loaded data (load_pairs_data), with `options` resolved (resolve_defaults: --mask_positives on or off).
  // options.dtype: the retrieval net's, the cost net's and the image queue's (float64 for the golden-step test).
  // Under mpirun (docs/distributed.md §4): the per-sample losses split by batches among the ranks and summed, the
  // clean and noisy batches' score matrices by columns (PairsKit::training_scores), the OT plan and the cost net's
  // step on every rank from the same gathered values.
  L2rmMethod(const CommonOptions& common, const L2rmOptions& options, PairsData data, std::ostream& log);

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
  void write_plots(const std::string& dir, int64_t epoch) override;
  std::string results_notes() const override;
  // The split's clean-set precision against the injected noise: on the epoch line and plotted.
  std::vector<EpochStat> epoch_stats() const override { return {{"clean_precision", 3, true, true, false}}; }

  // Per-sample split losses of every training caption (index = caption), with the model in eval mode.
  std::vector<double> per_sample_losses(int64_t epoch);
  // The clean flags of the split in progress (index = caption); empty during warm-up.
  const std::vector<uint8_t>& clean() const { return clean_; }
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;

  // The OT cost of a noisy batch's scores S [B, B], no graph (§1.5): C = max(f_c(S), 1e-10) with f_c's current
  // weights, or with --cost_function cosine (Table 3's w/o learnable cost) C = max(1 − S, 1e-10), the cosine
  // distance, which is also f_c at its initialisation (§1.4: W = −I, b = 1).
  Tensor rematch_costs(const Tensor& S);
  // The rematch plan of S [B, B]: --rematch_ot partial solves the masked partial OT with mass ρ through the
  // dummy row and column (§1.5), full (Table 3's w/o partial OT) the balanced OT of the same costs, uniform
  // marginals 1/B and mass 1; both masked by --mask_positives, with ε = --reg and L2RM's stopping rule.
  Tensor rematch_plan(const Tensor& S);
  models::CostNet& cost_net() { return *cost_net_; }
  models::SgrafModel& model() { return net_.model(); }
  const PairsData& data() const { return kit_.data(); }

 private:
  bool warmup(int64_t epoch) const { return epoch < kit_.common().warmup_epoch; }
  void build_loaders(int64_t epoch);
  std::vector<int64_t> next_noisy_batch();
  double cost_update(const data::Batch& clean, const data::Batch& noisy);
  StepResult warmup_step(int64_t epoch, int64_t step);

  std::ostream& log_;
  L2rmOptions l2rm_;
  bool mask_positives_;        // --mask_positives, resolved
  PairsGenerators gens_;       // the sample stream: the image queue's first images, the reconstructed pairs
  PairsKit kit_;
  SgrafNet net_;               // the retrieval net
  std::unique_ptr<models::CostNet> cost_net_;
  std::unique_ptr<nn::Adam> cost_optimizer_;
  Tensor queue_;                        // [B, R, D] on the run's device: the previous noisy batch's images
  std::vector<uint8_t> clean_;          // per training caption, the split of the epoch in progress
  std::unique_ptr<data::Batcher> clean_loader_, noisy_loader_;
  std::vector<std::vector<int64_t>> plan_;  // the epoch's batches: all pairs in warm-up, else the clean loader's
  std::vector<std::vector<int64_t>> noisy_plan_;
  int64_t noisy_cycle_ = 0, noisy_cursor_ = 0;
  // For plots and results.md: the last split's mixture and quality, the last plan.
  mixture::BetaMixtureResult mixture_;
  data::SplitQuality quality_;
  Tensor last_plan_;
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
