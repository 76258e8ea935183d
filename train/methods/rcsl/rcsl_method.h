// RCSL, Robust Cross-modal Semi-paired Learning (AAAI'26), as the official code QinYang79/RCSL runs it
// (docs/methods/rcsl.md), and RCSL-NC, its noisy-correspondence variant (§3.6, docs/methods/shared.md §0.4 rule 4).
//
// rcsl: the VSE model of models/vse_model.h on a semi-paired training set (§3.1, data/semi_paired.h:
// --paired_length images keep their captions, the rest are shuffled among themselves; split seed --noise_seed,
// 123 when unset, as the code's numpy seed). Each epoch (train.py main loop, in its order):
//   1. the epoch's captions (`re_sort`): in the learning stage every paired caption and each unpaired one with
//      probability --unpaired_keep (0.2 on COCO, 1 on F30K), in the mining stage all; shuffled into batches of
//      --batch_size (the last, partial one kept), each batch ordered with its K_p paired captions first;
//   2. at --mine_epoch: the AdamW optimizer is re-created (moments reset, lr back to --learning_rate);
//   3. in the mining stage: the memory bank (memory_bank.h), built at the first mining epoch (--bank_refresh
//      once, the code's behaviour) or at every one (epoch);
//   4. the lr: ×0.1 at each --lr_milestones epoch, applied to the current lr (adjust_learning_rate), so with
//      25 and {15, 30, 45}: 5e-4, 5e-5 from 15, 5e-4 again from 25, 5e-5 from 30.
// Each step: view 0 = the batch's pairs augmented (models/augment.h: regions dropped with p 0.2, tokens altered
// with p 0.2, the <mask> word appended to the vocabulary — <unk> with --word_vectors); in the mining stage
// view 1 = the mined items un-augmented (image I'_c of each caption, caption T'_k of each image row). Both
// views are encoded in training mode (text dropout 0.1, BatchNorm batch statistics), and
//   L = L_trl + L_reg (+ L_rcm in the mining stage)        rcsl_losses.h, paper Eq. (1), (4)–(11)
// with L_trl, L_reg only when K_p > 0; a batch without any term makes no update (`if loss != 0`). Then a global
// gradient-norm clip at --grad_clip and one AdamW step (weight decay --weight_decay, 0.01 as PyTorch's default).
// Validation: rSum on dev from the cosine similarities of the eval-mode embeddings; test likewise on
// --test_split (COCO 5-fold 1K with --coco_folds). --word_vectors FILE initialises the word embeddings from a
// GloVe text file as the official code does with GloVe (word_vectors.h: the file's vectors, N(0, 1) elsewhere);
// without it they stay U(−0.1, 0.1), the code's non-GloVe init, and the log says so
// (docs/methods/shared.md §0.4 rule 7).
//
// rcsl-nc — our reading of the paper's one paragraph (the details are in an unavailable supplementary): the
// training pairs carry injected mismatches (--noise_ratio/--noise_file; --noise_mode caption by default, NCR's
// caption-level shuffling that the paper follows, data/noise.h), nothing is
// known to be paired. The first --warmup_epoch epochs (counted inside --num_epochs, so RCSL's schedule,
// --mine_epoch and --lr_milestones keep their meaning) train SDL with every pair treated as paired. From then
// on, at the start of every epoch, the model in eval mode gives each training pair L2RM's per-sample split
// loss (docs/methods/l2rm.md §1.3, --split_loss, over shuffled batches of --batch_size), a two-component Beta mixture
// (mixture/beta_mixture.h) splits them, and clean ⇒ paired, noisy ⇒ unpaired; RCSL then runs unchanged on
// those labels (the memory bank uses the labels of the epoch it is built in).
//
// State (exact resumption, method.h): the model, optimizer and schedule with the stage they belong to, both
// generators, and what begin_epoch built: the labels, the batches of the epoch, the bank and the epoch info.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "models/vse_model.h"
#include "nn/nn.h"
#include "train/data/noise.h"
#include "train/methods/method.h"
#include "train/methods/kit/pairs_data.h"
#include "train/methods/rcsl/memory_bank.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/train_config.h"

