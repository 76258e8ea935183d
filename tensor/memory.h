// How much memory the tensors of this process hold, on the host and on a CUDA device, and the caches behind
// them (docs/memory.md). One set of counters for both kinds of device:
//   live_bytes         held by live tensor storages now (host: the blocks handed out, rounded up to 64 bytes,
//                      and to 1 MiB from 1 MiB on; CUDA: the memory pool's used bytes);
//   live_peak_bytes    the most live_bytes since the last reset_peak_memory_stats (or the start);
//   cached_bytes       freed blocks kept for reuse (host: the block cache of tensor/storage.cpp; CUDA: the
//                      pool's reserved bytes not in use);
//   cached_peak_bytes  the most cached_bytes since the last reset (CUDA: the pool's reserved peak minus its
//                      used peak, a lower bound);
//   held_peak_bytes    the most live + cached since the last reset (CUDA: the pool's reserved peak): what the
//                      tensors cost the process at its worst.
// Memory mapped from files (a .npy opened with mmap) and other external buffers are not counted.
//
// The host block cache (tensor/storage.cpp) keeps freed blocks of 1 MiB and more only while live + cached stays
// within the live high-water mark and a sixteenth more: the tensors never hold more than a sixteenth above what
// they held live at their peak since the start or the last release_cached_memory, which gives every cached block
// back (between epochs, say). A request no cached block fits is made of cached blocks (split, or moved together
// with mremap) before fresh pages are mapped.
#pragma once

#include <cstddef>

#include "tensor/device.h"

namespace rematch {

struct MemoryStats {
  size_t live_bytes = 0, live_peak_bytes = 0, cached_bytes = 0, cached_peak_bytes = 0, held_peak_bytes = 0;
  // Host only: blocks handed out again from the cache, and fresh allocations of cacheable size (1 MiB and more).
  size_t cache_hits = 0, cache_misses = 0;
};

// Errors for a CUDA device that is not available (a build without CUDA, no such device).
MemoryStats memory_stats(Device device);
// Every peak starts again from the current value; the host's high-water mark with them, so the cache keeps no
// more than what is live now until the tensors grow again.
void reset_peak_memory_stats(Device device);
// Gives every cached block back to the system (host: munmap; CUDA: the pool trimmed to what is in use) and
// returns the bytes released.
size_t release_cached_memory(Device device);

// The process's resident set now and at its peak (VmRSS, VmHWM of /proc/self/status) in bytes; 0 where the
// file is not readable.
size_t resident_bytes();
size_t peak_resident_bytes();

// Sets glibc's malloc for a program whose tensors are this engine's (tensor/storage.cpp): blocks of 1 MiB and
// more mapped, the heap's top kept up to 8 MiB. Process-wide: the rematch program and bench/sgraf_step_bench call
// it at start; a library user (the Python module) keeps its own process's settings. Does nothing under
// AddressSanitizer.
void tune_host_malloc();

}  // namespace rematch
