// Views share storage with their base; contiguous() copies only when it must.
#include "test_util.h"

namespace rematch {
namespace {

using test::values_equal;

TEST(Views, ShareStorage) {
  Tensor x = arange(12, DType::Float64);
  Tensor v = kernels::view(x, {3, 4});
  EXPECT_EQ(v.storage(), x.storage());
  kernels::fill_(kernels::select(v, 0, 1), -1.0);
  EXPECT_TRUE(values_equal(x, {0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11}));
}

TEST(Views, TransposePermuteStrides) {
  Tensor x = kernels::reshape(arange(24, DType::Float64), {2, 3, 4});
  Tensor t = kernels::transpose(x, 0, 2);
  EXPECT_EQ(t.sizes(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 4, 12}));
  EXPECT_FALSE(t.is_contiguous());
  Tensor p = kernels::permute(x, {1, 2, 0});
  EXPECT_EQ(p.sizes(), (Shape{3, 4, 2}));
  EXPECT_TRUE(values_equal(kernels::contiguous(kernels::permute(kernels::reshape(arange(6, DType::Float64), {2, 3}), {1, 0})),
                           {0, 3, 1, 4, 2, 5}));
}

TEST(Views, SliceNarrowSelect) {
  Tensor x = kernels::reshape(arange(20, DType::Float64), {4, 5});
  EXPECT_TRUE(values_equal(kernels::contiguous(kernels::slice(x, 1, 1, 5, 2)), {1, 3, 6, 8, 11, 13, 16, 18}));
  EXPECT_TRUE(values_equal(kernels::contiguous(kernels::narrow(x, 0, 2, 2)), {10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_TRUE(values_equal(kernels::select(x, 1, -1), {4, 9, 14, 19}));
  EXPECT_TRUE(values_equal(kernels::slice(x, 0, -1, 4), {15, 16, 17, 18, 19}));
}

TEST(Views, SqueezeUnsqueezeExpandFlatten) {
  Tensor x = zeros({3, 1, 2});
  EXPECT_EQ(kernels::squeeze(x).sizes(), (Shape{3, 2}));
  EXPECT_EQ(kernels::squeeze(x, 1).sizes(), (Shape{3, 2}));
  EXPECT_EQ(kernels::squeeze(x, 0).sizes(), (Shape{3, 1, 2}));
  EXPECT_EQ(kernels::unsqueeze(x, -1).sizes(), (Shape{3, 1, 2, 1}));
  Tensor e = kernels::expand(x, {5, 3, 4, 2});
  EXPECT_EQ(e.strides()[0], 0);
  EXPECT_EQ(e.strides()[2], 0);
  EXPECT_EQ(e.storage(), x.storage());
  EXPECT_EQ(kernels::flatten(zeros({2, 3, 4}), 1).sizes(), (Shape{2, 12}));
}

TEST(Views, ReshapeCopiesOnlyWhenItMust) {
  Tensor x = kernels::reshape(arange(6, DType::Float64), {2, 3});
  EXPECT_EQ(kernels::reshape(x, {3, 2}).storage(), x.storage());
  Tensor t = kernels::transpose(x, 0, 1);
  Tensor r = kernels::reshape(t, {6});
  EXPECT_NE(r.storage(), x.storage());
  EXPECT_TRUE(values_equal(r, {0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(kernels::reshape(x, {-1}).sizes(), (Shape{6}));
  EXPECT_THROWS_WITH(kernels::view(t, {6}), "view", "[3, 2]", "reshape");
}

TEST(Views, ContiguousCopiesOnlyWhenNeeded) {
  Tensor x = zeros({4, 4});
  EXPECT_TRUE(kernels::contiguous(x).same(x));
  Tensor t = kernels::contiguous(kernels::transpose(x, 0, 1));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_NE(t.storage(), x.storage());
}

TEST(Creation, Basics) {
  EXPECT_TRUE(values_equal(zeros({2}), {0, 0}));
  EXPECT_TRUE(values_equal(ones({2}, DType::Int32), {1, 1}));
  EXPECT_TRUE(values_equal(full({3}, 2.5), {2.5, 2.5, 2.5}));
  EXPECT_TRUE(values_equal(arange(1, 2, 0.25, DType::Float64), {1, 1.25, 1.5, 1.75}));
  EXPECT_TRUE(values_equal(arange(5, 0, -2), {5, 3, 1}));
  EXPECT_TRUE(values_equal(eye(2, 3), {1, 0, 0, 0, 1, 0}));
  double buf[] = {1, 2, 3, 4};
  Tensor b = from_buffer(buf, {2, 2}, DType::Float64);
  buf[0] = 9;  // a copy, not a view of the caller's memory
  EXPECT_TRUE(values_equal(b, {1, 2, 3, 4}));
  EXPECT_EQ(scalar_tensor(3).dim(), 0);
  EXPECT_EQ(scalar_tensor(3).item<float>(), 3.f);
  Tensor c = clone(b);
  EXPECT_NE(c.storage(), b.storage());
  EXPECT_EQ(to(b, DType::Float32).dtype(), DType::Float32);
}

}  // namespace
}  // namespace rematch
