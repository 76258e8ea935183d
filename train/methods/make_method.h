// The registry of `rematch train`'s methods and the one way a method is made: make_method looks the config's
// method up (its MethodSpec, method_spec.h), checks the config (check_config), then the spec reads the data (so a
// missing file fails before any run folder is made or any training starts) and builds the method from its typed
// options, the common options, the data and the log.
#pragma once

#include <memory>
#include <ostream>

#include "train/methods/method.h"
#include "train/methods/method_spec.h"
#include "train/methods/train_config.h"
#include "train/methods/trainer.h"

namespace rematch::train {

// `config` resolved (resolve_defaults) or complete. `log` receives what was loaded and chosen.
std::unique_ptr<Method> make_method(const TrainConfig& config, std::ostream& log);

struct NewRun {
  TrainOutcome outcome;
  std::string run_dir;
};

// A fresh run of a resolved config (resolve_defaults ran, once, in the caller): make_method, the run folder
// (--run_dir, or runs/<method>-<date>-<time>; --overwrite), config.json, run_training. Progress and logs go to
// `log`.
NewRun train_new_run(TrainConfig config, std::ostream& log);

}  // namespace rematch::train
