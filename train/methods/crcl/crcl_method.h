// CRCL, Cross-modal Active Complementary Learning with Self-refining Correspondence (NeurIPS'23), as its official
// code runs it (docs/methods/crcl.md; QinYang79/CRCL `CRCL_NeurIPS23/model/CRCL.py: CRCL.train_self`,
// `train.py: __main__`, `data.py`), on SGR or SAF:
//   rounds        `train.py` loops over --schedules: round r trains --warmup_epoch + schedules[r] epochs on a
//                 freshly initialised model and AdamW (`model1 = CRCL(opt)`), the correspondence labels carried
//                 over; the lr is lr·0.1^⌊e/lr_update⌋ with e the epoch inside the round, warm-up included.
//   each step     S = g(V, T) in training mode on an augmented batch (crcl_augment.h); p1, p2 and p (crcl_loss.h);
//                 the step's labels y from the stored ones (frozen in warm-up epochs, moving average after, the
//                 confident floor); L = (1/B)Σ y·(−log p1_ii − log p2_ii) + 5·(1/B)Σ (tan terms); clipped AdamW step.
//   labels        one per training caption, starting at 1; after each step the batch's entries become y, except in
//                 the last warm-up epoch of the first round, where they become p (`epoch == warm_epoch − 1 and
//                 schedule == 0`). They are in the checkpoint, so a resumed run continues exactly.
//   model choice  the best validated epoch of the last round (the official resets best_rsum every round and
//                 overwrites model_best.pth.tar).
#pragma once

#include <ostream>
#include <vector>

#include "train/methods/crcl/crcl_loss.h"
#include "train/methods/crcl/crcl_options.h"
#include "train/methods/kit/pairs_kit.h"
#include "train/methods/method.h"

namespace rematch::train {

class CrclMethod : public Method {
 public:
  // On the loaded data (load_pairs_data with <mask> appended, as CRCL's `vocab.py: deserialize_vocab`). Under
  // mpirun each rank scores its columns of the augmented batch (docs/distributed.md §4.1).
  CrclMethod(const CommonOptions& common, const CrclOptions& options, PairsData data, std::ostream& log);

  std::string name() const override { return kit_.common().method; }
  int64_t num_epochs() const override { return round_start_.back(); }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  EpochInfo current_epoch() const override { return epoch_info_; }
  EvalResult validate() override { return kit_.validate(net_.model()); }
  EvalResult test() override { return kit_.test(net_.model()); }
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {&gens_.model, &gens_.sample, &augment_gen_}; }
  double learning_rate() const override { return net_.lr(); }
  bool best_candidate(int64_t epoch) const override { return round_of(epoch) + 1 == rounds(); }
  void write_run_files(const std::string& dir) override { kit_.write_run_files(dir); }
  std::string results_notes() const override;
  // The mean label of the truly matched and of the mismatched training pairs (against the injected noise).
  std::vector<EpochStat> epoch_stats() const override {
    return {{"clean_label", 3, true, true, false}, {"noisy_label", 3, true, true, false}};
  }

  // The correspondence labels, one per training caption.
  const std::vector<double>& labels() const { return labels_; }
  models::SgrafModel& model() { return net_.model(); }
  int64_t rounds() const { return static_cast<int64_t>(round_start_.size()) - 1; }
  int64_t round_of(int64_t epoch) const;
  // The epoch inside its round (`train.py`'s `epoch`).
  int64_t local_epoch(int64_t epoch) const { return epoch - round_start_[static_cast<size_t>(round_of(epoch))]; }

 private:
  // A new model and AdamW (`train.py`: `model1 = CRCL(opt)`), its weights drawn from the model stream.
  SgrafNet new_net();
  Scalars label_stats() const;
  EpochInfo epoch_info(int64_t epoch) const;

  CrclOptions crcl_;
  CrclLabelRule rule_;
  PairsGenerators gens_;
  PairsKit kit_;
  SgrafNet net_;  // the round's
  std::vector<std::vector<int64_t>> plan_;  // the batches of the epoch in progress
  int64_t mask_id_ = 0;
  std::vector<int64_t> round_start_;  // first epoch of each round, then the total
  std::vector<double> labels_;        // `model.move_gt`
  Generator augment_gen_;
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;
};

}  // namespace rematch::train
