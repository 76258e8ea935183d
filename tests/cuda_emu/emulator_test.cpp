// The CUDA emulator (tools/cuda_emu/, docs/cuda_emulator.md) against what CUDA specifies: block reductions
// through shared memory and warp shuffles, each shuffle's lane arithmetic (segments of `width` lanes), the
// __syncthreads votes, a cooperative grid barrier; launches the GPU refuses (too many threads, grid y beyond
// 65,535, dynamic shared memory beyond 48 KiB without the attribute or beyond 227 KiB with it, a cooperative
// grid larger than can be co-resident) refused with CUDA's errors; the faults it stops at; unwritten memory
// poisoned; frees and copies checked; a race's outcome turned around by the reverse schedule; cuBLAS's argument
// checks and beta = 0; CUB's radix order.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <numeric>
#include <vector>

#include "tests/cuda_emu/emulator_kernels.h"

namespace rematch::emu_test {
namespace {

template <class T> T* device_alloc(size_t n) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
  return static_cast<T*>(p);
}

TEST(Emulator, BlockSumsThroughSharedMemoryAndShuffles) {
  const int blocks = 3, threads = 256;
  std::vector<double> in(blocks * threads);
  std::iota(in.begin(), in.end(), 1.0);
  double* d_in = device_alloc<double>(in.size());
  double* d_out = device_alloc<double>(blocks);
  cudaMemcpy(d_in, in.data(), in.size() * sizeof(double), cudaMemcpyHostToDevice);
  ASSERT_EQ(block_sums(d_in, d_out, blocks, threads), cudaSuccess);
  std::vector<double> out(blocks);
  cudaMemcpy(out.data(), d_out, blocks * sizeof(double), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b) {
    const double first = b * threads + 1.0, last = (b + 1) * threads;
    EXPECT_EQ(out[b], (first + last) * threads / 2) << "block " << b;
  }
  cudaFree(d_in);
  cudaFree(d_out);
}

TEST(Emulator, ShufflesReadTheirSourceLaneWithinSegments) {
  const int threads = 64, delta = 3, width = 8, src = 5;
  int* d = device_alloc<int>(4 * threads);
  ASSERT_EQ(shuffles(d, threads, delta, width, src), cudaSuccess);
  std::vector<int> out(4 * threads);
  cudaMemcpy(out.data(), d, out.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int t = 0; t < threads; ++t) {
    const int in_segment = t % width, base = t - in_segment;
    EXPECT_EQ(out[4 * t], 100 + (t ^ 1)) << t;
    EXPECT_EQ(out[4 * t + 1], 100 + (in_segment >= delta ? t - delta : t)) << t;          // up: own below delta
    EXPECT_EQ(out[4 * t + 2], 100 + (in_segment + delta < width ? t + delta : t)) << t;  // down: own at the top
    EXPECT_EQ(out[4 * t + 3], 100 + base + src) << t;
  }
  cudaFree(d);
}

TEST(Emulator, SyncthreadsVotes) {
  int* d = device_alloc<int>(3);
  int out[3];
  for (const int below : {0, 37, 96}) {
    ASSERT_EQ(votes(d, 96, below), cudaSuccess);
    cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
    EXPECT_EQ(out[0], below);
    EXPECT_EQ(out[1], below == 96 ? 1 : 0);
    EXPECT_EQ(out[2], below > 0 ? 1 : 0);
  }
  cudaFree(d);
}

TEST(Emulator, CooperativeGridBarrierAndItsSizeLimit) {
  int64_t* d = device_alloc<int64_t>(1);
  ASSERT_EQ(grid_sum(d, 8, 128), cudaSuccess);
  int64_t out = 0;
  cudaMemcpy(&out, d, sizeof out, cudaMemcpyDeviceToHost);
  EXPECT_EQ(out, 28);  // 0 + 1 + ... + 7
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  // 1,024 threads: two blocks fit on an SM (2,048 threads), so 2 · SMs + 1 blocks cannot all be resident.
  EXPECT_EQ(grid_sum(d, 2 * sms + 1, 1024), cudaErrorCooperativeLaunchTooLarge);
  EXPECT_EQ(cudaGetLastError(), cudaErrorCooperativeLaunchTooLarge);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // read once, then cleared
  cudaFree(d);
}

TEST(Emulator, LaunchesTheGpuRefusesAreRefusedWithItsErrors) {
  EXPECT_EQ(with_shared(1024, 1024, false), cudaSuccess);
  EXPECT_EQ(with_shared(1025, 1025, false), cudaErrorInvalidConfiguration);
  EXPECT_EQ(with_shared(32, 64, false, dim3(1, 65536)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(with_shared(32, 64, false, dim3(1, 65535)), cudaSuccess);
  EXPECT_EQ(with_shared(32, 64 * 1024, false), cudaErrorInvalidValue);  // above 48 KiB without the attribute
  EXPECT_EQ(with_shared(32, 64 * 1024, true), cudaSuccess);
  EXPECT_EQ(with_shared(32, 228 * 1024, true), cudaErrorInvalidValue);  // above the 227 KiB opt-in limit
}

TEST(Emulator, UnwrittenSharedAndDeviceMemoryReadAsNan) {
  float* d = device_alloc<float>(2);
  float host[2];
  cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost);
  EXPECT_TRUE(std::isnan(host[0]) && std::isnan(host[1]));  // a fresh allocation
  ASSERT_EQ(unwritten_shared(d), cudaSuccess);
  cudaMemcpy(host, d, sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_TRUE(std::isnan(host[0]));
  cudaFree(d);
}

TEST(Emulator, FreesAndCopiesAreChecked) {
  char* d = device_alloc<char>(16);
  char host[32] = {};
  EXPECT_EQ(cudaMemcpy(host, d, 16, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host, d, 17, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);  // past the allocation
  EXPECT_EQ(cudaMemcpy(d + 8, host, 9, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(host, 0, 4), cudaErrorInvalidValue);  // host memory
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidValue);  // a second free
  cudaGetLastError();
}

// A race's outcome follows the schedule: the last writer wins, which reverses with the schedule.
TEST(Emulator, TheReverseScheduleTurnsARacesOutcomeAround) {
  int* d = device_alloc<int>(2);
  int out[2];
  ASSERT_EQ(racy_writes(d, 64, 3), cudaSuccess);
  cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
  EXPECT_EQ(out[0], 63);
  EXPECT_EQ(out[1], 2);
  cuda_emu::set_reverse_schedule(true);
  ASSERT_EQ(racy_writes(d, 64, 3), cudaSuccess);
  cuda_emu::set_reverse_schedule(false);
  cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  cudaFree(d);
}

using EmulatorDeathTest = ::testing::Test;

TEST(EmulatorDeathTest, FaultsStopWithTheKernelsName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(shuffle_with_exited_lane(), "exited_lane_kernel.*lane 5, which has exited");
  EXPECT_DEATH(divergent_barrier(), "divergent_barrier_kernel.*no thread can go on");
  EXPECT_DEATH(grid_sync_outside_cooperative_launch(), "plain_grid_sync_kernel.*cudaLaunchCooperativeKernel");
}

TEST(Emulator, CublasChecksLeadingDimensionsAndIgnoresCWhenBetaIsZero) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
  // Column-major A (2×3) and B (3×2); C = A·B.
  const float A[6] = {1, 4, 2, 5, 3, 6};     // [[1, 2, 3], [4, 5, 6]]
  const float B[6] = {7, 9, 11, 8, 10, 12};  // [[7, 8], [9, 10], [11, 12]]
  float C[4] = {NAN, NAN, NAN, NAN};
  const float one = 1, zero = 0;
  ASSERT_EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, A, 2, B, 3, &zero, C, 2), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(C[0], 58);
  EXPECT_EQ(C[1], 139);
  EXPECT_EQ(C[2], 64);
  EXPECT_EQ(C[3], 154);
  // Leading dimensions shorter than the stored rows (lda ≥ m for op N, ≥ k for op T; ldc ≥ m) are refused.
  EXPECT_EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, A, 1, B, 3, &zero, C, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, A, 2, B, 3, &zero, C, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, A, 2, B, 3, &zero, C, 1),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST(Emulator, RadixSortOrdersAsCubAndIsStable) {
  const std::vector<float> keys = {1.0f, -0.0f, 0.0f, -2.0f, 1.0f, -0.0f};
  const std::vector<int> values = {0, 1, 2, 3, 4, 5};
  std::vector<float> keys_out(keys.size());
  std::vector<int> values_out(values.size());
  size_t bytes = 0;
  ASSERT_EQ(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), keys_out.data(), values.data(),
                                            values_out.data(), static_cast<int>(keys.size())),
            cudaSuccess);
  std::vector<char> temp(bytes);
  ASSERT_EQ(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), keys_out.data(), values.data(),
                                            values_out.data(), static_cast<int>(keys.size())),
            cudaSuccess);
  EXPECT_EQ(values_out, (std::vector<int>{3, 1, 5, 2, 0, 4}));  // -2, -0, -0, +0, 1, 1: -0 before +0, stable
}

}  // namespace
}  // namespace rematch::emu_test
