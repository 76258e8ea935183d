// Device time for the CUDA benchmarks (bench/cuda_*_bench.cpp): CUDA events recorded on the engine's stream
// around a batch of calls, reported to Google Benchmark as manual time per call. A batch keeps the device
// busy while the host enqueues the next call, so launch overhead counts only where it leaves the device idle,
// as in bench/baselines/cuda_ops.py, which times PyTorch the same way.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include "tensor/cuda/check.h"
#include "tensor/cuda/runtime.h"

namespace rematch::bench {

class EventTimer {
 public:
  explicit EventTimer(int device) : stream_(cuda::stream(device)) {
    REMATCH_CUDA_CHECK(cudaSetDevice(device));
    REMATCH_CUDA_CHECK(cudaEventCreate(&start_));
    REMATCH_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);  // no throw from a destructor
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Times `calls` calls of f per benchmark iteration, after one warm-up call (module load, pool growth,
  // cuBLAS handle creation stay out of the numbers).
  template <typename F> void run(benchmark::State& state, int calls, F&& f) {
    f();
    REMATCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (auto _ : state) {
      REMATCH_CUDA_CHECK(cudaEventRecord(start_, stream_));
      for (int i = 0; i < calls; ++i) f();
      REMATCH_CUDA_CHECK(cudaEventRecord(stop_, stream_));
      REMATCH_CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      REMATCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      state.SetIterationTime(static_cast<double>(ms) * 1e-3 / calls);
    }
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace rematch::bench
