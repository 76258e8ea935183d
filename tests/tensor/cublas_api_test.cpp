// cuBLAS is loaded when a CUDA product first needs it (tensor/cuda/cublas_api.h), not at start: the process
// maps no libcublas until then, and the first CUDA matmul loads it. Only in a build with the CUDA backend.
#ifdef REMATCH_WITH_CUDA
#include <fstream>
#include <string>

#include "tensor/cuda/cublas_api.h"
#include "tensor/cuda/runtime.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace rematch {
namespace {

// Whether a libcublas (or libcublasLt) is mapped into this process.
bool cublas_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcublas") != std::string::npos) return true;
  return false;
}

TEST(CublasApi, NotLoadedAtStart) {
  // An earlier test of this binary may have multiplied on a GPU; without one nothing may have loaded it.
  if (cuda::cublas_loaded()) GTEST_SKIP() << "an earlier test made a CUDA product";
  EXPECT_FALSE(cublas_mapped()) << "libcublas is mapped although no CUDA product ran: is it linked again?";
  // CPU work and the device query leave it alone.
  const Tensor a = test::random_tensor({8, 8}, DType::Float32, 1);
  kernels::matmul(a, a);
  (void)cuda::device_count();
  EXPECT_FALSE(cuda::cublas_loaded());
  EXPECT_FALSE(cublas_mapped());
}

TEST(CublasApiCuda, LoadedByTheFirstProduct) {
  SKIP_WITHOUT_CUDA();
  const Tensor a = kernels::to_device(test::random_tensor({8, 8}, DType::Float32, 1), Device::cuda(0));
  const Tensor c = kernels::to_device(kernels::matmul(a, a), Device::cpu());
  EXPECT_TRUE(cuda::cublas_loaded());
  EXPECT_TRUE(cublas_mapped());
  EXPECT_EQ(c.numel(), 64);
  const cuda::CublasApi& api = cuda::cublas();
  EXPECT_STREQ(api.status_name(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
}

}  // namespace
}  // namespace rematch
#endif
