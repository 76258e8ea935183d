// The engine's grad() and create_graph (autograd/engine.h): gradients returned without touching .grad, only
// the needed part of the graph run, unused and non-differentiable inputs, several outputs, derivatives of any
// order, backward(create_graph), first-order results unchanged by create_graph, saved outputs re-attached, and
// once-differentiable ops refusing a second derivative by name.
#include <cmath>

#include "test_util.h"

namespace rematch {
namespace {

using test::values_equal;

Tensor leaf(std::vector<double> v, Shape s = {}) {
  Tensor t = from_vector(v, s.empty() ? Shape{static_cast<int64_t>(v.size())} : s);
  t.requires_grad_();
  return t;
}

GradOptions create_graph() {
  GradOptions o;
  o.create_graph = true;
  return o;
}

TEST(EngineGrad, ReturnsGradientsAndLeavesDotGradAlone) {
  Tensor x = leaf({1, 2, 3});
  const TensorList g = grad({sum(pow(x, 3.0))}, {x});
  EXPECT_TRUE(values_equal(g[0], {3, 12, 27}, 1e-12));
  EXPECT_FALSE(g[0].requires_grad());
  EXPECT_FALSE(x.grad().defined());
}

TEST(EngineGrad, DerivativesOfEveryOrder) {
  // x⁴ → 4x³ → 12x² → 24x → 24.
  Tensor x = leaf({0.5, -2});
  Tensor y = sum(pow(x, 4.0));
  const std::vector<std::vector<double>> want = {{0.5, -32}, {3, 48}, {12, -48}, {24, 24}};
  for (const auto& w : want) {
    const Tensor g = grad({y}, {x}, {}, create_graph())[0];
    EXPECT_TRUE(values_equal(g, w, 1e-12));
    EXPECT_TRUE(g.requires_grad());
    y = sum(g);
  }
}

TEST(EngineGrad, HessianVectorProductOfACoupledFunction) {
  // f = Σ_i exp(a_i b_i) + a_0² b_1: H v against the Hessian written out.
  Tensor a = leaf({0.3, -0.2}), b = leaf({0.5, 0.7});
  const Tensor f = add(sum(exp(mul(a, b))), mul(square(select(a, 0, 0)), select(b, 0, 1)));
  const TensorList g = grad({f}, {a, b}, {}, create_graph());
  const Tensor va = from_vector<double>({1, -1}), vb = from_vector<double>({2, 0.5});
  const TensorList hv = grad({add(sum(mul(g[0], va)), sum(mul(g[1], vb)))}, {a, b});
  const double a0 = 0.3, a1 = -0.2, b0 = 0.5, b1 = 0.7;
  const double e0 = std::exp(a0 * b0), e1 = std::exp(a1 * b1);
  // ∂²/∂a_i² = b_i² e_i (+2 b_1 for a_0), ∂²/∂a_i∂b_i = e_i (1 + a_i b_i) (+2 a_0 between a_0 and b_1),
  // ∂²/∂b_i² = a_i² e_i.
  const double haa0 = b0 * b0 * e0 + 2 * b1, haa1 = b1 * b1 * e1, hab0 = e0 * (1 + a0 * b0),
               hab1 = e1 * (1 + a1 * b1), ha0b1 = 2 * a0, hbb0 = a0 * a0 * e0, hbb1 = a1 * a1 * e1;
  EXPECT_TRUE(values_equal(hv[0], {haa0 * 1 + hab0 * 2 + ha0b1 * 0.5, haa1 * -1 + hab1 * 0.5}, 1e-12));
  EXPECT_TRUE(values_equal(hv[1], {hab0 * 1 + hbb0 * 2, hab1 * -1 + ha0b1 * 1 + hbb1 * 0.5}, 1e-12));
}

TEST(EngineGrad, TotalDerivativeThroughAnIntermediateInput) {
  // y = h·x with h = 3x: dy/dh = x, and dy/dx = h + 3x = 6x (through h too), as torch.autograd.grad.
  Tensor x = leaf({2});
  Tensor h = mul(x, 3.0);
  const TensorList g = grad({mul(h, x)}, {h, x});
  EXPECT_TRUE(values_equal(g[0], {2}));
  EXPECT_TRUE(values_equal(g[1], {12}));
}

TEST(EngineGrad, RunsOnlyThePartBetweenOutputsAndInputs) {
  // Only the node above h runs; without retain_graph it is freed, the rest of the graph is not.
  Tensor x = leaf({1, 2});
  Tensor h = exp(x);
  Tensor y = sum(square(h));
  const Tensor gh = grad({y}, {h})[0];
  EXPECT_TRUE(values_equal(gh, {2 * std::exp(1.0), 2 * std::exp(2.0)}, 1e-12));
  EXPECT_FALSE(h.grad_fn()->released());
  EXPECT_TRUE(y.grad_fn()->released());
  backward(h, ones({2}, DType::Float64));  // the part below h still works
  EXPECT_TRUE(values_equal(x.grad(), {std::exp(1.0), std::exp(2.0)}, 1e-12));
}

TEST(EngineGrad, UnusedAndNonDifferentiableInputs) {
  Tensor x = leaf({1}), unused = leaf({2});
  const Tensor y = mul(x, 2.0);
  EXPECT_THROWS_WITH(grad({y}, {x, unused}), "input 1", "was not used", "allow_unused");
  GradOptions opt;
  opt.allow_unused = true;
  const TensorList g = grad({y}, {x, unused}, {}, opt);
  EXPECT_TRUE(values_equal(g[0], {2}));
  EXPECT_FALSE(g[1].defined());
  EXPECT_THROWS_WITH(grad({y}, {from_vector<double>({1})}), "input 0", "does not require grad");
  EXPECT_THROWS_WITH(grad({from_vector<double>({1})}, {x}), "output 0", "does not require grad");
}

TEST(EngineGrad, SeveralOutputsWithGradOutputs) {
  Tensor x = leaf({1, 2});
  const Tensor y1 = mul(x, 3.0), y2 = square(x);
  const TensorList g = grad({y1, y2}, {x}, {from_vector<double>({1, 1}), from_vector<double>({10, 100})});
  EXPECT_TRUE(values_equal(g[0], {3 + 20, 3 + 400}));
  EXPECT_THROWS_WITH(grad({y1, y2}, {x}, {from_vector<double>({1, 1})}), "1 grad_outputs for 2 outputs");
  EXPECT_THROWS_WITH(grad({y1}, {x}), "not a scalar");
  EXPECT_THROWS_WITH(grad({y1}, {x}, {from_vector<double>({1, 1, 1})}), "does not match output");
}

TEST(EngineGrad, LeafAsOutputAndInput) {
  Tensor x = leaf({4, 5});
  EXPECT_TRUE(values_equal(grad({x}, {x}, {from_vector<double>({1, 2})})[0], {1, 2}));
}

TEST(EngineGrad, RetainGraphDefaultsToCreateGraph) {
  Tensor x = leaf({1});
  Tensor y = exp(x);
  grad({y}, {x}, {}, create_graph());
  EXPECT_FALSE(y.grad_fn()->released());
  grad({y}, {x});
  EXPECT_TRUE(y.grad_fn()->released());
  EXPECT_THROWS_WITH(grad({y}, {x}), "second time");
}

TEST(EngineGrad, BackwardWithCreateGraphRecordsDotGrad) {
  Tensor x = leaf({1, 3});
  backward(sum(pow(x, 3.0)), Tensor(), false, true);
  const Tensor g = x.grad();
  EXPECT_TRUE(values_equal(g, {3, 27}, 1e-12));
  ASSERT_TRUE(g.requires_grad());
  x.zero_grad();
  backward(sum(g));  // d/dx Σ 3x² = 6x
  EXPECT_TRUE(values_equal(x.grad(), {6, 18}, 1e-12));
  x.zero_grad();
  // Without create_graph the accumulated gradient carries no graph.
  backward(sum(pow(x, 3.0)));
  EXPECT_FALSE(x.grad().requires_grad());
}

TEST(EngineGrad, FirstOrderResultsDoNotDependOnCreateGraph) {
  // The same formulas and kernels with and without a recorded graph: equal to the last bit.
  const Tensor a0 = test::random_tensor({4, 5}, DType::Float64, 1), b0 = test::random_tensor({5, 3}, DType::Float64, 2);
  auto gradients = [&](bool record) {
    Tensor a = kernels::clone(a0), b = kernels::clone(b0);
    a.requires_grad_();
    b.requires_grad_();
    const Tensor s = softmax(matmul(l2_normalize(a, 1), b), 1);
    const Tensor y = add(sum(log_softmax(mul(s, 3.0), 0)), sum(sqrt(add(exp(b), 1.0))));
    GradOptions opt;
    opt.create_graph = record;
    return grad({y}, {a, b}, {}, opt);
  };
  const TensorList plain = gradients(false), recorded = gradients(true);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_FALSE(plain[k].requires_grad());
    EXPECT_TRUE(recorded[k].requires_grad());
    EXPECT_EQ(plain[k].to_vector<double>(), recorded[k].to_vector<double>()) << "input " << k;
  }
}

TEST(EngineGrad, SavedOutputsDifferentiateThroughTheirNode) {
  // exp saves its output: d²/dx² e^x = e^x needs the saved output's own gradient.
  Tensor x = leaf({0.5});
  const Tensor g = grad({exp(x)}, {x}, {}, create_graph())[0];
  EXPECT_NEAR(grad({g}, {x})[0].item<double>(), std::exp(0.5), 1e-15);
  EXPECT_THROWS_WITH(saved_output(g), "outside a backward function");
}

// An op whose backward is not written with differentiable ops: 2x, with its gradient computed by kernels.
Tensor doubled_by_kernels(const Tensor& x) {
  return record_once_differentiable("doubled_by_kernels", {x}, kernels::scalar_op(kernels::ScalarOp::Mul, x, 2.0),
                                    [](const TensorList& g) {
                                      return TensorList{kernels::scalar_op(kernels::ScalarOp::Mul, g[0], 2.0)};
                                    });
}

TEST(EngineGrad, OnceDifferentiableOpsNameThemselvesWhenDifferentiatedTwice) {
  Tensor x = leaf({1, 2});
  const Tensor y = sum(square(doubled_by_kernels(x)));
  EXPECT_TRUE(values_equal(grad({y}, {x}, {}, create_graph())[0], {8, 16}));  // first order as usual
  const Tensor g = grad({y}, {x}, {}, create_graph())[0];
  ASSERT_TRUE(g.requires_grad());
  EXPECT_THROWS_WITH(grad({sum(g)}, {x}), "'doubled_by_kernels'", "no second derivative");
  // Without create_graph nothing is marked.
  EXPECT_FALSE(grad({y}, {x})[0].requires_grad());
}

TEST(EngineGrad, CastsCarrySecondDerivatives) {
  // d²/dx² (x as float32)³ = 6x, through the float32 graph and back.
  Tensor x = leaf({0.75, -1.5});
  const Tensor y = to(sum(pow(to(x, DType::Float32), 3.0)), DType::Float64);
  const Tensor g = grad({y}, {x}, {}, create_graph())[0];
  EXPECT_EQ(g.dtype(), DType::Float64);
  EXPECT_TRUE(values_equal(grad({sum(g)}, {x})[0], {4.5, -9}, 1e-5));
}

TEST(EngineGrad, AnomalyModeNamesTheNodeOfASecondBackward) {
  Tensor x = leaf({0, 1});
  const Tensor g = grad({sum(pow(x, 1.5))}, {x}, {}, create_graph())[0];  // 1.5 √x: finite at 0
  AnomalyModeGuard anomaly;
  EXPECT_THROWS_WITH(grad({sum(g)}, {x}), "anomaly", "NaN or Inf");  // 0.75 / √x is not
}

}  // namespace
}  // namespace rematch
