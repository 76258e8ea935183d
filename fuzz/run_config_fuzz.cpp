// The JSON the report pages read (train/cli/run_config_json.cpp, report_pages.cpp): the input is split
// (fuzz::split_files) into a run's config.json and a Karpathy split JSON (--karpathy_json). The fields the
// pages use are read with their types checked, whether the folder holds a rematch run is decided
// (train/run/run_folder_contents.h), and the Karpathy file names the images of a 2-image test split; any
// failure is an Error naming the file.
#include <sstream>

#include "fuzz/fuzz_util.h"
#include "train/cli/report_pages.h"
#include "train/cli/run_config_json.h"
#include "train/run/run_folder_contents.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string run = fuzz::make_folder("run");
  const std::vector<std::string_view> parts = fuzz::split_files(fuzz::bytes(data, size));
  const std::string config = fuzz::write_file("run/config.json", parts.empty() ? std::string_view() : parts[0]);
  const std::string karpathy = fuzz::write_file("karpathy.json", parts.size() > 1 ? parts[1] : std::string_view());
  fuzz::reads_or_names(config, [&] {
    const nlohmann::json j = cli::read_run_config_json(run);
    for (const char* key : {"method", "data_path", "data_name", "vocab_path", "test_split"})
      cli::config_string(j, run, key);
    cli::config_integer(j, run, "valid_len", -1);
  });
  run::holds_rematch_config(run);
  cli::ImageSource images;
  images.karpathy_json = karpathy;
  std::vector<std::string> names;
  if (fuzz::reads_or_names(karpathy, [&] { names = cli::split_image_names(run, "none", "test", 2, images); }) &&
      names.size() != 2)
    fuzz::fail("the Karpathy file did not name one image per image");
  return 0;
}
