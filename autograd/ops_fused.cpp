// Differentiable fused row ops: softmax, log_softmax and the l1/l2 normalisations of the backbones. Forward and
// backward of softmax are single fused kernels; their backward kernels are ops of their own here, with the
// derivatives written out, so that the backward differentiates again. The normalisation backwards are short
// chains of differentiable ops.
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

namespace {

Tensor row_sum(const Tensor& t, int64_t dim) { return sum(t, {dim}, true); }

// dx = y ⊙ (g − Σ g⊙y), fused in one kernel. As a function of (g, y), for an incoming u:
//   ∂/∂g: y ⊙ (u − Σ u⊙y), the same map (its Jacobian diag(y) − y yᵀ is symmetric);
//   ∂/∂y: u ⊙ (g − Σ g⊙y) − g · Σ u⊙y.
Tensor softmax_backward(const Tensor& g, const Tensor& y, int64_t dim) {
  Tensor dx = kernels::softmax_backward(g, y, dim);
  return record("softmax_backward", {g, y}, dx, [g, y, dim](const TensorList& u) {
    const Tensor gg = softmax_backward(u[0], y, dim);
    const Tensor gy = sub(mul(u[0], sub(g, row_sum(mul(g, y), dim))), mul(g, row_sum(mul(u[0], y), dim)));
    return TensorList{gg, gy};
  });
}

// dx = g − exp(y) Σg, fused in one kernel. As a function of (g, y), for an incoming u:
//   ∂/∂g: u − Σ u⊙exp(y)  (the transpose of g ↦ g − exp(y) Σg);
//   ∂/∂y: −u ⊙ exp(y) · Σg.
Tensor log_softmax_backward(const Tensor& g, const Tensor& y, int64_t dim) {
  Tensor dx = kernels::log_softmax_backward(g, y, dim);
  return record("log_softmax_backward", {g, y}, dx, [g, y, dim](const TensorList& u) {
    const Tensor u_p = mul(u[0], exp(y));
    return TensorList{sub(u[0], row_sum(u_p, dim)), neg(mul(u_p, row_sum(g, dim)))};
  });
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  Tensor y = kernels::softmax(x, dim);
  return record("softmax", {x}, y, [y = y.detach(), dim](const TensorList& g) {
    return TensorList{softmax_backward(g[0], saved_output(y), dim)};
  });
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  Tensor y = kernels::log_softmax(x, dim);
  return record("log_softmax", {x}, y, [y = y.detach(), dim](const TensorList& g) {
    return TensorList{log_softmax_backward(g[0], saved_output(y), dim)};
  });
}

Tensor l2_normalize(const Tensor& x, int64_t dim, double eps) {
  Tensor y = kernels::lp_normalize(x, dim, 2, eps);
  // y = x / d with n = ||x||, d = n + eps, and dd/dx = x / n:
  //   dx = g / d - x * sum(g * x) / (d² n).
  // At n == 0 the second term is taken as 0 (x is 0 there anyway), leaving dx = g / eps: the norm's subgradient
  // at 0 is 0 (norm()), and the division by d² n is kept away from 0/0, so that differentiating dx again gives
  // no NaN at a zero row either.
  return record("l2_normalize", {x}, y, [x, dim, eps](const TensorList& g) {
    const Tensor n = norm(x, 2, {dim}, true);
    const Tensor d = add(n, eps);
    const Tensor at_zero = eq(n, 0.0);
    const Tensor d2n = where(at_zero, ones({}, n.dtype(), n.device()), mul(square(d), n));
    const Tensor coef = where(at_zero, zeros({}, n.dtype(), n.device()), div(row_sum(mul(g[0], x), dim), d2n));
    return TensorList{sub(div(g[0], d), mul(x, coef))};
  });
}

Tensor l1_normalize(const Tensor& x, int64_t dim, double eps) {
  Tensor y = kernels::lp_normalize(x, dim, 1, eps);
  // y = x / d with d = sum|x| + eps, and dd/dx = sign(x) (piecewise constant):
  //   dx = g / d - sign(x) * sum(g * x) / d².
  return record("l1_normalize", {x}, y, [x, dim, eps](const TensorList& g) {
    const Tensor d = add(row_sum(abs(x), dim), eps);
    const Tensor coef = div(row_sum(mul(g[0], x), dim), square(d));
    return TensorList{sub(div(g[0], d), mul(kernels::unary(kernels::UnaryOp::Sign, x), coef))};
  });
}

}  // namespace rematch
