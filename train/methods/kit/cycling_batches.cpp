#include "train/methods/kit/cycling_batches.h"

#include <utility>

namespace rematch::train {
namespace {

int64_t cycle_plan_index(int64_t epoch, int64_t cycle) { return epoch * 4096 + cycle; }

}  // namespace

CyclingBatches::CyclingBatches(data::Batcher loader, int64_t epoch)
    : loader_(std::move(loader)), epoch_(epoch), plan_(loader_.epoch_plan(cycle_plan_index(epoch, 0))) {}

std::vector<int64_t> CyclingBatches::next() {
  if (cursor_ == plan_.size()) {
    plan_ = loader_.epoch_plan(cycle_plan_index(epoch_, ++cycle_));
    cursor_ = 0;
  }
  return plan_[cursor_++];
}

}  // namespace rematch::train
