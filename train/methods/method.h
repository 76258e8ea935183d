// The interface every training method implements (each registered in make_method.cpp), and the only thing
// train/methods/trainer.h drives. A method owns its data, models, optimizers, schedules and
// generators; the trainer owns the loop around it: epochs and steps, progress, metrics.jsonl, SIGINT,
// non-finite losses, validation, checkpoints (latest and best) and the final test.
//
// The loop, for epoch e in [0, num_epochs()) — epochs count warm-up epochs too:
//   info = begin_epoch(e)                  per-epoch work: the clean/noisy split, label correction, bank, ...
//   for s in [0, info.steps): train_step(e, s)
//   end_epoch(e)                           learning-rate schedules
//   validate()                             the model-selection score (rSum, or mean mAP)
// then the best state is reloaded and test() runs.
//
// Exact resumption: save_state() must capture everything train_step(e, s) depends on for the rest of the
// epoch — parameters, BatchNorm statistics, optimizer moments, schedules, every generator (dropout, noise,
// augmentations, negative sampling), and the state begin_epoch() built (the split, the bank, the targets, the
// noisy-batch cursor, the image queue). A resumed run calls load_state() and then current_epoch() instead of
// begin_epoch() for the interrupted epoch, and must print exactly the metrics the uninterrupted run prints.
//
// Non-finite losses: train_step computes the loss and, before any parameter update, throws NonFiniteLoss
// when it is NaN or infinite (check_finite_loss below). The trainer then restores every generator of
// generators() to its state before the step and runs the step again under autograd anomaly mode, so the
// error names the first op that produced a non-finite value; nothing is saved, no good checkpoint is lost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensor/error.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "train/run/training_state.h"
#include "viz/epoch_splits.h"

namespace rematch::train {

using Scalars = std::map<std::string, double>;

struct StepResult {
  double loss = 0;     // the total loss of the step
  Scalars parts;       // named terms of the loss ("trip", "rematch", "cost", ...), for metrics.jsonl
  int64_t pairs = 0;   // training pairs (or samples) the step consumed, for pairs/s
};

struct EpochInfo {
  std::string phase;   // "train", "warmup", "main", "learning", "mining", ...
  int64_t steps = 0;   // train_step calls this epoch
  Scalars stats;       // e.g. clean_size, clean_precision, label_accuracy (metrics.jsonl's epoch_start record)
};

// An EpochInfo statistic a method declares (Method::epoch_stats), and where the trainer shows it. The trainer
// knows no statistic by name: every stat goes to metrics.jsonl; the declared ones also where they say.
struct EpochStat {
  std::string name;        // the key in EpochInfo::stats
  int digits = 3;          // printed fixed-point with this many digits
  bool epoch_line = false; // on the epoch's summary line ("val 420.50 (best)  clean_precision 0.812")
  bool plot = false;       // plotted over the epochs, plots/<name>.png
  bool results = false;    // in results.md's notes: "- <name> (epoch E): <value>", the best state's epoch
};

struct EvalResult {
  double score = 0;    // the model-selection score: rSum, or the mean of the two mAPs
  Scalars metrics;     // "i2t_r1", ..., "rsum" or "map_i2t", "map_t2i", "map_avg"
  std::string table;   // a human-readable table (results.md and the terminal)
};

// Thrown by train_step for a NaN or infinite loss, before any parameter changes.
class NonFiniteLoss : public Error {
 public:
  explicit NonFiniteLoss(const std::string& what) : Error(what) {}
};

// Throws NonFiniteLoss naming the method, epoch, step, the loss term and its value.
void check_finite_loss(const std::string& method, int64_t epoch, int64_t step, const std::string& term,
                       double value);

// Throws an Error naming the method unless `step` of `epoch` is one of the `steps` steps of the epoch in progress
// (`current_epoch`): a trainer that skipped begin_epoch, or a step past the epoch's plan.
void check_step_in_epoch(const std::string& method, int64_t epoch, int64_t step, int64_t current_epoch, size_t steps);

// Between backward and the optimizer step: clips the gradients of `params` to total norm `max_norm` (none when
// max_norm <= 0) and throws NonFiniteLoss (term "gradient norm") when that norm is NaN or infinite: a NaN that
// a max or a mask hid from the loss value still reaches the gradients, and must not reach the weights.
void clip_checked_gradients(const std::string& method, int64_t epoch, int64_t step, const std::vector<Tensor>& params,
                            double max_norm);

// One vector of the decisions that choose an epoch's batches (Method::plan_splits): each net's clean flags,
// CREAM's clean/hard/noisy sets. `what` names it in the data-parallel check's error ("net B's clean flags").
struct PlanSplit {
  std::string what;
  viz::EpochSplit split;
};

class Method {
 public:
  virtual ~Method() = default;

