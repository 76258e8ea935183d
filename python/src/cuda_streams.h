// Ordering between rematch's CUDA stream (one per device, tensor/cuda/runtime.h) and a Python framework's stream
// at the DLPack handover, by events (no host wait). Streams are the integers of the DLPack protocol: 1 the legacy
// default stream, 2 the per-thread default stream, anything else a cudaStream_t. Implemented in cuda_streams.cpp
// for a CUDA build and by cuda_streams_disabled.cpp otherwise (no CUDA array can reach the module there).
#pragma once

#include <cstdint>

namespace rematch::python {

// rematch's stream on `device`, to pass as a producer's __dlpack__(stream=): PyTorch then makes it wait for the
// work its current stream has queued on the array.
uintptr_t rematch_stream(int device);

// `consumer`'s later work waits for what rematch has queued on `device` so far (before a framework reads a result).
void consumer_waits_for_rematch(int device, uintptr_t consumer);

// rematch's later work on `device` waits for what `consumer` has queued so far (before rematch frees or reuses a
// buffer a framework was reading).
void rematch_waits_for_consumer(int device, uintptr_t consumer);

}  // namespace rematch::python
