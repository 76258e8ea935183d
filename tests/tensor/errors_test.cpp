// Bad input is refused with a message naming the op and what was wrong (issue: foundation, point 7).
#include "test_util.h"

namespace rematch {
namespace {

TEST(Errors, AddShapeMismatchNamesBothShapes) {
  EXPECT_THROWS_WITH(add(zeros({2, 3}), zeros({4})), "add", "[2, 3]", "[4]", "broadcast");
}

TEST(Errors, MatmulShapeMismatchNamesBothShapes) {
  EXPECT_THROWS_WITH(matmul(zeros({2, 3}), zeros({4, 5})), "matmul", "[2, 3]", "[4, 5]");
}

TEST(Errors, OutOfRangeDim) {
  EXPECT_THROWS_WITH(sum(zeros({2, 3}), {2}), "sum", "dim 2", "out of range");
  EXPECT_THROWS_WITH(kernels::transpose(zeros({2, 3}), 0, -3), "transpose", "dim -3");
  EXPECT_THROWS_WITH(softmax(zeros({2, 3}), 5), "dim 5");
}

TEST(Errors, OutOfRangeIndex) {
  EXPECT_THROWS_WITH(kernels::select(zeros({2, 3}), 1, 3), "select", "index 3", "size 3");
  EXPECT_THROWS_WITH(index_select(zeros({2, 3}), 0, from_vector<int64_t>({0, 2})), "index_select", "2");
}

TEST(Errors, FloatIndexTensor) {
  EXPECT_THROWS_WITH(index_select(zeros({2, 3}), 0, from_vector<float>({0.f})), "index_select", "float32");
  EXPECT_THROWS_WITH(gather(zeros({2, 3}), 1, zeros({2, 1})), "gather", "float32");
}

TEST(Errors, MixedDevices) {
  // An empty CUDA tensor needs no device memory, so this runs with or without a GPU.
  Tensor on_gpu;
  try {
    on_gpu = empty({0}, DType::Float32, Device::cuda(0));
  } catch (const Error&) {
    GTEST_SKIP() << "this build has no CUDA runtime";
  }
  EXPECT_THROWS_WITH(add(zeros({0}), on_gpu), "add", "different devices", "cpu", "cuda:0");
}

TEST(Errors, DtypeMismatchAndUnsupported) {
  EXPECT_THROWS_WITH(add(zeros({2}), zeros({2}, DType::Float64)), "add", "float32", "float64");
  EXPECT_THROWS_WITH(exp(zeros({2}, DType::Int32)), "exp", "int32");
  EXPECT_THROWS_WITH(zeros({2}, DType::Int64).requires_grad_(), "requires_grad_", "int64");
}

TEST(Errors, UndefinedAndBadShapes) {
  EXPECT_THROWS_WITH(Tensor().sizes(), "undefined");
  EXPECT_THROWS_WITH(kernels::reshape(zeros({2, 3}), {4, 2}), "reshape", "[4, 2]", "6");
  EXPECT_THROWS_WITH(kernels::expand(zeros({2, 3}), {4, 3}), "expand", "[4, 3]");
  EXPECT_THROWS_WITH(empty({-1}), "negative");
  EXPECT_THROWS_WITH(Device::parse("gpu"), "'gpu'");
}

// Sizes whose element or byte count passes 64 bits used to wrap: 2^61 float64 elements made an allocation of 0
// bytes, which the next copy wrote past (a stride-0 view that large is legal in PyTorch and reached here through
// DLPack). Refused before anything is allocated; a zero size still makes an empty tensor of any other sizes.
TEST(Errors, SizesPastSixtyFourBitsAreRefusedNotWrapped) {
  const int64_t big = int64_t{1} << 61;
  EXPECT_THROWS_WITH(empty({big, 1}, DType::Float64), "empty: shape [2305843009213693952, 1] of float64 needs more bytes");
  EXPECT_THROWS_WITH(empty({big, 8}), "shape [2305843009213693952, 8] holds more elements than a 64-bit count");
  EXPECT_THROWS_WITH(shape_numel({int64_t{1} << 62, 2, 2}), "holds more elements");
  EXPECT_EQ(empty({big, 0, big}).numel(), 0);
  EXPECT_EQ(shape_numel({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
}

}  // namespace
}  // namespace rematch