  virtual std::string name() const = 0;
  virtual int64_t num_epochs() const = 0;

  virtual EpochInfo begin_epoch(int64_t epoch) = 0;
  virtual StepResult train_step(int64_t epoch, int64_t step) = 0;
  // Nothing by default (a method whose schedules step at the epoch's end says so).
  virtual void end_epoch(int64_t epoch) { (void)epoch; }
  // The info of the epoch in progress (after load_state(): the interrupted epoch's).
  virtual EpochInfo current_epoch() const = 0;

  virtual EvalResult validate() = 0;
  virtual EvalResult test() = 0;

  virtual void save_state(TrainingState& state) const = 0;
  virtual void load_state(const TrainingState& state) = 0;

  // Every generator the method draws from (the trainer saves and restores them around a retried step).
  virtual std::vector<Generator*> generators() = 0;
  // The current learning rate of the main model (for metrics.jsonl and the progress line).
  virtual double learning_rate() const = 0;
  // Whether the state after `epoch` competes for the best checkpoint (the one tested at the end). All epochs by
  // default; RCSL only its mining stage (its code tests model_mining_best).
  virtual bool best_candidate(int64_t epoch) const {
    (void)epoch;
    return true;
  }

  // Files the run folder keeps besides checkpoints, written once when a run starts (not on resume): the noise
  // actually used (noise_index.npy, noisy_labels.npy), so a run can be reproduced and audited.
  virtual void write_run_files(const std::string& dir) { (void)dir; }
  // Method-specific plots (mixture histogram, transport plan, confusion matrix) into `dir`, after `epoch`.
  virtual void write_plots(const std::string& dir, int64_t epoch) { (void)dir; (void)epoch; }
  // Extra lines for results.md (split quality, corrected-label accuracy, ...), markdown.
  virtual std::string results_notes() const { return ""; }
  // The statistics of EpochInfo::stats the trainer shows, in the order it shows them (EpochStat).
  virtual std::vector<EpochStat> epoch_stats() const { return {}; }
  // What begin_epoch(epoch) decided about each training pair (caption order), for the run folder's splits/
  // (viz/epoch_splits.h, docs/viz.md §4.1): L2RM's clean/mismatched split, NCR's (net A's) and DECL's splits,
  // RCSL-NC's paired labels, UOT-RCL's corrected labels. None for a method (or an epoch, such as a warm-up) that
  // decides nothing per pair.
  virtual std::optional<viz::EpochSplit> epoch_split(int64_t epoch) const {
    (void)epoch;
    return std::nullopt;
  }
  // Every vector of decisions begin_epoch(epoch) made that chooses the epoch's batches, for the ranks of a
  // data-parallel run to compare (train/methods/data_parallel.h, docs/distributed.md §4.2). By default the
  // epoch_split; a method whose batches follow more than it (NCR's and BiCro's two nets, CREAM's three sets)
  // reports them all.
  virtual std::vector<PlanSplit> plan_splits(int64_t epoch) const {
    std::optional<viz::EpochSplit> s = epoch_split(epoch);
    if (!s) return {};
    return {PlanSplit{"the epoch's split", std::move(*s)}};
  }
};

}  // namespace rematch::train
