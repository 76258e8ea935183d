// The one place a method name becomes a Method: reads and checks the data (so a missing file fails before any
// run folder is made or any training starts) and builds the models.
#pragma once

#include <memory>
#include <ostream>

#include "train/methods/method.h"
#include "train/methods/train_config.h"
#include "train/methods/trainer.h"

namespace rematch::train {

// `config` must be resolved (resolve_defaults). `log` receives what was loaded and chosen.
std::unique_ptr<Method> make_method(const TrainConfig& config, std::ostream& log);

// The checks of make_method that need no data: the method's own options (RCSL's, UOT-RCL's) from a resolved
// config; an Error names the flag. `rematch train --dry_run` runs them.
void check_method_options(const TrainConfig& config);

struct NewRun {
  TrainOutcome outcome;
  std::string run_dir;
};

// A fresh run of a resolved config (resolve_defaults ran, once, in the caller): make_method, the run folder
// (--run_dir, or runs/<method>-<date>-<time>; --overwrite), config.json, run_training. Progress and logs go to
// `log`.
NewRun train_new_run(TrainConfig config, std::ostream& log);

}  // namespace rematch::train
