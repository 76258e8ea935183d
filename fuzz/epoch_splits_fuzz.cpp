// A run's per-epoch splits (viz/epoch_splits.cpp): the input is split (fuzz::split_files) into splits/epoch_0.json
// and splits/epoch_0.npy of a run folder; read_epoch_splits reads them. What loads must hold values of its kind's
// range, one per pair.
#include <cmath>

#include "fuzz/fuzz_util.h"
#include "viz/epoch_splits.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string run = fuzz::make_folder("run");
  static const std::string splits = fuzz::make_folder("run/splits");
  const std::vector<std::string_view> parts = fuzz::split_files(fuzz::bytes(data, size));
  fuzz::write_parts(parts, {"run/splits/epoch_0.json", "run/splits/epoch_0.npy"});
  std::vector<viz::EpochSplit> read;
  if (!fuzz::reads_or_names(splits, [&] { read = viz::read_epoch_splits(run); })) return 0;
  for (const viz::EpochSplit& s : read) {
    if (s.epoch < 0) fuzz::fail("a split of a negative epoch loaded");
    for (double v : s.values) {
      const bool ok = s.kind == viz::SplitKind::kept     ? (v == 0 || v == 1)
                      : s.kind == viz::SplitKind::weight ? (v >= 0 && v <= 1)
                                                         : (v >= 0 && std::floor(v) == v);
      if (!ok) fuzz::fail("a split value outside its kind's range loaded: " + std::to_string(v));
    }
    viz::flagged_pairs(s);
  }
  return 0;
}
