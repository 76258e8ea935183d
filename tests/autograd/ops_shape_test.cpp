// float64 gradient checks for every view and shape op of autograd/ops_shape.cpp, each also on a
// non-contiguous input (a transpose or strided slice built inside f), plus forward shapes of the list ops.
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

Tensor R(Shape s, uint32_t seed) { return random_tensor(s, DType::Float64, seed); }
// A [cols, rows] transposed view of a [rows, cols] leaf: the usual non-contiguous input.
Tensor T(const Tensor& x) { return transpose(x, 0, 1); }

TEST(OpsShapeGrad, Reshape) {
  EXPECT_GRADCHECK([](const TensorList& x) { return reshape(x[0], {3, -1}); }, {R({2, 3}, 1)});
}
TEST(OpsShapeGrad, ReshapeNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return reshape(T(x[0]), {2, 1, 6}); }, {R({4, 3}, 2)});
}
TEST(OpsShapeGrad, View) {
  EXPECT_GRADCHECK([](const TensorList& x) { return view(x[0], {-1}); }, {R({2, 3}, 3)});
}
TEST(OpsShapeGrad, ViewNonContiguous) {
  // Rows 1..2 of a [4, 3] leaf are a strided block that still views as [6]; a transpose views as [3, 1, 2].
  EXPECT_GRADCHECK([](const TensorList& x) { return view(slice(x[0], 0, 1, 3), {6}); }, {R({4, 3}, 4)});
  EXPECT_GRADCHECK([](const TensorList& x) { return view(T(x[0]), {3, 1, 2}); }, {R({2, 3}, 5)});
}
TEST(OpsShapeGrad, Transpose) {
  EXPECT_GRADCHECK([](const TensorList& x) { return transpose(x[0], 0, 2); }, {R({2, 3, 2}, 6)});
}
TEST(OpsShapeGrad, TransposeNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return transpose(slice(x[0], 1, 0, 4, 2), -1, 0); }, {R({3, 4}, 7)});
}
TEST(OpsShapeGrad, Permute) {
  EXPECT_GRADCHECK([](const TensorList& x) { return permute(x[0], {2, 0, 1}); }, {R({2, 3, 4}, 8)});
}
TEST(OpsShapeGrad, PermuteNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return permute(transpose(x[0], 0, 2), {1, -1, 0}); },
                   {R({2, 3, 2}, 9)});
}
TEST(OpsShapeGrad, Narrow) {
  EXPECT_GRADCHECK([](const TensorList& x) { return narrow(x[0], 1, 1, 2); }, {R({3, 4}, 10)});
}
TEST(OpsShapeGrad, NarrowNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return narrow(T(x[0]), -1, -2, 2); }, {R({3, 4}, 11)});
}
TEST(OpsShapeGrad, SliceWithStep) {
  EXPECT_GRADCHECK([](const TensorList& x) { return slice(x[0], 0, -4, 5, 2); }, {R({5, 2}, 12)});
}
TEST(OpsShapeGrad, SliceNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return slice(T(x[0]), 1, 1, 3); }, {R({4, 3}, 13)});
}
TEST(OpsShapeGrad, Select) {
  EXPECT_GRADCHECK([](const TensorList& x) { return select(x[0], 1, -1); }, {R({3, 4}, 14)});
}
TEST(OpsShapeGrad, SelectNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return select(T(x[0]), 0, 2); }, {R({2, 4}, 15)});
}
TEST(OpsShapeGrad, SqueezeDimAndAll) {
  EXPECT_GRADCHECK([](const TensorList& x) { return squeeze(x[0], 1); }, {R({3, 1, 2}, 16)});
  EXPECT_GRADCHECK([](const TensorList& x) { return squeeze(x[0]); }, {R({1, 3, 1, 2}, 17)});
}
TEST(OpsShapeGrad, SqueezeNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return squeeze(transpose(x[0], 0, 2), -1); }, {R({1, 3, 2}, 18)});
  EXPECT_GRADCHECK([](const TensorList& x) { return squeeze(transpose(x[0], 0, 2)); }, {R({1, 3, 2}, 19)});
}
TEST(OpsShapeGrad, Unsqueeze) {
  EXPECT_GRADCHECK([](const TensorList& x) { return unsqueeze(x[0], -1); }, {R({2, 3}, 20)});
}
TEST(OpsShapeGrad, UnsqueezeNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return unsqueeze(T(x[0]), 1); }, {R({2, 3}, 21)});
}
TEST(OpsShapeGrad, Expand) {
  // A size-1 dim broadcast and a new leading dim: each input element feeds several outputs.
  EXPECT_GRADCHECK([](const TensorList& x) { return expand(x[0], {2, 3, 4}); }, {R({3, 1}, 22)});
}
TEST(OpsShapeGrad, ExpandNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return expand(unsqueeze(T(x[0]), 1), {3, 2, -1}); },
                   {R({2, 3}, 23)});
}
TEST(OpsShapeGrad, Flatten) {
  EXPECT_GRADCHECK([](const TensorList& x) { return flatten(x[0], 1); }, {R({2, 3, 2}, 24)});
}
TEST(OpsShapeGrad, FlattenNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return flatten(transpose(x[0], 0, 2)); }, {R({2, 3, 2}, 25)});
}
TEST(OpsShapeGrad, Cat) {
  EXPECT_GRADCHECK([](const TensorList& x) { return cat({x[0], x[1], x[2]}, 1); },
                   {R({2, 3}, 26), R({2, 1}, 27), R({2, 2}, 28)});
}
TEST(OpsShapeGrad, CatNonContiguousAndRepeatedInput) {
  // The same input twice: both stretches of the gradient add up in it.
  EXPECT_GRADCHECK([](const TensorList& x) { return cat({T(x[0]), x[1], T(x[0])}, 0); },
                   {R({2, 3}, 29), R({1, 2}, 30)});
}
TEST(OpsShapeGrad, Stack) {
  EXPECT_GRADCHECK([](const TensorList& x) { return stack({x[0], x[1]}, 0); }, {R({2, 3}, 31), R({2, 3}, 32)});
  EXPECT_GRADCHECK([](const TensorList& x) { return stack({x[0], x[1]}, -1); }, {R({2, 3}, 33), R({2, 3}, 34)});
}
TEST(OpsShapeGrad, StackNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return stack({T(x[0]), x[1], T(x[0])}, 1); },
                   {R({2, 3}, 35), R({3, 2}, 36)});
}
TEST(OpsShapeGrad, SplitBySizeWithUnusedPiece) {
  // Pieces [2, 2, 1] along dim 1; the middle piece is unused, so its gradient arrives undefined.
  EXPECT_GRADCHECK(
      [](const TensorList& x) {
        TensorList p = split(x[0], 2, 1);
        return cat({mul(p[0], 3.0), square(p[2])}, 1);
      },
      {R({3, 5}, 37)});
}
TEST(OpsShapeGrad, SplitBySizesNonContiguous) {
  EXPECT_GRADCHECK(
      [](const TensorList& x) {
        TensorList p = split(T(x[0]), std::vector<int64_t>{1, 0, 3}, 0);
        return cat({square(p[2]), p[0], p[1]}, 0);
      },
      {R({3, 4}, 38)});
}
TEST(OpsShapeGrad, Chunk) {
  EXPECT_GRADCHECK(
      [](const TensorList& x) {
        TensorList p = chunk(x[0], 3, 0);  // 5 rows: pieces of 2, 2, 1
        return cat({p[2], mul(p[0], -2.0)}, 0);
      },
      {R({5, 2}, 39)});
}
TEST(OpsShapeGrad, ChunkNonContiguous) {
  EXPECT_GRADCHECK(
      [](const TensorList& x) {
        TensorList p = chunk(T(x[0]), 2, -1);
        return mul(p[0], p[1]);
      },
      {R({4, 3}, 40)});
}
TEST(OpsShapeGrad, Pad) {
  EXPECT_GRADCHECK([](const TensorList& x) { return pad(x[0], 1, 2, 1, 0.5); }, {R({2, 3}, 41)});
}
TEST(OpsShapeGrad, PadNonContiguous) {
  EXPECT_GRADCHECK([](const TensorList& x) { return pad(T(x[0]), 0, 0, 2); }, {R({2, 3}, 42)});
}

