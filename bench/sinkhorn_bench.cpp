// CPU time of the log-domain Sinkhorn (ot/), fixed iterations (tol = 0, so no early stop; the marginal test
// runs once, after the last sweep): L2RM's size 129×129 at ε = 0.01 for 1000 sweeps, one problem and a batch
// of 128, and a large 2000×2000 problem for 10 sweeps; float64 (what POT and L2RM's NumPy loop use) and
// float32. Costs are uniform in [0, 1), marginals uniform. bench/baselines/sinkhorn.py runs the same work in
// POT, NumPy and PyTorch; bench/run_sinkhorn.sh puts them side by side (case names match).
// Also "l2rm_partial_129": one L2RM rematch call as training makes it (128×128 cost, diagonal masked, dummy
// row/column, ‖Δu‖₂ < 1e-3, ε = 0.01, float64) on a fixed pseudo-random cost; the baseline is the NumPy
// transcription of L2RM's partial_ot on the same cost, which stops at the same sweep.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ot/ot.h"

namespace {

using namespace rematch;

Tensor uniform_cost(const Shape& shape, DType dt) {
  Generator gen(0);
  return rand(shape, dt, Device::cpu(), &gen);
}

ot::SinkhornOptions fixed(int64_t iterations) {
  ot::SinkhornOptions o;
  o.epsilon = 0.01;
  o.max_iter = iterations;
  o.tol = 0;
  o.check_every = iterations;
  return o;
}

// Entry visits per second: a sweep visits every entry twice (row half-step, column half-step).
void set_counters(benchmark::State& state, int64_t batch, int64_t n, int64_t m, int64_t iterations) {
  state.counters["entries/s"] =
      benchmark::Counter(2.0 * batch * n * m * iterations, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_log(benchmark::State& state, DType dt, int64_t batch, int64_t n, int64_t iterations) {
  const Tensor C = uniform_cost({batch, n, n}, dt);
  const ot::SinkhornOptions o = fixed(iterations);
  for (auto _ : state) {
    ot::BatchedSinkhornResult r = ot::sinkhorn_batched(C, Tensor(), Tensor(), o);
    if (r.iterations[0] != iterations) state.SkipWithError("stopped early");
    benchmark::DoNotOptimize(r.plan.raw_data());
  }
  set_counters(state, batch, n, n, iterations);
}

// A deterministic pseudo-random cost in [0, 1) that bench/baselines/sinkhorn.py builds identically.
Tensor hashed_cost(int64_t n) {
  std::vector<double> c(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<double>((i * 7919 + j * 104729) % 1009) / 1009.0;
  return from_vector(c, {n, n});
}

void BM_l2rm_partial(benchmark::State& state) {
  const Tensor C = hashed_cost(128);
  ot::SinkhornOptions o;
  o.epsilon = 0.01;
  o.tol = 1e-3;
  o.stop = ot::StopRule::PotentialChange;
  o.mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(128), DType::Bool));
  int64_t sweeps = 0;
  for (auto _ : state) {
    ot::SinkhornResult r = ot::partial_sinkhorn(C, Tensor(), Tensor(), 0.1, o);
    sweeps = r.iterations;
    benchmark::DoNotOptimize(r.plan.raw_data());
  }
  state.counters["sweeps"] = static_cast<double>(sweeps);
}

void configure(benchmark::internal::Benchmark* b, double min_time) {
  b->UseRealTime()->MinTime(min_time)->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const std::string t = dt == DType::Float64 ? "f64" : "f32";
    configure(benchmark::RegisterBenchmark(("log_" + t + "_129x129_B1_1000it").c_str(), BM_log, dt, 1, 129, 1000), 1.0);
    configure(benchmark::RegisterBenchmark(("log_" + t + "_129x129_B128_1000it").c_str(), BM_log, dt, 128, 129, 1000), 1.0);
    configure(benchmark::RegisterBenchmark(("log_" + t + "_2000x2000_10it").c_str(), BM_log, dt, 1, 2000, 10), 1.0);
  }
  configure(benchmark::RegisterBenchmark("l2rm_partial_129", BM_l2rm_partial), 1.0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