namespace rematch::train {

class RcslMethod : public Method {
 public:
  // Builds the model on the loaded data (load_pairs_data): rcsl, or with `noisy` rcsl-nc (their specs say which).
  // `log` must outlive the method. Under mpirun (docs/distributed.md §4): each rank runs its rows of a batch's
  // captions through the Bi-GRU; the image encoder, the word embeddings, the split, the bank and the losses run
  // whole on every rank.
  RcslMethod(const CommonOptions& common, const RcslOptions& options, bool noisy, PairsData data, std::ostream& log);

  std::string name() const override { return common_.method; }
  int64_t num_epochs() const override { return common_.num_epochs; }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  void end_epoch(int64_t epoch) override;
  EpochInfo current_epoch() const override { return epoch_info_; }
  EvalResult validate() override;
  EvalResult test() override;
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {&model_gen_, &augment_gen_}; }
  double learning_rate() const override { return optimizer_->lr(); }
  // RCSL's final test loads model_mining_best (docs/methods/rcsl.md §3.5): the best dev rSum among the mining
  // epochs only.
  // Kept per stage here, so the code's crash when no mining epoch beats the learning stage cannot happen; a run
  // without a mining stage (--paired_only_triplet, --mine_epoch >= --num_epochs) picks among all its epochs.
  bool best_candidate(int64_t epoch) const override;
  void write_run_files(const std::string& dir) override;
  std::string results_notes() const override;
  std::vector<EpochStat> epoch_stats() const override;
  std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const override;

  models::VseModel& model() { return *model_; }
  const PairsData& data() const { return data_; }
  // The training correspondence: the semi-paired shuffle (rcsl) or the injected noise (rcsl-nc).
  const data::Correspondence& correspondence() const { return correspondence_; }
  // Per training caption, paired (1) or unpaired (0) in the epoch in progress.
  const std::vector<uint8_t>& labels() const { return labels_; }
  const rcsl::MemoryBank& memory_bank() const { return bank_; }

 private:
  enum class Stage { Learning, Mining };
  bool mining(int64_t epoch) const;
  // Whether the mining stage uses pseudo pairs at all (not with --no_rcm).
  bool mines_pairs() const { return rcm_t_ || rcm_v_; }
  Stage stage_of(int64_t epoch) const { return mining(epoch) ? Stage::Mining : Stage::Learning; }
  static const char* stage_name(Stage stage);  // as checkpoints and epoch lines write it (rcsl_state.cpp)
  // A fresh AdamW at --learning_rate and the stage's MultiStepLR (see rcsl_method.cpp).
  void new_optimizer(Stage stage);
  std::vector<uint8_t> split_labels(int64_t epoch, const Tensor& image_embs, const Tensor& caption_embs);
  std::vector<std::vector<int64_t>> epoch_plan(int64_t epoch) const;
  Tensor encode_train_images();

  CommonOptions common_;
  RcslOptions options_;
  bool noisy_;               // rcsl-nc
  uint64_t split_seed_;      // rcsl: --noise_seed, else the code's 123
  int64_t warmup_epochs_;    // rcsl-nc's --warmup_epoch; 0 for rcsl
  bool rcm_t_, rcm_v_;       // the mining terms the ablations keep
  std::ostream& log_;
  PairsData data_;
  data::Correspondence correspondence_;
  int64_t mask_id_ = 0;
  Device device_;
  Generator model_gen_;    // initial weights and text dropout masks
  Generator augment_gen_;  // view-0 augmentations
  std::unique_ptr<models::VseModel> model_;
  std::unique_ptr<nn::AdamW> optimizer_;
  std::unique_ptr<nn::MultiStepLR> schedule_;
  Stage stage_ = Stage::Learning;  // the stage the optimizer and schedule belong to

  int64_t epoch_ = -1;
  std::vector<uint8_t> labels_;
  std::vector<std::vector<int64_t>> plan_;
  rcsl::MemoryBank bank_;
  EpochInfo epoch_info_;
};

}  // namespace rematch::train
