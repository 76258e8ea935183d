// The training loop around a Method (method.h): epochs and steps with a progress line, metrics.jsonl, SIGINT
// and SIGTERM (finish the step, save a resumable checkpoint, stop), non-finite losses (the step is re-run
// under anomaly mode so the error names the op; nothing is saved), validation after every epoch, the latest
// and best checkpoints, plots, and the final test of the best state with results.md.
//
// Checkpoint position: a checkpoint records the epoch in progress and how many of its steps are done
// ("trainer.epoch", "trainer.step") and whether the epoch's begin_epoch() has run ("trainer.in_epoch"); the
// epoch-end checkpoint holds (e, steps of e) with "trainer.epoch_done" = 1. metrics.jsonl records carry the
// same (epoch, step) — a train record the number of steps done, the epoch's validation record (e, steps) —
// so a resumed run truncates the log at its checkpoint's position and logs nothing twice.
//
// A run folder that cannot be written (a full disk, a read-only folder, a file-size limit) stops the run with
// the io::WriteError naming the file and the cause, extended with what to do: resume from checkpoint_latest
// (every file is written whole or not at all, so the last one saved is intact) or, before the first
// checkpoint, start again.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "train/methods/method.h"
#include "train/methods/train_config.h"
#include "train/run/run_folder.h"

namespace rematch::train {

struct TrainOutcome {
  bool interrupted = false;  // stopped by SIGINT/SIGTERM after saving checkpoint_latest
  int64_t best_epoch = -1;
  double best_score = 0;
  EvalResult best_validation;
  EvalResult test;           // of the best state (empty when interrupted)
  Scalars last_epoch_stats;  // EpochInfo::stats of the last epoch (split quality, label accuracy, ...)
};

// Runs (or, with `resuming`, continues from checkpoint_latest) the whole training of `method` in `folder`.
// `out` gets results and the progress line; the caller has written config.json (fresh runs).
TrainOutcome run_training(Method& method, const TrainConfig& config, run::RunFolder& folder, bool resuming,
                          std::ostream& out);

// The markdown of results.md: the method, the resolved settings that matter, best epoch, the test table and
// the method's notes.
std::string results_markdown(const Method& method, const TrainConfig& config, const TrainOutcome& outcome);

}  // namespace rematch::train
