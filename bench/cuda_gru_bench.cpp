// CUDA time of the SGRAF caption encoder's Bi-GRU (SPEC-backbones §3.3) on cuda:0, float32: batch 128, 14
// steps, input 300, hidden 1024 per direction; forward alone (no graph) and forward + backward (gradients of
// the input and every parameter, loss = output.sum()); every sequence 14 steps ("full") or mixed lengths 4..14
// ("mixed", lengths[b] = 4 + (5·b) mod 11), as bench/gru_bench.cpp on the CPU. The "_tf32" cases allow TF32
// tensor-core math in the GEMMs (cuda::set_allow_tf32), which PyTorch's cuDNN GRU uses by default; the others
// are plain float32 on both sides. bench/baselines/cuda_ops.py times torch.nn.GRU (cuDNN) on the same work
// under the same names and bench/run_cuda.sh compares. Exits 0 with a message without a CUDA device.
#include <cstdio>

#ifdef REMATCH_WITH_CUDA

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench/cuda_bench_setup.h"
#include "bench/cuda_timer.h"
#include "nn/gru.h"
#include "tensor/cuda/cuda_kernels.h"

namespace {

using namespace rematch;

constexpr int kDevice = 0;
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
  Setup(bool mixed, bool tf32) {
    cuda::set_allow_tf32(tf32);
    gru.to(Device::cuda(kDevice));
    const Tensor u = rand({kBatch, kSteps, kInput}, DType::Float32, Device::cpu(), &gen);
    x = kernels::to_device(kernels::scalar_op(kernels::ScalarOp::Add, u, -0.5), Device::cuda(kDevice));
    lengths = from_vector(lengths_for(mixed));
  }
  ~Setup() { cuda::set_allow_tf32(false); }
};

void set_flops(benchmark::State& state, bool backward, bool mixed) {
  double tokens = 0;
  for (int64_t len : lengths_for(mixed)) tokens += static_cast<double>(len);
  // Per direction and token: input and recurrent products, 2·3H·(I + H) FLOP; the backward does twice that.
  const double forward = 2.0 * tokens * 2.0 * 3 * kHidden * (kInput + kHidden);
  state.counters["flop"] = backward ? 3 * forward : forward;
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
