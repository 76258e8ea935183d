// Second derivatives of every module and loss of nn/ on CUDA against the CPU (the cases of
// tests/nn/gradgrad_cases.h), in float64: BatchNorm's backward, the GRU's fused CUDA backward and its derivative
// through the composite layer, the losses. Skipped without a CUDA device.
#include "gradgrad_cases.h"

namespace rematch::test {
namespace {

class CudaModuleGradGrad : public ::testing::TestWithParam<ModuleCase> {};

TEST_P(CudaModuleGradGrad, MatchesCpu) {
  SKIP_WITHOUT_CUDA();
  const ModuleCase& c = GetParam();
  const TensorList cpu = second_derivatives(c.f, c.inputs, Device::cpu(), 11);
  const TensorList gpu = second_derivatives(c.f, c.inputs, Device::cuda(0), 11);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t k = 0; k < cpu.size(); ++k) {
    ASSERT_EQ(cpu[k].defined(), gpu[k].defined()) << "input " << k;
    if (cpu[k].defined()) EXPECT_TRUE(all_close(gpu[k], cpu[k], 1e-10, 1e-9)) << "input " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Nn, CudaModuleGradGrad, ::testing::ValuesIn(module_cases()),
                         [](const ::testing::TestParamInfo<ModuleCase>& info) { return info.param.name; });

}  // namespace
}  // namespace rematch::test
