// What the methods that train SGR/SAF networks on image–caption pairs compose (docs/methods/shared.md §0.1,
// §0.3; those whose spec's make is make_pairs_method): the data (pairs_data.h) and its batches on the run's
// device; a training batch's score matrix, whole or, under mpirun, by columns shared among the ranks, and the
// update of a net after it (docs/distributed.md §4); per-caption values of the whole training set, its batches
// dealt among the ranks; the score matrices of the evaluation splits, their image rows dealt among the ranks; and
// the validation and test results. The kit holds no network and no generator: each call names the model it
// means (sgraf_net.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parallel/communicator.h"
#include "models/sgraf_model.h"
#include "train/data/batcher.h"
#include "train/methods/kit/pairs_data.h"
#include "train/methods/kit/retrieval_result.h"
#include "train/methods/kit/sgraf_net.h"
#include "train/methods/method.h"
#include "train/methods/pairs/pairs_options.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// The two random streams of a run on pairs, in its checkpoint as "rng.model" and "rng.sample": the nets' initial
// weights and dropout masks (seeded --seed), and the method's own draws (RCL's random negatives, L2RM's image queue
// and reconstructed pairs; seeded --seed ^ 0x5a5a5a5a5a5a5a5a). A method that draws nothing of its own keeps the
// second stream all the same, so that every checkpoint of a pairs run holds both.
struct PairsGenerators {
  explicit PairsGenerators(uint64_t seed);
  Generator model;
  Generator sample;
  void save(TrainingState& state) const;
  void load(const TrainingState& state);
};

// What every pairs method's checkpoint holds first: its (first) net as "model."/"optim." with the
// "model_config" `rematch eval/score --checkpoint` rebuild it from, the two generators, and "epoch", the epoch in
// progress (-1 before the first). load_pairs_state restores them and returns that epoch.
void save_pairs_state(TrainingState& state, const SgrafNet& net, const PairsGenerators& gens, int64_t epoch);
int64_t load_pairs_state(const TrainingState& state, SgrafNet& net, PairsGenerators& gens);

// A co-training epoch's plan splits (Method::plan_splits) of NCR's and BiCro's two nets: net A's clean flags (which
// choose B's labelled and unlabelled batches) and net B's (A's), named "net A's clean flags" and "net B's clean
// flags" in the data-parallel check's error (train/methods/data_parallel.h).
std::vector<PlanSplit> two_nets_plan_splits(const std::string& method, int64_t epoch, const std::vector<uint8_t>& clean_a,
                                            const std::vector<uint8_t>& clean_b);

// Which matrix a training batch's scores are: the sigmoid scores (SgrafModel::forward), or the logits before the
// sigmoid (SgrafModel::logits; DECL's evidence is computed from them).
enum class ScoreKind { Sigmoid, Logits };

class PairsKit {
 public:
  // On the loaded data (load_pairs_data); `dtype` is the model's and every training tensor's (float32 for runs,
  // float64 for the golden-step tests, tests/train/*_golden_step_test.cpp).
  PairsKit(const CommonOptions& common, PairsData data, DType dtype);

  const CommonOptions& common() const { return common_; }
  const PairsData& data() const { return data_; }
  const data::PrecompDataset& train_split() const { return *data_.train; }
  const data::Correspondence& correspondence() const { return data_.correspondence; }
  Device device() const { return device_; }
  DType dtype() const { return dtype_; }
  parallel::Communicator& comm() const { return comm_; }

  // The SGR/SAF model of `options` on this data (its vocabulary and region features).
  models::SgrafConfig model_config(const PairsOptions& options) const;
  // A new net of `config` on the run's device and dtype, its weights drawn from `gen`.
  SgrafNet new_net(const models::SgrafConfig& config, Generator& gen, const NetOptimizer& optimizer) const;
  // The line `log` gets about a run's model: its shape, size and device.
  std::string describe(const SgrafNet& net) const;

