// CPU time of the Bi-GRU case of bench/gru_bench_case.h (SGRAF's caption encoder, full and mixed lengths):
// forward alone (no graph) and forward + backward (gradients of the input and every parameter, loss =
// output.sum()). bench/baselines/gru.py runs the same work in PyTorch (packed sequences for "mixed") and
// bench/run_gru.sh puts the two side by side; case names match.
#include <benchmark/benchmark.h>

#include "bench/gru_bench_case.h"

namespace {

using namespace rematch;

using bench::gru_case::Setup;

void set_flops(benchmark::State& state, bool backward, bool mixed) {
  state.counters["FLOP/s"] = benchmark::Counter(bench::gru_case::flop(backward, mixed),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_forward(benchmark::State& state, bool mixed) {
  Setup s(mixed, Device::cpu());
  NoGradGuard no_grad;
  for (auto _ : state) {
    nn::GRUOutput r = s.gru(s.x, s.lengths);
    benchmark::DoNotOptimize(r.output.raw_data());
    benchmark::ClobberMemory();
  }
  set_flops(state, false, mixed);
}

void BM_forward_backward(benchmark::State& state, bool mixed) {
  Setup s(mixed, Device::cpu());
  s.x.requires_grad_(true);
  for (auto _ : state) {
    s.gru.zero_grad();
    s.x.zero_grad();
    nn::GRUOutput r = s.gru(s.x, s.lengths);
    backward(sum(r.output));
    benchmark::DoNotOptimize(s.x.grad().raw_data());
    benchmark::ClobberMemory();
  }
  set_flops(state, true, mixed);
}

void configure(benchmark::internal::Benchmark* b) {
  b->UseRealTime()->MinTime(2.0)->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  configure(benchmark::RegisterBenchmark("bigru_forward_full", BM_forward, false));
  configure(benchmark::RegisterBenchmark("bigru_forward_mixed", BM_forward, true));
  configure(benchmark::RegisterBenchmark("bigru_fwd_bwd_full", BM_forward_backward, false));
  configure(benchmark::RegisterBenchmark("bigru_fwd_bwd_mixed", BM_forward_backward, true));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
