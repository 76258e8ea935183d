// CUDA time on cuda:0 of the Bi-GRU case of bench/gru_bench_case.h (SGRAF's caption encoder, full and mixed
// lengths), as bench/gru_bench.cpp on the CPU: forward alone (no graph) and forward + backward (gradients of
// the input and every parameter, loss = output.sum()). The "_tf32" cases allow TF32 tensor-core math in the
// GEMMs (cuda::set_allow_tf32), which PyTorch's cuDNN GRU uses by default; the others are plain float32 on both
// sides. bench/baselines/cuda_ops.py times torch.nn.GRU (cuDNN) on the same work under the same names and
// bench/run_cuda.sh compares. Exits 0 with a message without a CUDA device.
#include <cstdio>

#ifdef REMATCH_WITH_CUDA

#include <benchmark/benchmark.h>

#include "bench/cuda_bench_setup.h"
#include "bench/cuda_timer.h"
#include "bench/gru_bench_case.h"
#include "tensor/cuda/cuda_kernels.h"

namespace {

using namespace rematch;

constexpr int kDevice = 0;

// The case on cuda:kDevice, with TF32 tensor-core GEMMs allowed or not for its lifetime.
struct Setup : bench::gru_case::Setup {
  Setup(bool mixed, bool tf32) : bench::gru_case::Setup(mixed, Device::cuda(kDevice)) { cuda::set_allow_tf32(tf32); }
  ~Setup() { cuda::set_allow_tf32(false); }
};

void set_flops(benchmark::State& state, bool backward, bool mixed) {
  state.counters["flop"] = bench::gru_case::flop(backward, mixed);
}

void BM_forward(benchmark::State& state, bool mixed, bool tf32) {
  Setup s(mixed, tf32);
  NoGradGuard no_grad;
  bench::EventTimer timer(kDevice);
  timer.run(state, 1, [&] { s.gru(s.x, s.lengths); });
  set_flops(state, false, mixed);
}

void BM_forward_backward(benchmark::State& state, bool mixed, bool tf32) {
  Setup s(mixed, tf32);
  s.x.requires_grad_(true);
  bench::EventTimer timer(kDevice);
  timer.run(state, 1, [&] {
    s.gru.zero_grad();
    s.x.zero_grad();
    const nn::GRUOutput r = s.gru(s.x, s.lengths);
    backward(sum(r.output));
  });
  set_flops(state, true, mixed);
}

void configure(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_cuda_benchmarks("cuda_gru_bench", kDevice, argc, argv, [] {
    configure(benchmark::RegisterBenchmark("bigru_forward_full", BM_forward, false, false));
    configure(benchmark::RegisterBenchmark("bigru_forward_mixed", BM_forward, true, false));
    configure(benchmark::RegisterBenchmark("bigru_fwd_bwd_full", BM_forward_backward, false, false));
    configure(benchmark::RegisterBenchmark("bigru_fwd_bwd_mixed", BM_forward_backward, true, false));
    configure(benchmark::RegisterBenchmark("bigru_fwd_bwd_full_tf32", BM_forward_backward, false, true));
    configure(benchmark::RegisterBenchmark("bigru_fwd_bwd_mixed_tf32", BM_forward_backward, true, true));
  });
}

#else  // a CPU-only build

int main() {
  std::printf("cuda_gru_bench: rematch was built without CUDA; skipping\n");
  return 0;
}

#endif