  // The all-pairs loader: every training pair, shuffled by --seed, batches of --batch_size, the last partial one
  // kept.
  const data::Batcher& all_pairs() const { return *all_pairs_; }
  // Its batches of `epoch` without a batch of a single pair.
  std::vector<std::vector<int64_t>> all_pairs_plan(int64_t epoch) const;
  // A shuffled loader of --batch_size over `captions` (all when empty), seeded --seed + `seed_offset`.
  data::Batcher loader(uint64_t seed_offset, bool drop_last, std::vector<int64_t> captions = {}) const;
  // The tensors of a batch of caption indices, on the run's device and in its dtype.
  data::Batch batch(const std::vector<int64_t>& captions) const;
  // A batch made elsewhere (CRCL's augmented one) moved to the run's device and dtype.
  data::Batch on_device(data::Batch b) const;

  // S [B, B] of a training batch under `m` in its current mode. Under mpirun (a world of W <= B ranks) each rank
  // computes its columns (SgrafModel::forward_columns: its share of the batch's captions against every image) and
  // every rank holds the gathered S, whose backward keeps each rank's columns (parallel::GatherBackward::OwnRows: every
  // rank computes the whole loss); update() then sums the gradients over ranks. A batch smaller than the world is
  // computed whole on every rank (each then holds the whole gradient, which is not summed).
  Tensor training_scores(models::SgrafModel& m, const data::Batch& b, ScoreKind kind = ScoreKind::Sigmoid);
  // zero_grad, backward, the gradients summed over ranks when the step's scores were shared (before the clip: the
  // global norm), clipped to --grad_clip, one optimizer step of `net`. A non-finite gradient norm (a NaN that the
  // loss's maxima hid) throws NonFiniteLoss before the step, like a non-finite loss.
  void update(SgrafNet& net, const Tensor& loss, int64_t epoch, int64_t step);

  // `count` values of every training caption (index = caption), computed without a graph batch by batch over
  // `loader`'s plan of `epoch`: `of_batch` gives, per value, one number per caption of the batch in the batch's
  // order (by caption length, Batcher::make_batch). Under mpirun rank r computes batches r, r + W, ... and the
  // ranks' values are summed: each caption's is non-zero on one rank only, so the sum is that value exactly. The
  // models' modes are the caller's (eval mode: no draw, no statistic moves).
  std::vector<std::vector<double>> per_caption(
      const data::Batcher& loader, int64_t epoch, size_t count,
      const std::function<std::vector<std::vector<double>>(const data::Batch&)>& of_batch) const;
  // Each net's per-caption loss over the training set, as the co-training methods compute it before their split
  // (NCR and BiCro `co_train.py: eval_train`, CREAM `train.py: eval_train`): the nets in eval mode, no graph, one
  // shuffled pass of loader 1 over `epoch` (the last partial batch kept), `loss` mapping a batch's score matrix
  // under a net to one value per caption; the nets back in training mode after.
  std::vector<std::vector<double>> per_caption_losses(std::vector<SgrafNet>& nets, int64_t epoch,
                                                      const std::function<Tensor(const Tensor&)>& loss) const;

  // The [images, captions] score matrix of a split under `m` in eval mode (left in eval mode). Under mpirun each
  // rank scores its whole blocks of image rows (parallel::block_rows) and the rows are gathered as they are: one
  // process's matrix byte for byte, as `rematch score` shards it (docs/distributed.md §3).
  Tensor split_scores(const data::PrecompDataset& split, models::SgrafModel& m) const;
  // The dev split's rSum and recalls under `m` (the model-selection score), `m` back in training mode after.
  EvalResult validate(models::SgrafModel& m) const;
  // The test split's (--test_split, with --coco_folds COCO's 5-fold 1K too), `m` back in training mode after.
  EvalResult test(models::SgrafModel& m) const;

  // The noise the run uses, into its folder (Method::write_run_files).
  void write_run_files(const std::string& dir) const;

 private:
  CommonOptions common_;
  PairsData data_;
  Device device_;
  DType dtype_;
  parallel::Communicator& comm_;  // parallel::world() when the kit was made
  std::unique_ptr<data::Batcher> all_pairs_;
  bool shared_step_ = false;  // the step in progress computed a share of its batch (gradients to be summed)
};

}  // namespace rematch::train
