// CPU float32 time of the SGRAF caption encoder's Bi-GRU (SPEC-backbones §3.3): batch 128, 14 steps, input
// 300, hidden 1024 per direction, forward alone (no graph) and forward + backward (gradients of the input and
// every parameter, loss = output.sum()). Two length patterns: every sequence 14 steps ("full"), and mixed
// lengths 4..14 ("mixed", lengths[b] = 4 + (5·b) mod 11, mean 9). bench/baselines/gru.py runs the same work in
// PyTorch (packed sequences for "mixed") and bench/run_gru.sh puts the two side by side; case names match.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "nn/gru.h"

namespace {

using namespace rematch;

constexpr int64_t kBatch = 128, kSteps = 14, kInput = 300, kHidden = 1024;

std::vector<int64_t> lengths_for(bool mixed) {
  std::vector<int64_t> lengths(kBatch, kSteps);
  if (mixed)
    for (int64_t b = 0; b < kBatch; ++b) lengths[b] = 4 + (5 * b) % 11;
  return lengths;
}

struct Setup {
  Generator gen{0};
  nn::GRU gru{kInput, kHidden, true, DType::Float32, &gen};
  Tensor x;
  Tensor lengths;
  explicit Setup(bool mixed) {
    x = kernels::scalar_op(kernels::ScalarOp::Add, rand({kBatch, kSteps, kInput}, DType::Float32, Device::cpu(), &gen),
                           -0.5);
    lengths = from_vector(lengths_for(mixed));
  }
};

void set_flops(benchmark::State& state, bool backward, bool mixed) {
  double tokens = 0;
  for (int64_t len : lengths_for(mixed)) tokens += static_cast<double>(len);
  // Per direction and token: input and recurrent products, 2·3H·(I + H) FLOP; the backward does twice that.
  const double forward = 2.0 * tokens * 2.0 * 3 * kHidden * (kInput + kHidden);
  state.counters["FLOP/s"] =
      benchmark::Counter(backward ? 3 * forward : forward, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_forward(benchmark::State& state, bool mixed) {
  Setup s(mixed);
  NoGradGuard no_grad;
  for (auto _ : state) {
    nn::GRUOutput r = s.gru(s.x, s.lengths);
    benchmark::DoNotOptimize(r.output.raw_data());
    benchmark::ClobberMemory();
  }
  set_flops(state, false, mixed);
}

void BM_forward_backward(benchmark::State& state, bool mixed) {
  Setup s(mixed);
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
