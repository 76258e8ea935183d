// Second derivatives of every differentiable op (tests/autograd/gradgrad_cases.h), family by family: each case's
// gradient (gradcheck) and its gradient's gradient (gradgradcheck, through the graph create_graph records)
// against central differences in float64. The test names list the ops.
#include "gradgrad_cases.h"

namespace rematch::test {
namespace {

class GradGrad : public ::testing::TestWithParam<OpCase> {};

TEST_P(GradGrad, FirstAndSecondDerivatives) {
  const OpCase& c = GetParam();
  EXPECT_GRADCHECK(c.f, c.inputs);
  EXPECT_GRADGRADCHECK(c.f, c.inputs);
}

std::string case_name(const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Elementwise, GradGrad, ::testing::ValuesIn(elementwise_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Special, GradGrad, ::testing::ValuesIn(special_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Reduce, GradGrad, ::testing::ValuesIn(reduce_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Matmul, GradGrad, ::testing::ValuesIn(matmul_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Shape, GradGrad, ::testing::ValuesIn(shape_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Index, GradGrad, ::testing::ValuesIn(index_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Fused, GradGrad, ::testing::ValuesIn(fused_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Sort, GradGrad, ::testing::ValuesIn(sort_cases()), case_name);

// The third derivative too, for the ops whose backward is an op of its own (softmax's, log_softmax's, the
// placing of a slice, index_add/scatter_add) and those that save their output: gradgradcheck of the gradient.
TEST(GradGradGrad, ThirdDerivatives) {
  const std::vector<OpCase> cases = {
      {"softmax", [](const TensorList& x) { return softmax(x[0], 1); }, {uniform({2, 3}, 130)}},
      {"log_softmax", [](const TensorList& x) { return log_softmax(x[0], 0); }, {uniform({3, 2}, 131)}},
      {"slice", [](const TensorList& x) { return exp(slice(x[0], 0, 1, 3)); }, {uniform({3}, 132)}},
      {"gather", [](const TensorList& x) { return exp(gather(x[0], 0, index_on(x[0], {1, 1, 0}, {3}))); },
       {uniform({2}, 133)}},
      {"tanh", [](const TensorList& x) { return tanh(x[0]); }, {uniform({3}, 134)}},
      {"digamma", [](const TensorList& x) { return digamma(x[0]); }, {uniform({3}, 135, 0.5, 4)}},
  };
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.name);
    // f's gradient for a fixed upstream gradient, as a function of the inputs: its gradgradcheck checks f'''.
    const Tensor v = uniform(c.f(c.inputs).sizes(), 136);
    auto gradient = [&](const TensorList& x) {
      GradOptions o;
      o.create_graph = grad_enabled();  // as gradgradcheck's own gradient (autograd/gradcheck.cpp)
      GradModeGuard record_f(true);
      return grad({c.f(x)}, x, {v}, o)[0];
    };
    EXPECT_GRADGRADCHECK(gradient, c.inputs);
  }
}

// gradgradcheck itself: an op whose backward treats its input as a constant (captured detached) has the right
// first derivative and a wrong second one, which gradgradcheck must report.
TEST(GradGradCheck, CatchesAWrongSecondDerivative) {
  auto cube = [](const TensorList& x) {
    const Tensor in = x[0];
    return record("cube_with_detached_input", {in}, kernels::unary(kernels::UnaryOp::Square, in) * in.detach(),
                  [d = in.detach()](const TensorList& g) { return TensorList{mul(g[0], mul(square(d), 3.0))}; });
  };
  const TensorList inputs{uniform({3}, 142, 0.5, 1.5)};
  EXPECT_GRADCHECK(cube, inputs);
  const GradcheckResult r = gradgradcheck(cube, inputs);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("analytic 0 vs numeric"), std::string::npos) << r.message;
}

// The helper the CUDA twins compare with (test_util.h), on the CPU where the answer is known: for y = x³,
// s = Σ 3x²·v·w, so ∂s/∂x = 6x·v·w and ∂s/∂v = 3x²·w.
TEST(GradGradHelper, SecondDerivativesOfACube) {
  const Tensor x = uniform({4}, 143);
  const TensorList h = second_derivatives([](const TensorList& t) { return pow(t[0], 3.0); }, {x}, Device::cpu(), 3);
  ASSERT_EQ(h.size(), 2u);
  const Tensor v = random_tensor({4}, DType::Float64, 3), w = random_tensor({4}, DType::Float64, 4);
  EXPECT_TRUE(all_close(h[0], mul(mul(mul(x, 6.0), v), w), 1e-14, 1e-14));
  EXPECT_TRUE(all_close(h[1], mul(mul(square(x), 3.0), w), 1e-14, 1e-14));
}

TEST(GradGradZeroRows, L2NormalizeSecondDerivativeIsFiniteAtAZeroRow) {
  // y = x / (||x|| + eps) at x = 0: the first derivative is 1/eps (the norm's subgradient 0), and the second
  // has no 0/0 in it.
  Tensor x = kernels::cat({zeros({1, 3}, DType::Float64), uniform({1, 3}, 140)}, 0);
  x.requires_grad_();
  GradOptions o;
  o.create_graph = true;
  const Tensor g = grad({sum(mul(l2_normalize(x, 1), uniform({2, 3}, 141)))}, {x}, {}, o)[0];
  const Tensor h = grad({sum(square(g))}, {x})[0];
  EXPECT_FALSE(has_non_finite(g));
  EXPECT_FALSE(has_non_finite(h));
}

}  // namespace
}  // namespace rematch::test
