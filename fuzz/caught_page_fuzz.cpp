// The run page of `rematch retrieve --run` (train/cli/caught_report.cpp) on a damaged run folder of a fixed small
// data set (4 training images x 5 captions): the input is split (fuzz::split_files) into the run's
// noise_index.npy, metrics.jsonl, splits/epoch_3.json and splits/epoch_3.npy (a missing part: no such file);
// config.json is intact. The page is written, or an Error names a file of the run folder.
#include <sstream>

#include "fuzz/fuzz_util.h"
#include "train/cli/report_pages.h"
#include "train/synth/pairs_world.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string data_dir = [] {
    synth::PairsWorldConfig c;
    c.train_images = 4, c.dev_images = 1, c.test_images = 1, c.regions = 2, c.feature_dim = 2;
    const std::string dir = fuzz::make_folder("data");
    synth::write_pairs_world(synth::make_pairs_world(c), dir);
    return dir;
  }();
  static const std::string run = [] {
    const std::string dir = fuzz::make_folder("run");
    fuzz::make_folder("run/splits");
    fuzz::write_file("run/config.json", "{\"method\": \"l2rm\", \"data_path\": \"" + data_dir +
                                            "\", \"data_name\": \"synth_precomp\"}\n");
    return dir;
  }();
  const std::vector<std::string_view> parts = fuzz::split_files(fuzz::bytes(data, size));
  fuzz::write_parts(parts,
                    {"run/noise_index.npy", "run/metrics.jsonl", "run/splits/epoch_3.json", "run/splits/epoch_3.npy"});
  cli::CaughtReportOptions o;
  o.out_dir = fuzz::temp_dir() + "/page";
  o.images.images_dir = fuzz::temp_dir() + "/no_pictures";  // thumbnails are another target's business
  std::ostringstream log;
  fuzz::reads_or_names(run, [&] { cli::write_caught_report(run, o, log); });
  return 0;
}
