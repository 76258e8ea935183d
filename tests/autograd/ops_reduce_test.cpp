// float64 gradient checks for every reduction: dims, keepdim on and off, non-contiguous input, ties.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;
using test::values_equal;

Tensor R(Shape s, uint32_t seed) { return random_tensor(s, DType::Float64, seed); }

TEST(OpsReduceGrad, SumDimsKeepdim) {
  for (bool keep : {false, true}) {
    EXPECT_GRADCHECK([keep](const TensorList& x) { return sum(x[0], {1}, keep); }, {R({3, 4, 2}, 1)});
    EXPECT_GRADCHECK([keep](const TensorList& x) { return sum(x[0], {0, 2}, keep); }, {R({3, 4, 2}, 2)});
  }
  EXPECT_GRADCHECK([](const TensorList& x) { return sum(x[0]); }, {R({3, 4}, 3)});
  EXPECT_GRADCHECK([](const TensorList& x) { return sum(transpose(x[0], 0, 1), {1}); }, {R({3, 4}, 4)});
}
TEST(OpsReduceGrad, MeanDimsKeepdim) {
  for (bool keep : {false, true})
    EXPECT_GRADCHECK([keep](const TensorList& x) { return mean(x[0], {-1}, keep); }, {R({3, 4}, 5)});
  EXPECT_GRADCHECK([](const TensorList& x) { return mean(slice(x[0], 1, 0, 4, 2)); }, {R({3, 4}, 6)});
}
TEST(OpsReduceGrad, AmaxAmin) {
  for (bool keep : {false, true}) {
    EXPECT_GRADCHECK([keep](const TensorList& x) { return amax(x[0], {1}, keep); }, {R({3, 5}, 7)});
    EXPECT_GRADCHECK([keep](const TensorList& x) { return amin(x[0], {0}, keep); }, {R({3, 5}, 8)});
  }
}
TEST(OpsReduceGrad, AmaxSplitsTiesEvenly) {
  Tensor x = from_vector<double>({2, 2, 1});
  x.requires_grad_();
  backward(amax(x));
  EXPECT_TRUE(values_equal(x.grad(), {0.5, 0.5, 0}));
}
TEST(OpsReduceGrad, MaxMinWithIndices) {
  for (bool keep : {false, true}) {
    EXPECT_GRADCHECK([keep](const TensorList& x) { return max(x[0], 1, keep).first; }, {R({3, 5}, 9)});
    EXPECT_GRADCHECK([keep](const TensorList& x) { return min(x[0], 0, keep).first; }, {R({3, 5}, 10)});
  }
  EXPECT_GRADCHECK([](const TensorList& x) { return max(transpose(x[0], 0, 1), 0).first; }, {R({3, 5}, 11)});
}
TEST(OpsReduceGrad, Logsumexp) {
  for (bool keep : {false, true})
    EXPECT_GRADCHECK([keep](const TensorList& x) { return logsumexp(x[0], {1}, keep); }, {R({3, 5}, 12)});
  EXPECT_GRADCHECK([](const TensorList& x) { return logsumexp(x[0], {0, 1}); }, {R({3, 5}, 13)});
}
TEST(OpsReduceGrad, VarBiasedUnbiased) {
  for (int64_t c : {0, 1})
    for (bool keep : {false, true})
      EXPECT_GRADCHECK([c, keep](const TensorList& x) { return var(x[0], {1}, c, keep); }, {R({3, 5}, 14)});
  EXPECT_GRADCHECK([](const TensorList& x) { return var(x[0]); }, {R({3, 5}, 15)});
}
TEST(OpsReduceGrad, NormL1L2) {
  for (bool keep : {false, true}) {
    EXPECT_GRADCHECK([keep](const TensorList& x) { return norm(x[0], 2, {1}, keep); }, {R({3, 5}, 16)});
    EXPECT_GRADCHECK([keep](const TensorList& x) { return norm(x[0], 1, {0}, keep); }, {R({3, 5}, 17)});
  }
}
TEST(OpsReduceGrad, NormOfZeroVectorHasZeroGradient) {
  Tensor x = zeros({2, 3}, DType::Float64);
  x.requires_grad_();
  backward(sum(norm(x, 2, {1})));
  EXPECT_TRUE(values_equal(x.grad(), {0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace rematch
