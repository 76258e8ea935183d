// The methods that train an SGR or SAF similarity model on image–caption pairs with one loss on each batch's
// B×B score matrix S (rows images, columns captions, the diagonal the given — possibly mismatched — pairs):
//   triplet  VSE++ hardest-negative triplet, summed (docs/methods/triplet.md §5.1; --triplet_negatives mean: the sum
//            over all negatives instead of the hardest)
//   infonce  −log p_ii of the row and column softmax of S/τ (RCL's infoNCE baseline, docs/methods/infonce.md §6.1)
//   rcl      the complementary contrastive loss Σ_{j∈N_i} φ(p_ij) (RCL, docs/methods/rcl.md §2.1)
// L2RM (l2rm_method.h) builds on this class: same model, data, optimizer, validation and state.
//
// Shared by all of them (docs/methods/rcl.md §2.2, l2rm.md §1.1): Adam at --learning_rate, ×0.1 every --lr_update
// epochs counted from the first epoch after warm-up (warm-up runs at the base rate), global gradient-norm clip
// --grad_clip, shuffled batches (the last, partial one kept unless it has a single pair), validation rSum on
// dev with the model in eval mode, test on --test_split (and COCO's 5-fold 1K with --coco_folds).
#pragma once

#include <memory>
#include <ostream>
#include <typeinfo>
#include <vector>

#include "dist/communicator.h"
#include "models/sgraf_model.h"
#include "nn/nn.h"
#include "train/data/batcher.h"
#include "train/eval/retrieval_metrics.h"
#include "train/methods/method.h"
#include "train/methods/method_spec.h"
#include "train/methods/pairs/pairs_data.h"
#include "train/methods/pairs/pairs_options.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// The loss of a pairs method, chosen once from --method.
enum class PairsLoss { Triplet, Infonce, Rcl };

class PairsMethod : public Method {
 public:
  // Builds the model and optimizer on the loaded data (load_pairs_data). `log` must outlive this. The model's
  // dtype (and every training tensor's) is options.dtype: float32 for runs, float64 for the golden-step tests
  // (tests/train/*_golden_step_test.cpp), whose references run in float64. The loss follows common.method
  // (triplet, infonce or rcl; L2RM has its own steps).
  PairsMethod(const CommonOptions& common, const PairsOptions& options, PairsData data, std::ostream& log);

  std::string name() const override { return common_.method; }
  int64_t num_epochs() const override { return common_.warmup_epoch + common_.num_epochs; }
  EpochInfo begin_epoch(int64_t epoch) override;
  StepResult train_step(int64_t epoch, int64_t step) override;
  void end_epoch(int64_t epoch) override { (void)epoch; }
  EpochInfo current_epoch() const override { return epoch_info_; }
  EvalResult validate() override;
  EvalResult test() override;
  void save_state(TrainingState& state) const override;
  void load_state(const TrainingState& state) override;
  std::vector<Generator*> generators() override { return {&model_gen_, &sample_gen_}; }
  double learning_rate() const override { return optimizer_->lr(); }
  void write_run_files(const std::string& dir) override;
  // triplet, infonce and rcl (docs/distributed.md §4); a method built on this class (L2RM) opts in itself.
  bool trains_data_parallel() const override { return typeid(*this) == typeid(PairsMethod); }

  models::SgrafModel& model() { return *model_; }
  const PairsData& data() const { return data_; }

