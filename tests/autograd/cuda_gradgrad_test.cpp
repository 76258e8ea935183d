// Second derivatives of every op on CUDA against the CPU (the cases of tests/autograd/gradgrad_cases.h): the
// gradient of Σ <∂f/∂x_k(v), w_k> w.r.t. each input and v, on both devices, in float64. CUDA's transcendental
// functions and summation orders differ from the CPU's by a few ulps, which the tolerance allows. Skipped
// without a CUDA device.
#include "gradgrad_cases.h"

namespace rematch::test {
namespace {

class CudaGradGrad : public ::testing::TestWithParam<OpCase> {};

TEST_P(CudaGradGrad, MatchesCpu) {
  SKIP_WITHOUT_CUDA();
  const OpCase& c = GetParam();
  EXPECT_TRUE(cuda_second_derivatives_match(c.f, c.inputs, 7));
}

std::string case_name(const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Elementwise, CudaGradGrad, ::testing::ValuesIn(elementwise_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Special, CudaGradGrad, ::testing::ValuesIn(special_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Reduce, CudaGradGrad, ::testing::ValuesIn(reduce_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Matmul, CudaGradGrad, ::testing::ValuesIn(matmul_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Shape, CudaGradGrad, ::testing::ValuesIn(shape_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Index, CudaGradGrad, ::testing::ValuesIn(index_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fused, CudaGradGrad, ::testing::ValuesIn(fused_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Sort, CudaGradGrad, ::testing::ValuesIn(sort_cases()), case_name);

// Across devices: a graph that moves to CUDA and back differentiates twice through both moves.
TEST(CudaGradGradDevices, ThroughToDeviceAndBack) {
  SKIP_WITHOUT_CUDA();
  Tensor x = uniform({3}, 150);
  x.requires_grad_();
  GradOptions o;
  o.create_graph = true;
  const Tensor y = to(sum(pow(to(x, Device::cuda(0)), 3.0)), Device::cpu());
  const Tensor g = grad({y}, {x}, {}, o)[0];
  EXPECT_EQ(g.device(), Device::cpu());
  EXPECT_TRUE(all_close(grad({sum(g)}, {x})[0], mul(x.detach(), 6.0), 1e-12, 1e-12));
}

}  // namespace
}  // namespace rematch::test
