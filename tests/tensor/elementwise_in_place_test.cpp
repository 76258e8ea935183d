// The in-place forms of the elementwise family (kernels::unary_, scalar_op_, binary_;
// tensor/elementwise_in_place.h): the same bits as the forms that return a new tensor, for every op of the table
// that keeps its dtype, in float32 and float64, with a broadcast second operand; and the refusals that keep them
// safe (a destination that is not contiguous or would change dtype, an operand that shares its storage or is
// larger than it).
#include <cstring>
#include <string>

#include "tensor/elementwise_in_place.h"
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

// Equal to the bit (NaN included: the same payload from the same functor).
::testing::AssertionResult same_bits(const Tensor& got, const Tensor& want) {
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << got.describe() << " vs " << want.describe();
  const Tensor a = kernels::contiguous(got), b = kernels::contiguous(want);
  const size_t bytes = static_cast<size_t>(a.numel()) * dtype_size(a.dtype());
  if (std::memcmp(a.raw_data(), b.raw_data(), bytes) != 0)
    return ::testing::AssertionFailure() << "bits differ: " << got.describe();
  return ::testing::AssertionSuccess();
}

// Whether `op` keeps a float dtype (the ops an in-place form can take on float tensors).
bool keeps_float(const kernels::OpInfo& info) {
  return info.accepts != kernels::Accepts::Bool && info.result == kernels::Result::Same;
}

TEST(ElementwiseInPlace, EveryFloatOpGivesTheBitsOfItsOutOfPlaceForm) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    // 1,000 values: the vectorised loops and their tails; positive, so that log, sqrt and lgamma are defined.
    const Tensor x = random_tensor({40, 25}, dt, 1, 0.1, 3.0);
    const Tensor row = random_tensor({25}, dt, 2, 0.1, 3.0);  // broadcast over x's rows
    int checked = 0;
    for (kernels::UnaryOp op : kernels::kUnaryOps) {
      if (!keeps_float(kernels::op_info(op))) continue;
      SCOPED_TRACE(kernels::op_name(op));
      const Tensor dst = kernels::clone(x);
      kernels::unary_(op, dst);
      EXPECT_TRUE(same_bits(dst, kernels::unary(op, x)));
      ++checked;
    }
    for (kernels::ScalarOp op : kernels::kScalarOps) {
      if (!keeps_float(kernels::op_info(op))) continue;
      SCOPED_TRACE(kernels::op_name(op));
      const Tensor dst = kernels::clone(x);
      kernels::scalar_op_(op, dst, 1.7);
      EXPECT_TRUE(same_bits(dst, kernels::scalar_op(op, x, 1.7)));
      ++checked;
    }
    for (kernels::BinaryOp op : kernels::kBinaryOps) {
      if (!keeps_float(kernels::op_info(op))) continue;
      SCOPED_TRACE(kernels::op_name(op));
      for (const Tensor& b : {random_tensor({40, 25}, dt, 3, 0.1, 3.0), row}) {
        const Tensor dst = kernels::clone(x);
        kernels::binary_(op, dst, b);
        EXPECT_TRUE(same_bits(dst, kernels::binary(op, x, b)));
      }
      ++checked;
    }
    EXPECT_GE(checked, 20);  // add, sub, mul, div, square, ...: the loop reached the table
  }
}

TEST(ElementwiseInPlace, AViewOfAContiguousTensorIsWrittenThrough) {
  const Tensor whole = random_tensor({2, 3, 4}, DType::Float64, 4);
  const Tensor want = kernels::binary(kernels::BinaryOp::Mul, whole, whole);
  const Tensor dst = kernels::clone(whole);
  kernels::binary_(kernels::BinaryOp::Mul, kernels::reshape(dst, {6, 4}), kernels::reshape(whole, {6, 4}));
  EXPECT_TRUE(same_bits(dst, want));
}

TEST(ElementwiseInPlace, Refusals) {
  const Tensor x = random_tensor({3, 4}, DType::Float32, 5);
  const Tensor other = random_tensor({4, 3}, DType::Float32, 6);
  EXPECT_THROWS_WITH(kernels::binary_(kernels::BinaryOp::Add, kernels::transpose(x, 0, 1), other), "add_ (in place)",
                     "contiguous");
  EXPECT_THROWS_WITH(kernels::binary_(kernels::BinaryOp::Add, x, kernels::narrow(x, 0, 0, 1)), "add_ (in place)",
                     "shares the destination's storage");
  EXPECT_THROWS_WITH(kernels::binary_(kernels::BinaryOp::Add, kernels::narrow(kernels::clone(x), 0, 0, 1), x),
                     "does not broadcast to the destination");
  EXPECT_THROWS_WITH(kernels::binary_(kernels::BinaryOp::Add, x, random_tensor({3, 4}, DType::Float64, 7)),
                     "dtypes differ");
  EXPECT_THROWS_WITH(kernels::binary_(kernels::BinaryOp::Eq, x, random_tensor({3, 4}, DType::Float32, 8)),
                     "the result is bool");
  EXPECT_THROWS_WITH(kernels::unary_(kernels::UnaryOp::Square, Tensor()), "undefined destination");
}

}  // namespace
}  // namespace rematch
