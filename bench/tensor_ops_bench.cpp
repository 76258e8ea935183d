// CPU float32 throughput of the backend primitives (kernels::, no autograd) on the sizes the issue names:
// matmul 512^3 and 2048^3, elementwise add and exp over 16M elements, row softmax of 4096x4096 and a full sum
// over 16M. bench/baselines/tensor_ops.py runs the same work in PyTorch and bench/run_tensor_ops.sh puts the two
// side by side; the case names here and there must match.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace {

using namespace rematch;

constexpr int64_t k16M = int64_t{1} << 24;

// Uniform values in [-1, 1) from a fixed 64-bit LCG: deterministic, and independent of the engine's RNG so the
// benchmark only needs the primitives it measures.
Tensor random_input(const Shape& shape, uint64_t seed) {
  Tensor t = empty(shape, DType::Float32);
  float* p = t.data<float>();
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<float>(static_cast<double>(s >> 40) / double(1 << 23) - 1.0);
  }
  return t;
}

void set_bytes(benchmark::State& state, int64_t bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes_per_iteration);
}

void BM_matmul(benchmark::State& state, int64_t n) {
  Tensor a = random_input({n, n}, 1);
  Tensor b = random_input({n, n}, 2);
  for (auto _ : state) {
    Tensor c = kernels::matmul(a, b);
    benchmark::DoNotOptimize(c.raw_data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_add(benchmark::State& state) {
  Tensor a = random_input({k16M}, 1);
  Tensor b = random_input({k16M}, 2);
  for (auto _ : state) {
    Tensor c = kernels::binary(kernels::BinaryOp::Add, a, b);
    benchmark::DoNotOptimize(c.raw_data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, 3 * k16M * int64_t(sizeof(float)));  // two reads, one write
}

void BM_exp(benchmark::State& state) {
  Tensor x = random_input({k16M}, 1);
  for (auto _ : state) {
    Tensor y = kernels::unary(kernels::UnaryOp::Exp, x);
    benchmark::DoNotOptimize(y.raw_data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, 2 * k16M * int64_t(sizeof(float)));
}

void BM_softmax(benchmark::State& state) {
  const int64_t n = 4096;
  Tensor x = random_input({n, n}, 1);
  for (auto _ : state) {
    Tensor y = kernels::softmax(x, -1);
    benchmark::DoNotOptimize(y.raw_data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, 2 * n * n * int64_t(sizeof(float)));
}

void BM_sum(benchmark::State& state) {
  Tensor x = random_input({k16M}, 1);
  for (auto _ : state) {
    Tensor s = kernels::reduce(kernels::ReduceOp::Sum, x, {}, false);
    benchmark::DoNotOptimize(s.raw_data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, k16M * int64_t(sizeof(float)));
}

void configure(benchmark::internal::Benchmark* b) {
  b->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  configure(benchmark::RegisterBenchmark("matmul_512", BM_matmul, 512));
  configure(benchmark::RegisterBenchmark("matmul_2048", BM_matmul, 2048));
  configure(benchmark::RegisterBenchmark("add_16M", BM_add));
  configure(benchmark::RegisterBenchmark("exp_16M", BM_exp));
  configure(benchmark::RegisterBenchmark("softmax_4096x4096", BM_softmax));
  configure(benchmark::RegisterBenchmark("sum_16M", BM_sum));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
