// The backward engine: accumulation on leaves, shared subgraphs, multi-output nodes, broadcasting, grad mode,
// detach, retain_grad, graph release, anomaly mode.
#include <cmath>

#include "test_util.h"

namespace rematch {
namespace {

using test::values_equal;

Tensor leaf(std::vector<double> v, Shape s = {}) {
  Tensor t = from_vector(v, s);
  t.requires_grad_();
  return t;
}

TEST(Engine, ScalarBackwardAndAccumulation) {
  Tensor x = leaf({1, 2, 3});
  backward(sum(mul(x, x)));
  EXPECT_TRUE(values_equal(x.grad(), {2, 4, 6}));
  backward(sum(x));  // a second graph accumulates into .grad
  EXPECT_TRUE(values_equal(x.grad(), {3, 5, 7}));
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
}

TEST(Engine, DiamondGraphSumsBothPaths) {
  Tensor x = leaf({2});
  Tensor a = mul(x, 3.0), b = exp(x);
  backward(add(a, b));  // d/dx (3x + e^x) = 3 + e^x
  EXPECT_NEAR(x.grad().item<double>(), 3 + std::exp(2.0), 1e-12);
}

TEST(Engine, NonScalarRootNeedsAGradient) {
  Tensor x = leaf({1, 2});
  Tensor y = mul(x, 2.0);
  EXPECT_THROWS_WITH(backward(y), "not a scalar");
  backward(y, from_vector<double>({1, 10}));
  EXPECT_TRUE(values_equal(x.grad(), {2, 20}));
}

TEST(Engine, BroadcastGradientsAreReducedToInputShape) {
  Tensor a = leaf({1, 2, 3}, {3, 1});
  Tensor b = leaf({1, 1, 1, 1}, {1, 4});
  backward(sum(mul(a, b)));
  EXPECT_EQ(a.grad().sizes(), (Shape{3, 1}));
  EXPECT_TRUE(values_equal(a.grad(), {4, 4, 4}));
  EXPECT_TRUE(values_equal(b.grad(), {6, 6, 6, 6}));
}

TEST(Engine, NoGradGuardAndDetach) {
  Tensor x = leaf({1, 2});
  {
    NoGradGuard guard;
    EXPECT_FALSE(mul(x, 2.0).requires_grad());
  }
  EXPECT_TRUE(mul(x, 2.0).requires_grad());
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.storage(), x.storage());
  // y = x * detach(x): only the first factor carries a gradient.
  backward(sum(mul(x, x.detach())));
  EXPECT_TRUE(values_equal(x.grad(), {1, 2}));
}

TEST(Engine, RetainGradOnIntermediate) {
  Tensor x = leaf({1, 2});
  Tensor h = mul(x, 3.0);
  h.retain_grad();
  Tensor other = mul(x, 5.0);  // not retained
  backward(sum(add(mul(h, h), other)));
  EXPECT_TRUE(values_equal(h.grad(), {6, 12}));
  EXPECT_FALSE(other.grad().defined());
  EXPECT_TRUE(values_equal(x.grad(), {23, 41}));
}

TEST(Engine, GraphIsReleasedUnlessRetained) {
  Tensor x = leaf({1, 2});
  Tensor y = sum(exp(x));
  backward(y, Tensor(), /*retain_graph=*/true);
  backward(y);  // allowed once more
  EXPECT_TRUE(values_equal(x.grad(), {2 * std::exp(1.0), 2 * std::exp(2.0)}, 1e-12));
  EXPECT_THROWS_WITH(backward(y), "second time", "retain_graph");
}

TEST(Engine, MultiOutputNodeWithUnusedOutput) {
  Tensor x = leaf({1, 2, 3, 4});
  TensorList parts = chunk(x, 2, 0);
  backward(sum(mul(parts[1], 2.0)));  // parts[0] gets no gradient: the engine supplies zeros
  EXPECT_TRUE(values_equal(x.grad(), {0, 0, 2, 2}));
}

TEST(Engine, PathWithoutGradientDoesNotStallOtherPaths) {
  Tensor x = leaf({1, 2});
  auto [v, idx] = max(x, 0);
  Tensor y = add(sum(x), mul(v, 0.0));
  backward(y);
  EXPECT_TRUE(values_equal(x.grad(), {1, 1}));
}

TEST(Engine, LeafRootAndNoGradRoot) {
  Tensor x = leaf({5});
  backward(x);
  EXPECT_TRUE(values_equal(x.grad(), {1}));
  EXPECT_THROWS_WITH(backward(from_vector<double>({1})), "does not require grad");
}

TEST(Engine, GradientsOfSharedBuffersAreIndependent) {
  Tensor a = leaf({1}), b = leaf({2});
  backward(add(a, b));  // add passes the same gradient tensor to both leaves
  kernels::fill_(a.grad(), 7.0);
  EXPECT_TRUE(values_equal(b.grad(), {1}));
}

TEST(Engine, AnomalyModeNamesTheFirstNonFiniteOp) {
  Tensor x = leaf({-1, 1});
  AnomalyModeGuard anomaly;
  EXPECT_THROWS_WITH(sum(exp(log(x))), "anomaly", "'log'", "NaN or Inf");
}

TEST(Engine, AnomalyModeChecksBackward) {
  Tensor x = leaf({0, 1});
  Tensor y = sqrt(x);  // finite forward, infinite gradient at 0
  AnomalyModeGuard anomaly;
  EXPECT_THROWS_WITH(backward(sum(y)), "anomaly", "'sqrt'");
}

}  // namespace
}  // namespace rematch
