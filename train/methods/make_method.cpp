#include "train/methods/make_method.h"

#include <ctime>

#include "parallel/communicator.h"

namespace rematch::train {

// Each method's spec, defined in its folder's <method>_method.cpp. Declared here rather than included with the
// method's header, so the registry depends on no method's code.
const MethodSpec& triplet_method_spec();
const MethodSpec& infonce_method_spec();
const MethodSpec& rcl_method_spec();
const MethodSpec& ncr_method_spec();
const MethodSpec& l2rm_method_spec();
const MethodSpec& rcsl_method_spec();
const MethodSpec& rcsl_nc_method_spec();
const MethodSpec& uotrcl_method_spec();
const MethodSpec& decl_method_spec();
const MethodSpec& crcl_method_spec();
const MethodSpec& bicro_method_spec();
const MethodSpec& mscn_method_spec();
const MethodSpec& cream_method_spec();
const MethodSpec& mrl_method_spec();
const MethodSpec& dscmr_method_spec();
const MethodSpec& sdml_method_spec();

// The methods of `rematch train`, in the order of --help and docs/presets.md: one line each.
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
      &bicro_method_spec(),
      &mscn_method_spec(),
      &cream_method_spec(),
      &mrl_method_spec(),
      &dscmr_method_spec(),
      &sdml_method_spec(),
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
