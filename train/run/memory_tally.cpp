#include "train/run/memory_tally.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace rematch::run {
namespace {

std::string mib(size_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

}  // namespace

MemoryTally::MemoryTally(Device device) {
  host_.on = true;
  host_.device = Device::cpu();
  if (device.is_cuda()) {
    cuda_.on = true;
    cuda_.device = device;
  }
  for (Side* side : {&host_, &cuda_}) {
    if (!side->on) continue;
    reset_peak_memory_stats(side->device);
    side->start_live = memory_stats(side->device).live_bytes;
  }
}

void MemoryTally::fold(Side& side, MemoryStats& into) {
  const MemoryStats s = memory_stats(side.device);
  into.live_peak_bytes = std::max(into.live_peak_bytes, s.live_peak_bytes);
  into.cached_peak_bytes = std::max(into.cached_peak_bytes, s.cached_peak_bytes);
  into.held_peak_bytes = std::max(into.held_peak_bytes, s.held_peak_bytes);
  into.cache_hits = s.cache_hits;  // counted since the start
  into.cache_misses = s.cache_misses;
}

void MemoryTally::begin_steps() {
  for (Side* side : {&host_, &cuda_}) {
    if (!side->on) continue;
    if (first_steps_) side->before_steps_live = memory_stats(side->device).live_bytes;
    reset_peak_memory_stats(side->device);
  }
  first_steps_ = false;
}

void MemoryTally::end_steps() {
  for (Side* side : {&host_, &cuda_})
    if (side->on) fold(*side, side->steps);
  for (Side* side : {&host_, &cuda_})
    if (side->on) reset_peak_memory_stats(side->device);
}

void MemoryTally::end_validation() {
  for (Side* side : {&host_, &cuda_}) {
    if (!side->on) continue;
    fold(*side, side->validation);
    side->released += release_cached_memory(side->device);
    reset_peak_memory_stats(side->device);
  }
}

void MemoryTally::set_state_bytes(size_t model_bytes, size_t optimizer_bytes) {
  model_bytes_ = model_bytes;
  optimizer_bytes_ = optimizer_bytes;
}

std::string MemoryTally::markdown() const {
  std::ostringstream s;
  s << "# Memory of this run\n\n"
    << "Tensor memory as the library counts it (tensor/memory.h, docs/memory.md): live = held by live tensors; "
       "cached = freed blocks kept for reuse; held = live + cached. Peaks are the largest over the epochs. This "
       "file describes the process that wrote it (a resumed run's, from its resumption).\n\n"
    << "| | host";
  if (cuda_.on) s << " | " << cuda_.device.str();
  s << " |\n|---|---:" << (cuda_.on ? "|---:" : "") << "|\n";
  const auto row = [&](const char* what, auto value) {
    s << "| " << what << " | " << mib(value(host_));
    if (cuda_.on) s << " | " << mib(value(cuda_));
    s << " |\n";
  };
  row("live before the first step (parameters, optimizer state, data set, ...)",
      [](const Side& x) { return x.before_steps_live; });
  row("peak live, training steps", [](const Side& x) { return x.steps.live_peak_bytes; });
  row("peak held (live + cached), training steps", [](const Side& x) { return x.steps.held_peak_bytes; });
  row("peak cached, training steps", [](const Side& x) { return x.steps.cached_peak_bytes; });
  row("peak live, validation", [](const Side& x) { return x.validation.live_peak_bytes; });
  row("peak held, validation", [](const Side& x) { return x.validation.held_peak_bytes; });
  row("cache given back between epochs (total)", [](const Side& x) { return x.released; });
  s << "\nCheckpoint state: model parameters and buffers " << mib(model_bytes_) << ", optimizer state "
    << mib(optimizer_bytes_) << ". Host block cache: " << host_.steps.cache_hits << " hits, "
    << host_.steps.cache_misses << " misses (blocks of 1 MiB and more, whole run). Peak resident set of the "
    << "process: " << mib(peak_resident_bytes()) << ".\n";
  return s.str();
}

std::string MemoryTally::summary() const {
  const Side& main = cuda_.on ? cuda_ : host_;
  std::ostringstream s;
  s << "memory: peak tensor memory " << mib(std::max(main.steps.live_peak_bytes, main.validation.live_peak_bytes))
    << " live, " << mib(std::max(main.steps.held_peak_bytes, main.validation.held_peak_bytes))
    << " with the cache (" << main.device.str() << "); peak resident set " << mib(peak_resident_bytes());
  return s.str();
}

}  // namespace rematch::run
