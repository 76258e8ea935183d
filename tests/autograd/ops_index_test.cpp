// float64 gradient checks for the index ops of autograd/ops_index.cpp: repeated indices (whose gradients must
// add up), non-contiguous inputs built inside f, and embedding's forward values and errors.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

Tensor R(Shape s, uint32_t seed) { return random_tensor(s, DType::Float64, seed); }
// Shape defaults to [n], also for one value (from_vector would make that 0-d).
Tensor ids(const std::vector<int64_t>& v, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return from_vector(v, shape);
}

TEST(OpsIndexGrad, IndexSelectRepeatedIndices) {
  const Tensor idx = ids({2, 0, 2, 2});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return index_select(x[0], 0, idx); }, {R({3, 2}, 1)});
}
TEST(OpsIndexGrad, IndexSelectDim1Int32) {
  const Tensor idx = kernels::cast(ids({1, 1, 3}), DType::Int32);
  EXPECT_GRADCHECK([idx](const TensorList& x) { return index_select(x[0], 1, idx); }, {R({2, 4, 2}, 2)});
}
TEST(OpsIndexGrad, IndexSelectNonContiguous) {
  const Tensor idx = ids({0, 3, 0});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return index_select(transpose(x[0], 0, 1), 0, idx); },
                   {R({3, 4}, 3)});
}
TEST(OpsIndexGrad, GatherRepeatedIndices) {
  const Tensor idx = ids({1, 1, 0, 2, 2, 2}, {2, 3});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return gather(x[0], 1, idx); }, {R({2, 3}, 4)});
}
TEST(OpsIndexGrad, GatherDim0IndexSmallerThanInput) {
  const Tensor idx = ids({2, 0, 2, 2}, {2, 2});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return gather(x[0], 0, idx); }, {R({3, 3}, 5)});
}
TEST(OpsIndexGrad, GatherNonContiguous) {
  const Tensor idx = ids({0, 0, 1, 1, 1, 0}, {3, 2});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return gather(transpose(x[0], 0, 1), 1, idx); }, {R({2, 3}, 6)});
}
TEST(OpsIndexGrad, ScatterAddRepeatedIndices) {
  // Gradients for both x and src; three src entries land on the same x element.
  const Tensor idx = ids({0, 0, 0, 1, 2, 1}, {2, 3});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return scatter_add(x[0], 1, idx, x[1]); },
                   {R({2, 4}, 7), R({2, 3}, 8)});
}
TEST(OpsIndexGrad, ScatterAddSrcLargerThanIndex) {
  // Only src's leading [2, 2] block is scattered; the rest gets zero gradient.
  const Tensor idx = ids({1, 1, 0, 1}, {2, 2});
  EXPECT_GRADCHECK([idx](const TensorList& x) { return scatter_add(x[0], 0, idx, x[1]); },
                   {R({2, 2}, 9), R({3, 3}, 10)});
}
TEST(OpsIndexGrad, ScatterAddNonContiguous) {
  const Tensor idx = ids({2, 2, 0, 1, 0, 0}, {3, 2});
  EXPECT_GRADCHECK(
      [idx](const TensorList& x) { return scatter_add(transpose(x[0], 0, 1), 1, idx, slice(x[1], 1, 0, 4, 2)); },
      {R({3, 3}, 11), R({3, 4}, 12)});
}
TEST(OpsIndexGrad, EmbeddingRepeatedIds) {
  const Tensor id = ids({3, 0, 3, 3, 1, 0}, {2, 3});
  EXPECT_GRADCHECK([id](const TensorList& x) { return embedding(x[0], id); }, {R({4, 2}, 13)});
}
TEST(OpsIndexGrad, EmbeddingNonContiguousWeightAndIds) {
  const Tensor id = transpose(ids({0, 2, 2, 1}, {2, 2}), 0, 1);
  EXPECT_GRADCHECK([id](const TensorList& x) { return embedding(transpose(x[0], 0, 1), id); }, {R({3, 3}, 14)});
}

TEST(OpsIndex, EmbeddingForwardAndAccumulatedGradient) {
  Tensor w = from_vector<double>({0, 1, 10, 11, 20, 21}, {3, 2});
  w.requires_grad_(true);
  Tensor y = embedding(w, ids({2, 2, 0}));
  EXPECT_EQ(y.sizes(), (Shape{3, 2}));
  EXPECT_TRUE(test::values_equal(y, {20, 21, 20, 21, 0, 1}));
  EXPECT_EQ(embedding(w, scalar_tensor(1, DType::Int64)).sizes(), (Shape{2}));
  backward(y, from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_TRUE(test::values_equal(w.grad(), {5, 6, 0, 0, 4, 6}));
}

TEST(OpsIndex, IndexTensorsGetNoGradient) {
  Tensor x = R({3, 2}, 15);
  x.requires_grad_(true);
  Tensor idx = ids({1, 0});
  Tensor y = index_select(x, 0, idx);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(idx.requires_grad());
  EXPECT_FALSE(index_select(R({3, 2}, 16), 0, idx).requires_grad());
}

TEST(OpsIndex, EmbeddingErrors) {
  Tensor w = zeros({4, 2}, DType::Float64);
  EXPECT_THROWS_WITH(embedding(w, ids({1, 4})), "embedding", "index 4", "size 4");
  EXPECT_THROWS_WITH(embedding(w, from_vector<double>({1, 2})), "embedding", "int32 or int64", "float64");
  EXPECT_THROWS_WITH(embedding(zeros({4}, DType::Float64), ids({1})), "embedding", "weight", "[4]");
}

}  // namespace
}  // namespace rematch
