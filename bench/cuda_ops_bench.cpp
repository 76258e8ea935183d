// CUDA float32 throughput of the backend primitives (kernels::, no autograd) on cuda:0, next to the ceilings
// they are measured against in the same run:
//   copy_d2d_256MiB                 cudaMemcpyAsync device to device: the bandwidth the elementwise cases are a
//                                   share of (bytes read + bytes written)
//   add_64M, exp_64M                contiguous binary and unary ops over 64M floats (256 MiB per tensor)
//   add_broadcast_8192x8192         [8192, 8192] + [8192]: a row vector broadcast over the rows
//   softmax_4096x4096, softmax_262144x128   row softmax, long and short rows (compared with PyTorch)
//   matmul_1024, matmul_4096, bmm_64x256x256   kernels::matmul, against the same products through cuBLAS
//   cublas_1024, cublas_4096, cublas_bmm_64x256x256   cuBLAS's gemm called directly on the same stream (the
//                                   overhead floor; through cuda::cublas(), the table kernels::matmul uses)
// Each case reports the bytes one call must move (inputs read once, output written once) as the "bytes"
// counter; bench/run_cuda.sh turns them into bandwidth and ratios. Exits 0 with a message when there is no
// CUDA device (or the build has no CUDA).
#include <cstdio>

#ifdef REMATCH_WITH_CUDA

#include <benchmark/benchmark.h>

#include <cstdint>

#include "bench/cuda_bench_setup.h"
#include "bench/cuda_timer.h"
#include "tensor/cuda/cublas_check.h"
#include "tensor/tensor.h"

namespace {

using namespace rematch;

constexpr int kDevice = 0;
const Device kCuda = Device::cuda(kDevice);
constexpr int64_t k64M = int64_t{1} << 26;
constexpr double kFloat = sizeof(float);

Tensor random_input(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return rand(shape, DType::Float32, kCuda, &gen);  // U[0, 1): never zeros, which could run faster
}

void set_bytes(benchmark::State& state, double bytes) { state.counters["bytes"] = bytes; }

// A cuBLAS handle of the benchmark's own on the engine's stream, default math (no TF32, as kernels::matmul).
cublasHandle_t raw_cublas() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    REMATCH_CUBLAS_CHECK(cuda::cublas().create(&h));
    REMATCH_CUBLAS_CHECK(cuda::cublas().set_stream(h, cuda::stream(kDevice)));
    return h;
  }();
  return handle;
}

void BM_copy(benchmark::State& state) {
  const Tensor src = random_input({k64M}, 1);
  const Tensor dst = empty({k64M}, DType::Float32, kCuda);
  const size_t bytes = static_cast<size_t>(k64M) * sizeof(float);
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] {
    REMATCH_CUDA_CHECK(
        cudaMemcpyAsync(dst.raw_data(), src.raw_data(), bytes, cudaMemcpyDeviceToDevice, timer.stream()));
  });
  set_bytes(state, 2.0 * static_cast<double>(bytes));
}

void BM_add(benchmark::State& state) {
  const Tensor a = random_input({k64M}, 1), b = random_input({k64M}, 2);
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] { kernels::binary(kernels::BinaryOp::Add, a, b); });
  set_bytes(state, 3.0 * k64M * kFloat);
}

void BM_exp(benchmark::State& state) {
  const Tensor x = random_input({k64M}, 1);
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] { kernels::unary(kernels::UnaryOp::Exp, x); });
  set_bytes(state, 2.0 * k64M * kFloat);
}

void BM_add_broadcast(benchmark::State& state) {
  const int64_t n = 8192;
  const Tensor a = random_input({n, n}, 1), row = random_input({n}, 2);
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] { kernels::binary(kernels::BinaryOp::Add, a, row); });
  set_bytes(state, (2.0 * n * n + n) * kFloat);
}

void BM_softmax(benchmark::State& state, int64_t rows, int64_t cols) {
  const Tensor x = random_input({rows, cols}, 1);
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] { kernels::softmax(x, -1); });
  set_bytes(state, 2.0 * rows * cols * kFloat);
}

// [batch, n, n] x [batch, n, n] (batch 0: plain 2-D matrices).
void BM_matmul(benchmark::State& state, int64_t batch, int64_t n) {
  const Shape shape = batch == 0 ? Shape{n, n} : Shape{batch, n, n};
  const Tensor a = random_input(shape, 1), b = random_input(shape, 2);
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] { kernels::matmul(a, b); });
  const double matrices = batch == 0 ? 1 : batch;
  state.counters["flop"] = 2.0 * matrices * n * n * n;
  set_bytes(state, 3.0 * matrices * n * n * kFloat);
}

// The same products through cuBLAS directly into a preallocated output: row-major C = A·B is the
// column-major Cᵀ = Bᵀ·Aᵀ, so B goes first.
void BM_cublas(benchmark::State& state, int64_t batch, int64_t n) {
  const Shape shape = batch == 0 ? Shape{n, n} : Shape{batch, n, n};
  const Tensor a = random_input(shape, 1), b = random_input(shape, 2), c = empty(shape, DType::Float32, kCuda);
  const float one = 1, zero = 0;
  const int N = static_cast<int>(n);
  const float* pa = static_cast<const float*>(a.raw_data());
  const float* pb = static_cast<const float*>(b.raw_data());
  float* pc = static_cast<float*>(c.raw_data());
  cublasHandle_t h = raw_cublas();
  bench::EventTimer timer(kDevice);
  timer.run(state, 10, [&] {
    if (batch == 0)
      REMATCH_CUBLAS_CHECK(
          cuda::cublas().sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, pb, N, pa, N, &zero, pc, N));
    else
      REMATCH_CUBLAS_CHECK(cuda::cublas().sgemm_strided_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, pb, N,
                                                                n * n, pa, N, n * n, &zero, pc, N, n * n,
                                                                static_cast<int>(batch)));
  });
  const double matrices = batch == 0 ? 1 : batch;
  state.counters["flop"] = 2.0 * matrices * n * n * n;
  set_bytes(state, 3.0 * matrices * n * n * kFloat);
}

void configure(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->MinTime(0.3)->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_cuda_benchmarks("cuda_ops_bench", kDevice, argc, argv, [] {
    configure(benchmark::RegisterBenchmark("copy_d2d_256MiB", BM_copy));
    configure(benchmark::RegisterBenchmark("add_64M", BM_add));
    configure(benchmark::RegisterBenchmark("exp_64M", BM_exp));
    configure(benchmark::RegisterBenchmark("add_broadcast_8192x8192", BM_add_broadcast));
    configure(benchmark::RegisterBenchmark("softmax_4096x4096", BM_softmax, 4096, 4096));
    configure(benchmark::RegisterBenchmark("softmax_262144x128", BM_softmax, 262144, 128));
    configure(benchmark::RegisterBenchmark("matmul_1024", BM_matmul, 0, 1024));
    configure(benchmark::RegisterBenchmark("cublas_1024", BM_cublas, 0, 1024));
    configure(benchmark::RegisterBenchmark("matmul_4096", BM_matmul, 0, 4096));
    configure(benchmark::RegisterBenchmark("cublas_4096", BM_cublas, 0, 4096));
    configure(benchmark::RegisterBenchmark("bmm_64x256x256", BM_matmul, 64, 256));
    configure(benchmark::RegisterBenchmark("cublas_bmm_64x256x256", BM_cublas, 64, 256));
  });
}

#else  // a CPU-only build

int main() {
  std::printf("cuda_ops_bench: rematch was built without CUDA; skipping\n");
  return 0;
}

#endif
