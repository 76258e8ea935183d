// GPU time of the log-domain Sinkhorn kernels (ot/cuda/), float32, fixed sweeps (tol = 0, the rule tested once,
// after the last sweep), costs uniform in [0, 1) drawn on the device, uniform marginals. Each timed call is one
// ot::sinkhorn_batched on cuda:0, which returns once its results are on the host.
//   cuda_f32_129x129_B{1,128,1024}_1000it  L2RM's problem size (ε = 0.01), batches of 1, 128 and 1024 problems;
//                                          bench/baselines/sinkhorn_cuda.py runs the same sweeps in PyTorch eager.
//   cuda_f32_{43000x11,32000x201,32768x32768}_{lo,hi}  one large problem (ε = 0.05) at two sweep counts
//                                          (cases "lo" and "hi"); bench/run_sinkhorn_cuda.sh takes the time per
//                                          sweep as their difference over the difference of sweeps, which cancels
//                                          the per-call work (value checks, the plan written, the copy back).
// Exits 0 with a message when there is no CUDA device (or the build has no CUDA).
#include <cstdio>

#ifdef REMATCH_WITH_CUDA

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "bench/cuda_bench_setup.h"
#include "ot/ot.h"

namespace {

using namespace rematch;

constexpr int kDevice = 0;

void BM_solve(benchmark::State& state, int64_t batch, int64_t n, int64_t m, double eps, int64_t sweeps) {
  Generator gen(0);
  const Tensor C = rand({batch, n, m}, DType::Float32, Device::cuda(kDevice), &gen);
  ot::SinkhornOptions o;
  o.epsilon = eps;
  o.max_iter = sweeps;
  o.tol = 0;
  o.check_every = sweeps;
  ot::sinkhorn_batched(C, Tensor(), Tensor(), o);  // warm-up: module load, memory pool
  for (auto _ : state) {
    const ot::BatchedSinkhornResult r = ot::sinkhorn_batched(C, Tensor(), Tensor(), o);
    if (r.iterations[0] != sweeps) state.SkipWithError("stopped early");
  }
  state.counters["sweeps"] = static_cast<double>(sweeps);
  state.counters["entries/s"] = benchmark::Counter(2.0 * static_cast<double>(batch * n * m * sweeps),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}

void add(const std::string& name, int64_t batch, int64_t n, int64_t m, double eps, int64_t sweeps, double min_time) {
  benchmark::RegisterBenchmark(name.c_str(), BM_solve, batch, n, m, eps, sweeps)
      ->UseRealTime()
      ->MinTime(min_time)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_cuda_benchmarks("sinkhorn_cuda_bench", kDevice, argc, argv, [] {
    for (const int64_t batch : {1, 128, 1024})
      add("cuda_f32_129x129_B" + std::to_string(batch) + "_1000it", batch, 129, 129, 0.01, 1000, 0.5);
    struct Large {
      const char* name;
      int64_t n, m, lo, hi;
    };
    for (const Large& l : {Large{"43000x11", 43000, 11, 100, 1100}, Large{"32000x201", 32000, 201, 100, 1100},
                           Large{"32768x32768", 32768, 32768, 5, 25}}) {
      add(std::string("cuda_f32_") + l.name + "_lo", 1, l.n, l.m, 0.05, l.lo, 0.3);
      add(std::string("cuda_f32_") + l.name + "_hi", 1, l.n, l.m, 0.05, l.hi, 0.3);
    }
  });
}

#else  // a CPU-only build

int main() {
  std::printf("sinkhorn_cuda_bench: rematch was built without CUDA; skipping\n");
  return 0;
}

#endif