 protected:
  // The lr of `epoch` (docs/methods/l2rm.md §1.1: lr·0.1^⌊(epoch − warm-up)/lr_update⌋, constant in warm-up).
  double lr_at(double base, int64_t epoch) const;
  // The tensors of a batch of caption indices, regions and ids on the model's device.
  data::Batch batch(const std::vector<int64_t>& captions) const;
  // S [B, B] of a batch with the model in its current mode.
  Tensor scores(const data::Batch& b);
  // S [B, B] of a training batch. Under mpirun (a world of W <= B ranks) each rank computes its columns
  // (SgrafModel::forward_columns, its share of the batch's captions against every image) and every rank holds the
  // gathered S, whose backward keeps each rank's columns (dist::GatherBackward::OwnRows: every rank computes the
  // whole loss); optimizer_step then sums the gradients over ranks. A batch smaller than the world is computed
  // whole on every rank (each then holds the whole gradient, which is not summed).
  Tensor training_scores(const data::Batch& b);
  // training_scores's shared path: this rank's columns (SgrafModel::forward_columns; `decl_logits` as its
  // ColumnShare's) of model `m` (nullptr: model_), gathered into the batch's [B, B] matrix with the backward OwnRows.
  // Sets shared_step_.
  Tensor gathered_columns(const data::Batch& b, bool decl_logits, models::SgrafModel* m = nullptr);
  // zero_grad, backward, clip, Adam step of the retrieval model. A non-finite gradient norm (a NaN that the
  // loss's maxima hid) throws NonFiniteLoss before the step, like a non-finite loss.
  void optimizer_step(const Tensor& loss, int64_t epoch, int64_t step);
  // The batches of all training pairs for `epoch` (single-pair batches dropped).
  std::vector<std::vector<int64_t>> all_pairs_plan(int64_t epoch) const;
  // The [images, captions] score matrix of a split in eval mode. Under mpirun each rank scores its whole blocks of
  // image rows (dist::block_rows) and the rows are gathered as they are: one process's matrix byte for byte, as
  // `rematch score` shards it (docs/distributed.md §3). Of `m` (NCR's second net), the retrieval model by default.
  Tensor split_scores(const data::PrecompDataset& split, models::SgrafModel* m = nullptr);
  // Evaluation of a split: rSum and the six recalls.
  EvalResult evaluate(const data::PrecompDataset& split, const std::string& label);

  CommonOptions common_;
  PairsOptions options_;
  std::ostream& log_;
  PairsData data_;
  Device device_;
  DType dtype_;           // of the model, the batches' regions and every loss
  Generator model_gen_;   // initial weights and dropout masks
  Generator sample_gen_;  // RCL's random negatives, L2RM's reconstructed pairs and image queue
  PairsLoss loss_kind_;
  std::unique_ptr<models::SgrafModel> model_;
  std::unique_ptr<nn::Adam> optimizer_;
  dist::Communicator& comm_;  // dist::world() when the method was made
  bool shared_step_ = false;   // the step in progress computed a share of its batch (gradients to be summed)
  std::unique_ptr<data::Batcher> all_pairs_;
  std::vector<std::vector<int64_t>> plan_;  // the batches of the epoch in progress
  EpochInfo epoch_info_;
  int64_t epoch_ = -1;

 private:
  Tensor batch_loss(const Tensor& S, Scalars& parts);
};

// The specs of triplet, infonce and rcl (make_method.cpp registers them).
const MethodSpec& triplet_method_spec();
const MethodSpec& infonce_method_spec();
const MethodSpec& rcl_method_spec();

// The retrieval table of results.md and the terminal.
EvalResult eval_result(const eval::RetrievalMetrics& m, const std::string& label);

// The final test of a run from the test split's similarities [images, captions]: its metrics, or with
// --coco_folds the mean over 5 folds of consecutive images (COCO 1K) plus the whole split's as full_* (5K).
EvalResult test_result(const Tensor& sims, int64_t captions_per_image, const CommonOptions& config);

// MethodSpec::make of a method on the SCAN precomp pairs: the data load_pairs_data reads (with the mask word
// when `mask_word`), then M(common, options S, data, log).
template <class S, class M>
std::function<std::unique_ptr<Method>(const TrainConfig&, std::ostream&)> make_pairs_method(bool mask_word = false) {
  return make_with<S, PairsData>(
      [mask_word](const CommonOptions& c, const S&, std::ostream& log) { return load_pairs_data(c, mask_word, log); },
      [](const CommonOptions& c, const S& o, PairsData data, std::ostream& log) -> std::unique_ptr<Method> {
        return std::make_unique<M>(c, o, std::move(data), log);
      });
}

}  // namespace rematch::train
