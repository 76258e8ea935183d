// clip_grad_norm_: per-gradient norms first, then the norm of those norms, as PyTorch combines them; the
// combination and the clip factor are computed in double on the host (PyTorch keeps them in the gradients'
// dtype, which differs only in the last float32 bits).
#include "nn/clip_grad.h"

#include <algorithm>
#include <cmath>

namespace rematch::nn {
namespace {

using kernels::ReduceOp;
using kernels::ScalarOp;
using kernels::UnaryOp;

double sum_all(const Tensor& x) { return kernels::reduce(ReduceOp::Sum, x, {}, false).item<double>(); }

// ||g||_p in g's dtype, read back as a double.
double grad_norm(const Tensor& g, double p) {
  if (std::isinf(p)) return kernels::reduce(ReduceOp::Max, kernels::unary(UnaryOp::Abs, g), {}, false).item<double>();
  if (p == 2) return std::sqrt(sum_all(kernels::unary(UnaryOp::Square, g)));
  if (p == 1) return sum_all(kernels::unary(UnaryOp::Abs, g));
  return std::pow(sum_all(kernels::scalar_op(ScalarOp::Pow, kernels::unary(UnaryOp::Abs, g), p)), 1 / p);
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  REMATCH_CHECK(max_norm >= 0 && std::isfinite(max_norm), "clip_grad_norm_: max_norm must be finite and >= 0, got ",
                max_norm);
  REMATCH_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be > 0 (or infinity), got ", norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  std::vector<double> norms;
  for (const Tensor& p : params) {
    REMATCH_CHECK(p.defined(), "clip_grad_norm_: undefined parameter");
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    norms.push_back(g.numel() == 0 ? 0.0 : grad_norm(g, norm_type));
  }
  if (grads.empty()) return 0;
  double total = 0;
  if (std::isinf(norm_type)) {
    total = *std::max_element(norms.begin(), norms.end());
  } else if (norm_type == 2) {
    for (double n : norms) total += n * n;
    total = std::sqrt(total);
  } else if (norm_type == 1) {
    for (double n : norms) total += n;
  } else {
    for (double n : norms) total += std::pow(n, norm_type);
    total = std::pow(total, 1 / norm_type);
  }
  REMATCH_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_: the total norm of order ", norm_type,
                " of the gradients is ", total, ", so they cannot be clipped");
  const double coef = max_norm / (total + 1e-6);
  // A NaN coefficient fails `coef < 1` but must still reach the gradients, as in PyTorch.
  if (coef < 1 || std::isnan(coef)) {
    for (const Tensor& g : grads) kernels::copy_(g, kernels::scalar_op(ScalarOp::Mul, g, coef));
  }
  return total;
}

}  // namespace rematch::nn
