#include "train/methods/make_method.h"

#include <ctime>

#include "parallel/communicator.h"

#include "train/methods/crcl/crcl_method.h"
#include "train/methods/decl/decl_method.h"
#include "train/methods/l2rm/l2rm_method.h"
#include "train/methods/ncr/ncr_method.h"
#include "train/methods/pairs/batch_loss_method.h"
#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/uotrcl/uotrcl_method.h"

namespace rematch::train {

// The methods of `rematch train`, in the order of --help and docs/presets.md: one line each, the spec its folder
// defines.
const std::vector<const MethodSpec*>& registered_methods() {
  static const std::vector<const MethodSpec*> methods = {
      &triplet_method_spec(),
      &infonce_method_spec(),
      &rcl_method_spec(),
      &ncr_method_spec(),
      &l2rm_method_spec(),
      &rcsl_method_spec(),
      &rcsl_nc_method_spec(),
      &uotrcl_method_spec(),
      &decl_method_spec(),
      &crcl_method_spec(),
  };
  return methods;
}

std::unique_ptr<Method> make_method(const TrainConfig& config, std::ostream& log) {
  const MethodSpec& spec = method_spec(config.method);
  check_config(config);
  return spec.make(config, log);
}

NewRun train_new_run(TrainConfig config, std::ostream& log) {
  // Data and models first: a missing file fails before a run folder exists.
  std::unique_ptr<Method> method = make_method(config, log);
  check_data_parallel(*method);
  // Under mpirun rank 0 makes and writes the folder (its clock names it); the others only read it.
  parallel::Communicator& comm = parallel::world();
  const bool writer = comm.rank() == 0;
  if (config.run_dir.empty()) {
    std::time_t now = std::time(nullptr);
    if (comm.world_size() > 1)
      now = static_cast<std::time_t>(comm.broadcast(from_vector(std::vector<int64_t>{now}, {1}), 0).to_vector<int64_t>()[0]);
    config.run_dir = run::default_run_dir(config.method, now);
  }
  run::RunFolder folder(config.run_dir, !writer           ? run::RunStart::Follower
                                        : config.overwrite ? run::RunStart::Overwrite
                                                           : run::RunStart::Fresh);
  if (writer) folder.write_config(to_json(config));
  log << "run folder: " << folder.dir() << "\n";
  NewRun r;
  r.outcome = run_training(*method, config, folder, false, log);
  r.run_dir = folder.dir();
  return r;
}

}  // namespace rematch::train
