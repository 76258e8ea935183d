// Device names and the check of a --device flag (tensor/device.h, implemented in tensor/storage.cpp): what
// parses, and that a CUDA device this process cannot use is refused with the reason, the CUDA runtime's own
// error included, rather than a bare "0 devices".
#include <string>

#include "tensor/cuda/runtime.h"
#include "test_util.h"

namespace rematch {
namespace {

TEST(Device, ParseTakesTheThreeForms) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:3"), Device::cuda(3));
  for (const char* bad : {"gpu", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cuda0", "cuda:99999999999"})
    EXPECT_THROWS_WITH(Device::parse(bad), std::string("'") + bad + "'", "cpu, cuda or cuda:N");
}

TEST(Device, UsableDeviceNamesTheFlagAndTheReason) {
  EXPECT_EQ(usable_device("cpu", "--device"), Device::cpu());
  EXPECT_THROWS_WITH(usable_device("gpu", "--device"), "--device", "'gpu'");
  const std::string reason = cuda_unavailable_reason();
  if (cuda_available()) {
    EXPECT_EQ(reason, "");
    EXPECT_EQ(usable_device("cuda", "--device"), Device::cuda(0));
    EXPECT_THROWS_WITH(usable_device("cuda:99", "--device"), "--device cuda:99", "CUDA device(s) visible");
    return;
  }
  // Without a backend the build says so; with one, the CUDA runtime's error when it gave one.
  if (!cuda::built_with_cuda()) EXPECT_NE(reason.find("no CUDA backend"), std::string::npos) << reason;
  else EXPECT_TRUE(reason.find("cudaGetDeviceCount: ") != std::string::npos || reason == "no CUDA device visible")
      << reason;
  EXPECT_THROWS_WITH(usable_device("cuda", "--device"), "--device cuda", reason);
  EXPECT_THROWS_WITH(usable_device("cuda:1", "--score_device"), "--score_device cuda:1", reason);
}

}  // namespace
}  // namespace rematch
