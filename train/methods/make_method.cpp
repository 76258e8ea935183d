#include "train/methods/make_method.h"

#include <ctime>

#include "train/methods/pairs/l2rm_method.h"
#include "train/methods/pairs/pairs_method.h"
#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/uotrcl/uotrcl_method.h"
#include "train/methods/uotrcl/uotrcl_options.h"

namespace rematch::train {
namespace {

struct MethodEntry {
  const char* name;
  std::unique_ptr<Method> (*make)(const TrainConfig&, std::ostream&);
  void (*check)(const TrainConfig&);  // the method's own option checks, without data (may be null)
};

void check_rcsl(const TrainConfig& c) { (void)rcsl_options(c); }
void check_uotrcl(const TrainConfig& c) { (void)uotrcl_options(c); }

// The methods of `rematch train`: one line each.
const MethodEntry kMethods[] = {
    {"triplet", make_pairs_method, nullptr},   {"infonce", make_pairs_method, nullptr},
    {"rcl", make_pairs_method, nullptr},       {"l2rm", make_l2rm_method, nullptr},
    {"rcsl", make_rcsl_method, check_rcsl},    {"rcsl-nc", make_rcsl_method, check_rcsl},
    {"uotrcl", make_uotrcl_method, check_uotrcl},
};

const MethodEntry& entry(const std::string& name) {
  for (const MethodEntry& e : kMethods)
    if (name == e.name) return e;
  REMATCH_FAIL("--method ", name, " is not available in this build");
}

}  // namespace

std::unique_ptr<Method> make_method(const TrainConfig& config, std::ostream& log) {
  return entry(config.method).make(config, log);
}

void check_method_options(const TrainConfig& config) {
  const MethodEntry& e = entry(config.method);
  if (e.check) e.check(config);
}

NewRun train_new_run(TrainConfig config, std::ostream& log) {
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
