// DECL, Deep Evidential Learning with Noisy Correspondence (ACM MM'22), as its official code runs it
// (QinYang79/DECL, `2022-ACMMM-DECL/model/DECL.py` and `train.py`; docs/methods/decl.md):
//   per batch      raw similarities s of every image with every caption (SGR or SAF without the sigmoid,
//                  `SGRAF.py: EncoderSimilarity.forward`), evidence e = exp(tanh(s)/τ) (`SGRAF.forward_sim`),
//                  α^{i2t} = e + 1 per image row, α^{t2i} = eᵀ + 1 per caption row (`DECL.get_alpha`)
//   warm-up step   L = mean_i [EDL(α^{i2t}_i, y_i) + EDL(α^{t2i}_i, y_i)] + λ₁ Σ_i RDH_i with y = I
//                  (`DECL.warmup_batch`; EDL = `mse_loss`, its KL term `KL`; RDH = `RDH_loss`)
//   each main epoch the split of every training pair by its evidence, model in eval mode over shuffled batches:
//                  clean iff argmax_j (e + eᵀ)_{ij} / Σ_j (e + eᵀ)_{ij} = i (`train.py: get_correspondence`)
//   main step      the same loss with y_ii = 0 for the pairs split off as noisy and the RDH term over the clean
//                  ones only (`DECL.train_batch`); batches below μ + 1 pairs end the epoch (`train.py: train`)
//   every step     the RDH hardness k = max(int(B − η·step), μ) negatives per query (B = --batch_size, step the
//                  global count of steps taken, warm-up included), k = b − 1 for a batch of b < k pairs; one
//                  clipped Adam step.
// Adam, the learning-rate schedule (constant through the warm-up, then ×0.1 every --lr_update main epochs),
// validation and test are the pairs kit's (train/methods/kit/pairs_kit.h). DECL-SGRAF is the mean of an SGR and a SAF run's scores
// (`rematch eval --checkpoint <sgr run> <saf run>`).
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "train/methods/decl/decl_options.h"
#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"

namespace rematch::train {

// DECL's loss terms on one batch's raw similarities (docs/methods/decl.md §2-§4), for the method and its tests.
namespace decl {

// e = exp(tanh(s)/τ) of the raw scores s [B, B] (rows images).
Tensor evidence(const Tensor& raw, double tau);
// `DECL.py: mse_loss` per row: Σ_j (y_ij − α_ij/S_i)² + Σ_j α_ij(S_i − α_ij)/(S_i²(S_i + 1)) + λ₂ KL(α̃_i ‖ 1), with
// α̃ = (α − 1)(1 − y) + 1 and S_i = Σ_j α_ij; alpha [B, C], labels [B, C] of 0/1 -> [B, 1].
Tensor evidential_loss(const Tensor& alpha, const Tensor& labels, double lambda2);
// `DECL.py: KL`: KL(Dir(α) ‖ Dir(1)) per row, [B, C] -> [B, 1].
Tensor dirichlet_kl_to_uniform(const Tensor& alpha);
// `DECL.py: RDH_loss`: per index i, (Σ of the k largest hinges of image i over captions + the same of caption i
// over images) / k, with hinges [margin + s_ij − s_ii]₊ and [margin + s_ji − s_ii]₊, the diagonal zeroed; scores
// [B, B] (tanh of the raw similarities) -> [B].
Tensor robust_dynamic_hinge(const Tensor& scores, double margin, int64_t k);
// The hardness of step `step` (the count after this step's increment) for a batch of `batch_length` pairs:
// max(int(batch_size − η·step), μ), then batch_length − 1 if the batch has fewer pairs (`DECL.warmup_batch`).
int64_t hardness(int64_t batch_size, double eta, int64_t mu, int64_t step, int64_t batch_length);

}  // namespace decl

class DeclMethod : public Method {
 public:
  // On the loaded data (load_pairs_data); options.dtype: float32 for runs, float64 for the golden-step test.
  // Under mpirun (docs/distributed.md §4.1): each rank computes its columns of a training batch's raw similarities
  // (PairsKit::training_scores with ScoreKind::Logits), gathered into [B, B] on every rank, which computes the whole
  // loss; gradients are summed before the clip.
  DeclMethod(const CommonOptions& common, const DeclOptions& options, PairsData data, std::ostream& log);

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
  std::string results_notes() const override;
  // The evidential split of a main epoch (kept = 1 for the pairs judged clean; viz/epoch_splits.h).
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;
  // The split's clean-set precision against the injected noise: on the epoch line and plotted.
  std::vector<EpochStat> epoch_stats() const override {
    return {{"clean_precision", 3, true, true, false}, {"noisy_recall", 3, false, true, false}};
  }

  // The split of every training caption (`train.py: get_correspondence`, model in eval mode, no graph): 1 =
  // clean. Also sets the mean uncertainty of the clean and noisy pairs (u = b/Σα^{i2t} + b/Σα^{t2i}).
  std::vector<uint8_t> evidence_split(int64_t epoch);
  // The split of the main epoch in progress (index = caption); empty during the warm-up.
  const std::vector<uint8_t>& clean() const { return clean_; }
  // The global step count (`DECL.step`), the warm-up's steps included.
  int64_t steps_taken() const { return step_count_; }
  models::SgrafModel& model() { return net_.model(); }

 private:
  bool warmup(int64_t epoch) const { return epoch < kit_.common().warmup_epoch; }
  // The main stage's batches of `epoch`: all pairs, shuffled, stopping at the first batch of fewer than μ + 1
  // pairs (`train.py: train`, `if images.size(0) < opt.mu + 1: break`; only the last can be).
  std::vector<std::vector<int64_t>> main_plan(int64_t epoch) const;
  EpochInfo main_epoch_info() const;

  DeclOptions decl_;
  PairsGenerators gens_;
  PairsKit kit_;
  SgrafNet net_;
  std::vector<std::vector<int64_t>> plan_;  // the batches of the epoch in progress
  int64_t step_count_ = 0;
  std::vector<uint8_t> clean_;  // per training caption, the split of the main epoch in progress
  data::SplitQuality quality_;
  double clean_uncertainty_ = 0, noisy_uncertainty_ = 0;
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
