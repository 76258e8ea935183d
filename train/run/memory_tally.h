// The memory of a training run (docs/memory.md §1): what the tensors held before the first step
// (parameters, optimizer state, the data set's tensors), at their peak during the training steps and during
// validation, what the block caches held at those peaks, what was given back between epochs, and the process's
// peak resident set; on a CUDA run the device's counters beside the host's. The trainer writes it to memory.md
// in the run folder and prints its summary line. It differs between an uninterrupted run and one resumed (the
// resumed process starts from nothing), which is why results.md, equal for both, only points to it.
#pragma once

#include <cstddef>
#include <string>

#include "tensor/device.h"
#include "tensor/memory.h"

namespace rematch::run {

class MemoryTally {
 public:
  // Starts the peaks of the host (and of `device` when it is a CUDA device) from now.
  explicit MemoryTally(Device device);

  void begin_steps();   // before an epoch's steps: the peaks start again
  void end_steps();     // after them: the steps' peaks are kept
  void end_validation();  // after validation: its peaks are kept, then every cache is given back (between epochs)
  // The checkpoint's tensors: the model's parameters and buffers, and the optimizer's state.
  void set_state_bytes(size_t model_bytes, size_t optimizer_bytes);

  // memory.md: a table of the counters, host and device.
  std::string markdown() const;
  // One line for the end of a run: peak tensor memory, caches at the peak, peak resident set.
  std::string summary() const;

 private:
  struct Side {
    bool on = false;
    Device device;
    size_t start_live = 0, before_steps_live = 0;
    MemoryStats steps, validation;  // the peaks of each phase (the largest over epochs)
    size_t released = 0;            // given back between epochs
  };
  void fold(Side& side, MemoryStats& into);
  Side host_, cuda_;
  size_t model_bytes_ = 0, optimizer_bytes_ = 0;
  bool first_steps_ = true;
};

}  // namespace rematch::run
