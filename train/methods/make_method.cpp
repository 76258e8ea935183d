#include "train/methods/make_method.h"

#include <ctime>

#include "train/methods/pairs/l2rm_method.h"
#include "train/methods/pairs/pairs_method.h"
#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/uotrcl/uotrcl_method.h"
#include "train/methods/uotrcl/uotrcl_options.h"

namespace rematch::train {

std::unique_ptr<Method> make_method(const TrainConfig& config, std::ostream& log) {
  const std::string& m = config.method;
  if (m == "triplet" || m == "infonce" || m == "rcl") return make_pairs_method(config, log);
  if (m == "l2rm") return make_l2rm_method(config, log);
  if (m == "rcsl" || m == "rcsl-nc") return make_rcsl_method(config, log);
  if (m == "uotrcl") return make_uotrcl_method(config, log);
  REMATCH_FAIL("--method ", m, " is not available in this build");
}

void check_method_options(const TrainConfig& config) {
  if (config.method == "rcsl" || config.method == "rcsl-nc") (void)rcsl_options(config);
  if (config.method == "uotrcl") (void)uotrcl_options(config);
}

NewRun train_new_run(TrainConfig config, std::ostream& log) {
  resolve_defaults(config);
  // Data and models first: a missing file fails before a run folder exists.
  std::unique_ptr<Method> method = make_method(config, log);
  if (config.run_dir.empty()) config.run_dir = run::default_run_dir(config.method, std::time(nullptr));
  run::RunFolder folder(config.run_dir, config.overwrite ? run::RunStart::Overwrite : run::RunStart::Fresh);
  folder.write_config(to_json(config));
  log << "run folder: " << folder.dir() << "\n";
  NewRun r;
  r.outcome = run_training(*method, config, folder, false, log);
  r.run_dir = folder.dir();
  return r;
}

}  // namespace rematch::train