// ---- forward shapes and errors of the list ops -----------------------------------------------------------
TEST(OpsShape, SplitAndChunkPieces) {
  Tensor x = reshape(arange(10, DType::Float64), {5, 2});
  TensorList p = split(x, 2, 0);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].sizes(), (Shape{1, 2}));
  EXPECT_TRUE(test::values_equal(p[1], {4, 5, 6, 7}));
  TensorList c = chunk(x, 4, 0);  // ceil(5 / 4) = 2 rows each: only 3 pieces, as in PyTorch
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(split(x, std::vector<int64_t>{0, 5}, 0)[0].sizes(), (Shape{0, 2}));
  Tensor s = stack({x, x, x}, 1);
  EXPECT_EQ(s.sizes(), (Shape{5, 3, 2}));
  EXPECT_TRUE(test::values_equal(select(s, 0, 1), {2, 3, 2, 3, 2, 3}));
}

TEST(OpsShape, ListOpErrors) {
  Tensor x = zeros({4, 2}, DType::Float64);
  EXPECT_THROWS_WITH(split(x, std::vector<int64_t>{1, 2}, 0), "split", "add up to 3", "size 4");
  EXPECT_THROWS_WITH(split(x, 0, 0), "split", "split_size must be positive");
  EXPECT_THROWS_WITH(chunk(x, 0, 0), "chunk", "positive");
  EXPECT_THROWS_WITH(stack({x, zeros({2, 4}, DType::Float64)}, 0), "stack", "[2, 4]", "[4, 2]");
  EXPECT_THROWS_WITH(stack({}, 0), "stack", "non-empty");
  EXPECT_THROWS_WITH(cat({x, zeros({4, 3}, DType::Float64)}, 0), "cat", "[4, 3]");
}

TEST(OpsShape, SplitGradientOfUnusedPiecesIsZero) {
  Tensor x = random_tensor({4, 2}, DType::Float64, 43);
  x.requires_grad_(true);
  TensorList p = split(x, 1, 0);
  backward(p[1], ones({1, 2}, DType::Float64));
  EXPECT_TRUE(test::values_equal(x.grad(), {0, 0, 1, 1, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace rematch
