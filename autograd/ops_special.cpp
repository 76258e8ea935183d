// The special functions log Γ and the polygammas ψ^(n) = dⁿψ/dxⁿ, each the derivative of the one before:
// d log Γ = ψ, d ψ^(n) = ψ^(n+1), so every order of derivative is one more polygamma. Kernels in
// tensor/elementwise_functors.h (Lgamma, Digamma, Trigamma, PolygammaScalar).
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

using kernels::UnaryOp;

Tensor lgamma(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Lgamma, x);
  return record("lgamma", {x}, y, [x](const TensorList& g) { return TensorList{mul(g[0], digamma(x))}; });
}

Tensor digamma(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Digamma, x);
  return record("digamma", {x}, y, [x](const TensorList& g) { return TensorList{mul(g[0], trigamma(x))}; });
}

Tensor trigamma(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Trigamma, x);
  return record("trigamma", {x}, y, [x](const TensorList& g) { return TensorList{mul(g[0], polygamma(2, x))}; });
}

Tensor polygamma(int64_t n, const Tensor& x) {
  REMATCH_CHECK(n >= 0 && n <= 64, "polygamma: the order n must be in 0..64, got ", n);
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  Tensor y = kernels::scalar_op(kernels::ScalarOp::Polygamma, x, static_cast<double>(n));
  return record("polygamma", {x}, y, [x, n](const TensorList& g) {
    REMATCH_CHECK(n < 64, "polygamma: the derivative of order 64 would need order 65 (at most 64)");
    return TensorList{mul(g[0], polygamma(n + 1, x))};
  });
}

}  // namespace rematch
