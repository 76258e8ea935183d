// Second derivatives of every module and loss of nn/ (tests/nn/gradgrad_cases.h): gradcheck and gradgradcheck
// of each, in float64 on the CPU. BatchNorm's backward and the GRU's fused backward are the ones with
// derivatives of their own (nn/batchnorm.cpp, nn/gru_double_backward.cpp); the rest are op compositions. Also:
// the first-order gradients of both stay the same to the last bit when create_graph records them.
#include "gradgrad_cases.h"

namespace rematch::test {
namespace {

class ModuleGradGrad : public ::testing::TestWithParam<ModuleCase> {};

TEST_P(ModuleGradGrad, FirstAndSecondDerivatives) {
  const ModuleCase& c = GetParam();
  EXPECT_GRADCHECK(c.f, c.inputs);
  EXPECT_GRADGRADCHECK(c.f, c.inputs);
}

INSTANTIATE_TEST_SUITE_P(Nn, ModuleGradGrad, ::testing::ValuesIn(module_cases()),
                         [](const ::testing::TestParamInfo<ModuleCase>& info) { return info.param.name; });

// The gradient of f w.r.t. every input with and without create_graph: bit for bit the same.
void expect_create_graph_changes_nothing(const ModuleCase& c) {
  TensorList leaves;
  for (const Tensor& x : c.inputs) leaves.push_back(kernels::clone(x).requires_grad_(true));
  const Tensor v = draw(c.f(leaves).sizes(), 40);
  auto gradients = [&](bool record) {
    GradOptions o;
    o.create_graph = record;
    return grad({c.f(leaves)}, leaves, {v}, o);
  };
  const TensorList plain = gradients(false), recorded = gradients(true);
  for (size_t k = 0; k < leaves.size(); ++k) {
    EXPECT_TRUE(recorded[k].requires_grad()) << c.name << " input " << k;
    EXPECT_EQ(plain[k].to_vector<double>(), recorded[k].to_vector<double>()) << c.name << " input " << k;
  }
}

TEST(ModuleGradGradFirstOrder, BatchNormAndGruGradientsAreTheKernelsOwn) {
  for (const ModuleCase& c : module_cases())
    if (c.name.rfind("batch_norm", 0) == 0 || c.name.rfind("gru", 0) == 0) expect_create_graph_changes_nothing(c);
}

}  // namespace
}  // namespace rematch::test
