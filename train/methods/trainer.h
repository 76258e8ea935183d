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
#include "train/methods/resume_check.h"
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

// Runs the whole training of `method` in `folder`, or continues it as `plan` says (check_resume,
// resume_check.h; null: a fresh run; ResumeFrom::Start: the run again from its beginning). `out` gets results,
// notes and the progress line; the caller has written config.json (fresh runs). SIGINT/SIGTERM are handled
// through the caller's run::InterruptGuard, or one of its own when the caller has none.
// The trainer takes plan->best: the final test reloads it unless a later epoch validates better.
TrainOutcome run_training(Method& method, const TrainConfig& config, run::RunFolder& folder, ResumePlan* plan,
                          std::ostream& out);
// The same; with `resuming`, check_resume(folder) with no options first (its notes go to `out`).
TrainOutcome run_training(Method& method, const TrainConfig& config, run::RunFolder& folder, bool resuming,
                          std::ostream& out);

// Under mpirun (a parallel::world() of several ranks): refuses a method that does not train data-parallel
// (MethodSpec::data_parallel), naming it. run_training checks it first; train_new_run before the run folder.
void check_data_parallel(const Method& method);
struct MethodSpec;
// The same for the method named `name` whose spec is `spec` (null: not in the registry) in a world of `world` ranks.
void check_data_parallel(const std::string& name, const MethodSpec* spec, int world);

// The notice the SIGINT/SIGTERM handler prints while a run trains.
extern const char* const kInterruptNotice;

// The markdown of results.md: the method, the resolved settings that matter, best epoch, the test table and
// the method's notes.
std::string results_markdown(const Method& method, const TrainConfig& config, const TrainOutcome& outcome);

}  // namespace rematch::train
