// Where a checkpoint stands in its run (the "trainer.*" entries of a TrainingState, trainer.h explains them),
// and the hash of the run's config.json it was written under, so that a checkpoint copied in from another
// run is told apart from this run's own (train/methods/resume_check.h).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "train/run/training_state.h"

namespace rematch::train {

struct RunPosition {
  int64_t epoch = 0, step = 0;
  bool in_epoch = false, epoch_done = false;
  int64_t best_epoch = -1;
  double best_score = -std::numeric_limits<double>::infinity();
};

void put_position(TrainingState& s, const RunPosition& p);
RunPosition get_position(const TrainingState& s);  // an error names the file and the missing entry

// "epoch 3, step 12" or "the end of epoch 3" (1-based, as the progress line counts).
std::string describe_position(const RunPosition& p);

// The entry holding xxh64 of config.json's text ("" where the run folder had none, e.g. in unit tests).
constexpr const char* kConfigHashEntry = "trainer.config_xxh64";

}  // namespace rematch::train
