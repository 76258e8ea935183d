// What `rematch train --resume DIR` checks before it trains a step, and what it resumes from. Both
// checkpoints are loaded (their checksums verified, nn/safetensors.h) and matched against config.json (the
// hash each checkpoint carries, run_position.h); then:
//   checkpoint_latest intact   resume from it. When the best state it names (best_epoch >= 0) is missing or
//                              damaged: re-made from latest when latest is that state (the end of the best
//                              epoch); else refused, unless --remake_best (the best is then taken again from
//                              the validations still to come, and the final test uses that one).
//   latest damaged or missing, checkpoint_best intact
//                              resume from best, an earlier state of the same run: the epochs after it are
//                              trained again and, resume being bit-exact, give the same run (checkpoint_latest
//                              is replaced by best's state at once, and metrics.jsonl cut at its position).
//   no checkpoint at all       (stopped before its first one, or inside its write: metrics.jsonl records
//                              nothing past the first epoch's end) start the run again from its beginning with
//                              the same config.json, hence the same seed and data. When metrics.jsonl records
//                              more, the checkpoints were deleted or moved: refused, naming both and the
//                              finished epochs, pointing at --restart.
//   anything else              refused, naming each file and what is wrong with it, and what can be done:
//                              --restart (this run again from its beginning, same config.json) or a new run.
// --restart does the last explicitly, whatever the checkpoints hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "train/run/run_folder.h"
#include "train/run/training_state.h"

namespace rematch::train {

struct ResumeOptions {
  bool remake_best = false;  // --remake_best
  bool restart = false;      // --restart
};

enum class ResumeFrom { Latest, Best, Start };

struct ResumePlan {
  ResumeFrom from = ResumeFrom::Latest;
  std::optional<TrainingState> state;  // the checkpoint to continue from (Latest, Best)
  // What checkpoint_best holds, as this check read or re-made it, when it is the best state the position names:
  // the state the final test reloads unless a later epoch validates better (then the trainer drops it). Each file
  // is read once (the trainer does not read checkpoint_best again for it).
  std::optional<TrainingState> best;
  bool forget_best = false;            // --remake_best taken: the position's best is cleared
  std::vector<std::string> notes;      // what was found and done, one line each, for the log
};

// Inspects `folder` (whose config.json exists) as described above. Files are changed only as described:
// best re-made from latest, latest replaced by best, or (Start) the checkpoints, metrics.jsonl, results.md
// and plots of the stopped run deleted, config.json kept. A refusal is an Error naming the files and the
// commands that can continue.
ResumePlan check_resume(const run::RunFolder& folder, const ResumeOptions& options);

// xxh64 of config.json's settings but run_dir, resume, overwrite and progress (which change nothing the run
// computes), or "" when the folder has none.
std::string config_hash(const run::RunFolder& folder);

}  // namespace rematch::train
