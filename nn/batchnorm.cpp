#include "nn/batchnorm.h"

#include <algorithm>

namespace rematch::nn {

namespace {

// Per-channel statistics for one call, shaped to broadcast against x ([1, C] or [1, C, 1]).
struct Normalised {
  Tensor xhat;  // (x - mean) · inv_std
  Tensor inv_std;
};

Normalised normalise(const Tensor& x, const std::vector<int64_t>& dims, const Shape& stat_shape,
                     const Tensor& running_mean, const Tensor& running_var, bool training, double momentum,
                     double eps) {
  NoGradGuard no_grad;
  Tensor mu, var;
  if (training) {
    mu = mean(x, dims, true);
    var = mean(square(sub(x, mu)), dims, true);  // biased: the normalisation PyTorch uses in training
    const int64_t n = x.numel() / x.size(1);
    const double unbias = static_cast<double>(n) / static_cast<double>(n - 1);
    if (running_mean.defined())
      kernels::copy_(running_mean, add(mul(running_mean, 1 - momentum), mul(reshape(mu, {-1}), momentum)));
    if (running_var.defined())
      kernels::copy_(running_var, add(mul(running_var, 1 - momentum), mul(reshape(var, {-1}), momentum * unbias)));
  } else {
    mu = reshape(running_mean, stat_shape);
    var = reshape(running_var, stat_shape);
  }
  Tensor inv_std = rsqrt(add(var, eps));
  return {mul(sub(x, mu), inv_std), inv_std};
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, const char* who) {
  REMATCH_CHECK(x.defined() && (x.dim() == 2 || x.dim() == 3), who, ": expected input [N, C] or [N, C, L], got ",
                x.defined() ? x.describe() : "undefined");
  const int64_t c = x.size(1);
  for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
    REMATCH_CHECK(!t->defined() || (t->sizes() == Shape{c} && t->dtype() == x.dtype()), who, ": input ",
                  x.describe(), " has ", c, " channels (dim 1) but a parameter or running statistic is ",
                  t->describe());
  REMATCH_CHECK(training || (running_mean.defined() && running_var.defined()), who,
                ": eval mode needs running_mean and running_var");
  const int64_t per_channel = x.numel() / std::max<int64_t>(c, 1);
  REMATCH_CHECK(!training || per_channel > 1, who, ": training needs more than 1 value per channel, got input ",
                x.describe());
  const std::vector<int64_t> dims = x.dim() == 2 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 2};
  const Shape stat_shape = x.dim() == 2 ? Shape{1, c} : Shape{1, c, 1};

  Normalised n = normalise(x, dims, stat_shape, running_mean, running_var, training, momentum, eps);
  Tensor y = n.xhat;
  Tensor gamma, beta;
  {
    NoGradGuard no_grad;
    if (weight.defined()) gamma = reshape(weight.detach(), stat_shape);
    if (bias.defined()) beta = reshape(bias.detach(), stat_shape);
    if (gamma.defined()) y = mul(y, gamma);
    if (beta.defined()) y = add(y, beta);
  }
  // With g = dL/dy, sums and means per channel (batch-norm backward, Ioffe & Szegedy 2015, §3):
  //   dβ = Σ g,  dγ = Σ g·x̂,
  //   training: dx = γ·inv_std · (g − mean(g) − x̂·mean(g·x̂))   (the batch statistics depend on x),
  //   eval:     dx = γ·inv_std · g                              (running statistics are constants).
  // The backward keeps x̂ (not x) and x's place in the graph. With create_graph these formulas are
  // differentiated as functions of x and γ: x − mean = x̂ / inv_std stands for x in the graph (a shift by a
  // constant, which changes no derivative), x̂ and inv_std are recomputed from it (in training from its batch
  // statistics, in eval mode from the running ones) and γ is the weight, all recorded. x̂ and inv_std keep their
  // saved values and take the recomputation's place in the graph, so the gradient is the same to the last bit.
  return record("batch_norm", {x, weight, bias}, y,
                [xhat = n.xhat, inv_std = n.inv_std, gamma, weight, x_meta = x.impl()->autograd, stat_shape, dims,
                 training, eps, need_x = x.requires_grad(), need_w = weight.defined() && weight.requires_grad(),
                 need_b = bias.defined() && bias.requires_grad(), c](const TensorList& g) {
                  Tensor dx, dw, db;
                  const Tensor gy = g[0];
                  Tensor xh = xhat, s = inv_std, gm = gamma;
                  if (grad_enabled()) {
                    const Tensor centred = with_autograd_meta(div(xhat, inv_std), x_meta);
                    if (training) {
                      const Tensor c0 = sub(centred, mean(centred, dims, true));
                      const Tensor s_graph = rsqrt(add(mean(square(c0), dims, true), eps));
                      xh = with_autograd_meta(xhat, mul(c0, s_graph).impl()->autograd);
                      s = with_autograd_meta(inv_std, s_graph.impl()->autograd);
                    } else {
                      xh = with_autograd_meta(xhat, mul(centred, s).impl()->autograd);
                    }
                    if (weight.defined()) gm = reshape(weight, stat_shape);
                  }
                  if (need_x) {
                    const Tensor scale = gm.defined() ? mul(gm, s) : s;
                    Tensor inner = gy;
                    if (training) inner = sub(sub(gy, mean(gy, dims, true)), mul(xh, mean(mul(gy, xh), dims, true)));
                    dx = mul(inner, scale);
                  }
                  if (need_w) dw = reshape(sum(mul(gy, xh), dims), {c});
                  if (need_b) db = reshape(sum(gy, dims), {c});
                  return TensorList{dx, dw, db};
                });
}

BatchNorm1d::BatchNorm1d(int64_t num_features, double eps, double momentum, bool affine, DType dtype)
    : channels_(num_features), eps_(eps), momentum_(momentum) {
  name_ = "BatchNorm1d(" + std::to_string(channels_) + ")";
  REMATCH_CHECK(channels_ > 0, name_, ": num_features must be positive");
  REMATCH_CHECK(eps > 0, name_, ": eps must be positive, got ", eps);
  REMATCH_CHECK(momentum >= 0 && momentum <= 1, name_, ": momentum must be in [0, 1], got ", momentum);
  REMATCH_CHECK(is_floating(dtype), name_, ": dtype must be float32 or float64, got ", dtype_name(dtype));
  if (affine) {
    weight_ = register_parameter("weight", ones({channels_}, dtype));
    bias_ = register_parameter("bias", zeros({channels_}, dtype));
  }
  register_buffer("running_mean", zeros({channels_}, dtype));
  register_buffer("running_var", ones({channels_}, dtype));
  register_buffer("num_batches_tracked", zeros({}, DType::Int64));
}

Tensor BatchNorm1d::forward(const Tensor& x) {
  REMATCH_CHECK(x.defined() && (x.dim() == 2 || x.dim() == 3) && x.size(1) == channels_, name_,
                ": expected input [N, ", channels_, "] or [N, ", channels_, ", L], got ",
                x.defined() ? x.describe() : "undefined");
  Tensor y = batch_norm(x, weight_, bias_, buffer("running_mean"), buffer("running_var"), is_training(), momentum_,
                        eps_, name_.c_str());
  if (is_training()) {
    const Tensor& count = buffer("num_batches_tracked");
    kernels::copy_(count, kernels::scalar_op(kernels::ScalarOp::Add, count, 1));
  }
  return y;
}

}  // namespace rematch::nn
