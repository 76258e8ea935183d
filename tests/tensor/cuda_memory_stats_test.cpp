// The device memory statistics of tensor/cuda/runtime.h (memory_stats, reset_peak_memory_stats): a tensor's
// allocation raises "used" and its peak, freeing it lowers "used" again (the stream-ordered free is counted once
// the call has waited for the stream) while the peak stays, and a reset brings the peak down to what is in use.
// Without a usable device the calls refuse with the reason.
#include <cstdint>
#include <string>

#include "tensor/creation.h"
#include "tensor/cuda/runtime.h"
#include "test_util.h"

namespace rematch {
namespace {

constexpr size_t k64MiB = size_t(64) << 20;

TEST(CudaMemoryStats, AllocationFreeAndResetMoveTheCounters) {
  SKIP_WITHOUT_CUDA();
  cuda::reset_peak_memory_stats(0);
  const cuda::MemoryStats before = cuda::memory_stats(0);
  EXPECT_EQ(before.used_peak_bytes, before.used_bytes);
  EXPECT_EQ(before.reserved_peak_bytes, before.reserved_bytes);
  EXPECT_LE(before.used_bytes, before.reserved_bytes);

  cuda::MemoryStats held;
  {
    const Tensor t = empty({int64_t(k64MiB / sizeof(float))}, DType::Float32, Device::cuda(0));
    held = cuda::memory_stats(0);
  }
  EXPECT_GE(held.used_bytes, before.used_bytes + k64MiB);
  EXPECT_GE(held.used_peak_bytes, before.used_peak_bytes + k64MiB);
  EXPECT_GE(held.reserved_bytes, held.used_bytes);
  EXPECT_GE(held.reserved_peak_bytes, held.reserved_bytes);

  const cuda::MemoryStats freed = cuda::memory_stats(0);
  EXPECT_EQ(freed.used_bytes, before.used_bytes);             // back in the pool
  EXPECT_EQ(freed.used_peak_bytes, held.used_peak_bytes);     // the peak stays
  EXPECT_GE(freed.reserved_bytes, held.used_bytes);           // cached (release threshold raised), not returned
  EXPECT_EQ(freed.reserved_peak_bytes, held.reserved_peak_bytes);

  cuda::reset_peak_memory_stats(0);
  const cuda::MemoryStats reset = cuda::memory_stats(0);
  EXPECT_EQ(reset.used_peak_bytes, reset.used_bytes);
  EXPECT_EQ(reset.used_bytes, before.used_bytes);
  EXPECT_EQ(reset.reserved_peak_bytes, reset.reserved_bytes);
}

TEST(CudaMemoryStats, DeviceOutOfRangeIsRefused) {
  SKIP_WITHOUT_CUDA();
  const int n = cuda::device_count();
  EXPECT_THROWS_WITH(cuda::memory_stats(n), "cuda:" + std::to_string(n), "is not available");
  EXPECT_THROWS_WITH(cuda::reset_peak_memory_stats(n), "cuda:" + std::to_string(n), "is not available");
}

// Runs everywhere: a build without CUDA says so, a CUDA build without a device names the device and the count.
TEST(MemoryStats, WithoutADeviceTheCallsSayWhy) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is visible: CudaMemoryStats covers this build";
  if (!cuda::built_with_cuda()) {
    EXPECT_THROWS_WITH(cuda::memory_stats(0), "cuda:0", "built without CUDA");
    EXPECT_THROWS_WITH(cuda::reset_peak_memory_stats(0), "cuda:0", "built without CUDA");
    return;
  }
  EXPECT_THROWS_WITH(cuda::memory_stats(0), "cuda:0 is not available", "0 CUDA device(s) visible");
  EXPECT_THROWS_WITH(cuda::reset_peak_memory_stats(0), "cuda:0 is not available", "0 CUDA device(s) visible");
}

}  // namespace
}  // namespace rematch
