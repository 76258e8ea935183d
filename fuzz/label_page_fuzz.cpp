// The labels page of `rematch retrieve --run` for a UOT-RCL run (train/cli/label_report.cpp) on a damaged run
// folder of a fixed small labelled data set (12 training pairs, 3 classes): the input is split
// (fuzz::split_files) into the run's noisy_labels.npy, splits/epoch_1.json and splits/epoch_1.npy (a missing
// part: no such file); config.json is intact. The page is written, or an Error names a file of the run folder.
#include <sstream>

#include "fuzz/fuzz_util.h"
#include "train/cli/report_pages.h"
#include "train/synth/labeled_world.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string run = [] {
    synth::LabeledWorldConfig w;
    w.classes = 3, w.train_samples = 12, w.valid_samples = 3, w.test_samples = 3;
    const std::string labeled = synth::write_labeled_world(synth::make_labeled_world(w), fuzz::make_folder("labeled"));
    const std::string dir = fuzz::make_folder("run");
    fuzz::make_folder("run/splits");
    fuzz::write_file("run/config.json", "{\"method\": \"uotrcl\", \"data_path\": \"" + labeled + "\"}\n");
    return dir;
  }();
  const std::vector<std::string_view> parts = fuzz::split_files(fuzz::bytes(data, size));
  fuzz::write_parts(parts, {"run/noisy_labels.npy", "run/splits/epoch_1.json", "run/splits/epoch_1.npy"});
  cli::CaughtReportOptions o;
  o.out_dir = fuzz::temp_dir() + "/page";
  std::ostringstream log;
  fuzz::reads_or_names(run, [&] { cli::write_label_report(run, o, log); });
  return 0;
}
