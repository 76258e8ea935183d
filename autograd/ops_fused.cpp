// Differentiable fused row ops: softmax, log_softmax and the l1/l2 normalisations of the backbones. Forward
// and backward are single fused kernels for softmax; the normalisation backwards are short kernels:: chains.
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

using kernels::BinaryOp;
using kernels::ScalarOp;
using kernels::UnaryOp;

namespace {

Tensor bin(BinaryOp op, const Tensor& a, const Tensor& b) { return kernels::binary(op, a, b); }
Tensor row_sum(const Tensor& t, int64_t dim) { return kernels::reduce(kernels::ReduceOp::Sum, t, {dim}, true); }

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  Tensor y = kernels::softmax(x, dim);
  // dx = y * (g - sum(g * y)), fused in one kernel.
  return record("softmax", {x}, y, [y = y.detach(), dim](const TensorList& g) {
    return TensorList{kernels::softmax_backward(g[0], y, dim)};
  });
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  Tensor y = kernels::log_softmax(x, dim);
  // dx = g - exp(y) * sum(g), fused in one kernel.
  return record("log_softmax", {x}, y, [y = y.detach(), dim](const TensorList& g) {
    return TensorList{kernels::log_softmax_backward(g[0], y, dim)};
  });
}

Tensor l2_normalize(const Tensor& x, int64_t dim, double eps) {
  Tensor y = kernels::lp_normalize(x, dim, 2, eps);
  // y = x / d with n = ||x||, d = n + eps, and dd/dx = x / n:
  //   dx = g / d - x * sum(g * x) / (d² n).
  // At n == 0 the second term is taken as 0 (x is 0 there anyway; this avoids 0/0), leaving dx = g / eps.
  return record("l2_normalize", {x}, y, [x = x.detach(), dim, eps](const TensorList& g) {
    const Tensor norm = kernels::unary(UnaryOp::Sqrt, row_sum(kernels::unary(UnaryOp::Square, x), dim));
    const Tensor d = kernels::scalar_op(ScalarOp::Add, norm, eps);
    const Tensor d2n = bin(BinaryOp::Mul, kernels::unary(UnaryOp::Square, d), norm);
    Tensor coef = bin(BinaryOp::Div, row_sum(bin(BinaryOp::Mul, g[0], x), dim), d2n);
    coef = kernels::where(kernels::scalar_op(ScalarOp::Eq, norm, 0.0), zeros_like(coef), coef);
    return TensorList{bin(BinaryOp::Sub, bin(BinaryOp::Div, g[0], d), bin(BinaryOp::Mul, x, coef))};
  });
}

Tensor l1_normalize(const Tensor& x, int64_t dim, double eps) {
  Tensor y = kernels::lp_normalize(x, dim, 1, eps);
  // y = x / d with d = sum|x| + eps, and dd/dx = sign(x):
  //   dx = g / d - sign(x) * sum(g * x) / d².
  return record("l1_normalize", {x}, y, [x = x.detach(), dim, eps](const TensorList& g) {
    const Tensor d = kernels::scalar_op(ScalarOp::Add, row_sum(kernels::unary(UnaryOp::Abs, x), dim), eps);
    const Tensor coef =
        bin(BinaryOp::Div, row_sum(bin(BinaryOp::Mul, g[0], x), dim), kernels::unary(UnaryOp::Square, d));
    return TensorList{bin(BinaryOp::Sub, bin(BinaryOp::Div, g[0], d),
                          bin(BinaryOp::Mul, kernels::unary(UnaryOp::Sign, x), coef))};
  });
}

}  // namespace rematch
