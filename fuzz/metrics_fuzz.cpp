// The metrics.jsonl of a run being resumed (train/run/run_folder.cpp): MetricsLog opens it (dropping a torn last
// line), the resume rule cuts it after the checkpoint's (epoch, step), and every record is read back.
#include "fuzz/fuzz_util.h"
#include "train/run/run_folder.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("metrics.jsonl", fuzz::bytes(data, size));
  fuzz::reads_or_names(path, [&] { run::read_metrics(path); });
  fuzz::reads_or_names(path, [&] {
    run::MetricsLog log(path);
    log.truncate_after(1, 3);
    for (const run::MetricRecord& r : log.records())
      if (r.epoch > 1 || (r.epoch == 1 && r.step > 3)) fuzz::fail("a record after the cut was kept");
  });
  return 0;
}
