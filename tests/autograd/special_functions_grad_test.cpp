// float64 gradient checks of lgamma and digamma (autograd/ops_elementwise.cpp; DECL's KL term,
// docs/methods/decl.md §3): positive arguments from near the pole at 0 to large ones, negative non-integers,
// broadcasting and a non-contiguous input. Their values against torch: tests/tensor/special_functions_test.cpp.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

Tensor R(Shape s, uint32_t seed, double lo, double hi) { return random_tensor(s, DType::Float64, seed, lo, hi); }

TEST(SpecialFunctionsGrad, LgammaPositive) {
  EXPECT_GRADCHECK([](const TensorList& x) { return lgamma(x[0]); }, {R({8}, 1, 0.05, 3.0)});
  EXPECT_GRADCHECK([](const TensorList& x) { return lgamma(x[0]); }, {R({8}, 2, 5.0, 400.0)});
}

TEST(SpecialFunctionsGrad, DigammaPositive) {
  EXPECT_GRADCHECK([](const TensorList& x) { return digamma(x[0]); }, {R({8}, 3, 0.2, 3.0)});
  EXPECT_GRADCHECK([](const TensorList& x) { return digamma(x[0]); }, {R({8}, 4, 8.0, 12.0)});  // around 10
  EXPECT_GRADCHECK([](const TensorList& x) { return digamma(x[0]); }, {R({8}, 5, 20.0, 3000.0)});
}

TEST(SpecialFunctionsGrad, NegativeNonIntegers) {
  // Within (−2.9, −2.1): away from the poles by more than the finite-difference step.
  EXPECT_GRADCHECK([](const TensorList& x) { return lgamma(x[0]); }, {R({6}, 6, -2.9, -2.1)});
  EXPECT_GRADCHECK([](const TensorList& x) { return digamma(x[0]); }, {R({6}, 7, -2.9, -2.1)});
}

TEST(SpecialFunctionsGrad, ComposedBroadcastAndStrided) {
  // The shape of DECL's KL: Σ (α − 1)(ψ(α) − ψ(Σα)) + log Γ(Σα) − Σ log Γ(α), on a transposed view.
  EXPECT_GRADCHECK(
      [](const TensorList& x) {
        const Tensor a = transpose(x[0], 0, 1);
        const Tensor s = sum(a, {1}, true);
        return sum((a - 1.0) * (digamma(a) - digamma(s)), {1}, true) + lgamma(s) - sum(lgamma(a), {1}, true);
      },
      {R({4, 3}, 8, 1.0, 30.0)});
}

}  // namespace
}  // namespace rematch
