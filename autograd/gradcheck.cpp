#include "autograd/gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"

namespace rematch {

GradcheckResult gradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                          const GradcheckOptions& opt) {
  TensorList leaves;
  for (const Tensor& x : inputs) {
    REMATCH_CHECK(x.defined() && x.dtype() == DType::Float64 && x.device().is_cpu(),
                  "gradcheck: inputs must be float64 host tensors, got ", x.describe());
    Tensor leaf = kernels::clone(x);
    leaf.requires_grad_(true);
    leaves.push_back(leaf);
  }
  Tensor y0 = f(leaves);
  REMATCH_CHECK(y0.defined() && y0.dtype() == DType::Float64, "gradcheck: f must return a float64 tensor, got ",
                y0.describe());
  const int64_t n_out = y0.numel();

  // Numeric Jacobian, column by column: num[i][j] = d y_j / d x_i.
  std::vector<std::vector<std::vector<double>>> numeric(leaves.size());
  {
    NoGradGuard no_grad;
    for (size_t k = 0; k < leaves.size(); ++k) {
      double* p = leaves[k].data<double>();
      for (int64_t i = 0; i < leaves[k].numel(); ++i) {
        const double orig = p[i];
        p[i] = orig + opt.eps;
        std::vector<double> plus = f(leaves).to_vector<double>();
        p[i] = orig - opt.eps;
        std::vector<double> minus = f(leaves).to_vector<double>();
        p[i] = orig;
        std::vector<double> col(static_cast<size_t>(n_out));
        for (int64_t j = 0; j < n_out; ++j) col[j] = (plus[j] - minus[j]) / (2 * opt.eps);
        numeric[k].push_back(std::move(col));
      }
    }
  }

  GradcheckResult result;
  for (int64_t j = 0; j < n_out; ++j) {
    for (Tensor& l : leaves) l.zero_grad();
    Tensor y = f(leaves);
    if (!y.requires_grad()) {
      result.ok = false;
      result.message = "gradcheck: the output does not require grad (f does not depend on its inputs)";
      return result;
    }
    Tensor seed = zeros(y.sizes(), DType::Float64);
    seed.data<double>()[j] = 1.0;
    backward(y, seed);
    for (size_t k = 0; k < leaves.size(); ++k) {
      std::vector<double> g = leaves[k].grad().defined() ? leaves[k].grad().to_vector<double>()
                                                         : std::vector<double>(leaves[k].numel(), 0.0);
      for (int64_t i = 0; i < leaves[k].numel(); ++i) {
        const double a = g[i], n = numeric[k][i][j], err = std::fabs(a - n);
        result.max_abs_error = std::max(result.max_abs_error, std::isnan(err) ? INFINITY : err);
        if (result.ok && !(err <= opt.atol + opt.rtol * std::fabs(n))) {
          std::ostringstream os;
          os << "gradcheck: input " << k << " element " << i << ", output element " << j << ": analytic " << a
             << " vs numeric " << n;
          result.ok = false;
          result.message = os.str();
        }
      }
    }
  }
  return result;
}

GradcheckResult gradgradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                              const GradcheckOptions& options, uint32_t seed) {
  TensorList leaves;
  for (const Tensor& x : inputs) {
    REMATCH_CHECK(x.defined() && is_floating(x.dtype()), "gradgradcheck: inputs must be floating, got ",
                  x.defined() ? x.describe() : "undefined");
    leaves.push_back(kernels::clone(x).requires_grad_(true));
  }
  const Tensor y0 = f(leaves);  // for the shape of v (f may take gradients itself)
  REMATCH_CHECK(y0.defined(), "gradgradcheck: f returned an undefined tensor");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(y0.numel()));
  for (double& e : v) e = uniform(rng);
  TensorList all = inputs;
  all.push_back(kernels::reshape(from_vector(v, {y0.numel()}), y0.sizes()));
  const size_t n = inputs.size();
  // gradcheck calls G with grad mode off for the differences (then the gradient is computed without a graph)
  // and on for the analytic Jacobian (then it is recorded).
  auto gradient = [&f, n](const TensorList& xs) {
    const bool create_graph = grad_enabled();
    GradModeGuard record_f(true);
    const TensorList x(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n));
    GradOptions options;
    options.create_graph = create_graph;
    options.allow_unused = true;
    const TensorList g = grad({f(x)}, x, {xs[n]}, options);
    TensorList flat;
    for (size_t k = 0; k < n; ++k)
      flat.push_back(g[k].defined() ? reshape(g[k], {-1}) : zeros({x[k].numel()}, DType::Float64));
    return cat(flat, 0);
  };
  return gradcheck(gradient, all, options);
}

}  // namespace rematch
