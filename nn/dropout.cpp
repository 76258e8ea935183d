#include "nn/dropout.h"

namespace rematch::nn {

static void check_p(double p) {
  REMATCH_CHECK(p >= 0 && p <= 1, "Dropout: p must be in [0, 1], got ", p);
}

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  check_p(p);
  REMATCH_CHECK(x.defined() && is_floating(x.dtype()), "Dropout(p=", p, "): expected a floating input, got ",
                x.defined() ? x.describe() : "undefined");
  if (!training || p == 0) return x;
  if (p == 1) return mul(x, 0.0);
  // The scaled mask (0 or 1/(1-p)) is a constant of the graph: the gradient is g · mask / (1 - p).
  const Tensor keep = bernoulli(x.sizes(), 1 - p, x.device(), gen);
  const Tensor scaled_mask = kernels::scalar_op(kernels::ScalarOp::Mul, kernels::cast(keep, x.dtype()), 1 / (1 - p));
  return mul(x, scaled_mask);
}

Dropout::Dropout(double p, Generator* gen) : p_(p), gen_(gen) { check_p(p); }

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p_, is_training(), gen_); }

}  // namespace rematch::nn
