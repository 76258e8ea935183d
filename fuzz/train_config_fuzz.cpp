// The config.json of a run being resumed (`rematch train --resume DIR`; train/run/run_folder.cpp and
// train/methods/train_config.cpp): the run folder reads it and the settings are parsed and checked as the
// resume does before it builds the method.
#include "fuzz/fuzz_util.h"
#include "train/methods/train_config.h"
#include "train/run/run_folder.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = fuzz::make_folder("run");
  const std::string path = fuzz::write_file("run/config.json", fuzz::bytes(data, size));
  static const run::RunFolder folder(dir, run::RunStart::Resume);
  fuzz::reads_or_names(path, [&] { train::resumed_train_config(folder.read_config(), folder.config_path()); });
  return 0;
}
