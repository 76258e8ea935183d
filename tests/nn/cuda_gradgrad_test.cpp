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
  EXPECT_TRUE(cuda_second_derivatives_match(c.f, c.inputs, 11));
}

INSTANTIATE_TEST_SUITE_P(Nn, CudaModuleGradGrad, ::testing::ValuesIn(module_cases()),
                         [](const ::testing::TestParamInfo<ModuleCase>& info) { return info.param.name; });

}  // namespace
}  // namespace rematch::test
