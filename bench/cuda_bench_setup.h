// What every CUDA benchmark (bench/cuda_*_bench.cpp) does around its cases: skip without a CUDA device, put
// the device in the report's header, run Google Benchmark on the command line. Only in builds with CUDA.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "tensor/cuda/check.h"
#include "tensor/cuda/runtime.h"

namespace rematch::bench {

// The device's name, driver version and multiprocessor count for the report's header (Google Benchmark
// context, in the JSON output).
inline void add_device_context(int device) {
  cudaDeviceProp prop{};
  REMATCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0;
  REMATCH_CUDA_CHECK(cudaDriverGetVersion(&driver));
  benchmark::AddCustomContext("cuda_device", prop.name);
  benchmark::AddCustomContext("cuda_driver",
                              std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10));
  benchmark::AddCustomContext("cuda_sms", std::to_string(prop.multiProcessorCount));
}

// The body of a CUDA benchmark's main(): without a visible CUDA device, prints that `program` skips and
// returns 0 (no JSON: bench/run_cuda.sh and bench/run_sinkhorn_cuda.sh report the runs as skipped); otherwise
// adds `device` to the report's context, registers the cases (register_cases()) and runs those the command line
// selects. Returns main's exit status.
template <typename RegisterCases>
int run_cuda_benchmarks(const char* program, int device, int argc, char** argv, RegisterCases register_cases) {
  if (cuda::device_count() == 0) {
    const std::string error = cuda::device_query_error();
    std::printf("%s: no CUDA device visible%s%s; skipping\n", program, error.empty() ? "" : ": ", error.c_str());
    return 0;
  }
  add_device_context(device);
  register_cases();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace rematch::bench
