// The batches of a loader taken one after another while another loader's epoch runs, a new shuffle each time they
// run out: the official co-training loops re-create the unlabelled (NCR and BiCro `co_train.py: train`) or noisy
// (CREAM `train.py: train_one_epoch`) loader's iterator when it is exhausted. Shuffle c of epoch e is the loader's
// plan e * 4096 + c, so every cycle of every epoch draws its own order, reproducibly (docs/methods/ncr.md).
#pragma once

#include <cstdint>
#include <vector>

#include "train/data/batcher.h"

namespace rematch::train {

class CyclingBatches {
 public:
  // `loader` draws from at least one caption.
  CyclingBatches(data::Batcher loader, int64_t epoch);
  // The next batch's caption indices.
  std::vector<int64_t> next();

 private:
  data::Batcher loader_;
  int64_t epoch_;
  int64_t cycle_ = 0;
  std::vector<std::vector<int64_t>> plan_;
  size_t cursor_ = 0;
};

}  // namespace rematch::train
