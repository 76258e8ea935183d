// Gradient checks (float64) of sort and topk values (the gradient returns to the source positions) along
// the last dim and dim 0, on transposed inputs; argsort and the indices carry no gradient.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

// Continuous random values: ties (where the sort order, hence the gradient, jumps) have probability 0.
Tensor rnd(const Shape& s, uint32_t seed) { return random_tensor(s, DType::Float64, seed); }

TEST(OpsSortGrad, SortAscendingLastDim) {
  EXPECT_GRADCHECK([](const TensorList& x) { return sort(x[0], -1, false).first; }, {rnd({3, 5}, 1)});
}

TEST(OpsSortGrad, SortDescendingDim0) {
  EXPECT_GRADCHECK([](const TensorList& x) { return sort(x[0], 0, true).first; }, {rnd({4, 3}, 2)});
}

TEST(OpsSortGrad, SortTransposedInput) {
  EXPECT_GRADCHECK([](const TensorList& x) { return sort(transpose(x[0], 0, 1), 1, false).first; },
                   {rnd({5, 3}, 3)});
}

TEST(OpsSortGrad, TopkLargestLastDim) {
  EXPECT_GRADCHECK([](const TensorList& x) { return topk(x[0], 2, -1, true).first; }, {rnd({3, 5}, 4)});
}

TEST(OpsSortGrad, TopkSmallestDim0) {
  EXPECT_GRADCHECK([](const TensorList& x) { return topk(x[0], 3, 0, false).first; }, {rnd({5, 2, 3}, 5)});
}

TEST(OpsSortGrad, TopkTransposedInput) {
  EXPECT_GRADCHECK([](const TensorList& x) { return topk(transpose(x[0], 0, 1), 1, 1, true).first; },
                   {rnd({4, 3}, 6)});
}

TEST(OpsSort, IndicesAndArgsortCarryNoGradient) {
  Tensor x = kernels::clone(rnd({3, 4}, 7)).requires_grad_(true);
  auto [values, indices] = sort(x, 1, true);
  EXPECT_TRUE(values.requires_grad());
  EXPECT_FALSE(indices.requires_grad());
  EXPECT_EQ(indices.dtype(), DType::Int64);
  Tensor order = argsort(x, 1, true);
  EXPECT_FALSE(order.requires_grad());
  EXPECT_TRUE(test::values_equal(order, indices.to_vector<double>()));
}

TEST(OpsSort, SortGradientLandsAtSourcePositions) {
  Tensor x = from_vector<double>({3, 1, 2}).requires_grad_(true);
  Tensor w = from_vector<double>({10, 20, 30});
  backward(sum(mul(sort(x).first, w)));  // sorted = [1, 2, 3] from positions [1, 2, 0]
  EXPECT_TRUE(test::values_equal(x.grad(), {30, 10, 20}));
}

TEST(OpsSortErrors, TopkKOutOfRange) {
  EXPECT_THROWS_WITH(topk(rnd({2, 3}, 8), 4, 1, true), "topk", "k = 4", "size 3");
}

}  // namespace
}  // namespace rematch
