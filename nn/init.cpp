#include "nn/init.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/linear.h"

namespace rematch::nn {

namespace {

void check_target(const char* op, const Tensor& t) {
  REMATCH_CHECK(t.defined() && is_floating(t.dtype()), op, ": expected a floating tensor, got ",
                t.defined() ? t.describe() : "undefined");
}

// Writes `value` into t (converting dtype and device) without recording.
const Tensor& assign(const Tensor& t, const Tensor& value) {
  NoGradGuard no_grad;
  kernels::copy_(t, value);
  return t;
}

// scale·r + shift elementwise (r: standard uniform or normal draws).
Tensor affine(const Tensor& r, double scale, double shift) {
  using kernels::ScalarOp;
  return kernels::scalar_op(ScalarOp::Add, kernels::scalar_op(ScalarOp::Mul, r, scale), shift);
}

// Q (m x n, row-major, m >= n) of the Householder QR of a (m x n, row-major), each column multiplied by the
// sign of R's diagonal entry so that R's diagonal is non-negative: the unique QR with that property, which is
// what torch.nn.init.orthogonal_ makes of LAPACK's factorisation (q *= sign(diag(r))).
std::vector<double> orthonormal_columns(std::vector<double> a, int64_t m, int64_t n) {
  auto at = [&](std::vector<double>& x, int64_t i, int64_t j) -> double& { return x[i * n + j]; };
  std::vector<std::vector<double>> reflectors;  // v_k over rows k..m-1
  std::vector<double> r_diag(n);
  for (int64_t k = 0; k < n; ++k) {
    double norm2 = 0;
    for (int64_t i = k; i < m; ++i) norm2 += at(a, i, k) * at(a, i, k);
    // alpha takes the sign opposite to the pivot so that v = x - alpha·e1 suffers no cancellation.
    const double alpha = at(a, k, k) >= 0 ? -std::sqrt(norm2) : std::sqrt(norm2);
    std::vector<double> v(m - k);
    for (int64_t i = k; i < m; ++i) v[i - k] = at(a, i, k);
    v[0] -= alpha;
    double vv = 0;
    for (double e : v) vv += e * e;
    if (vv > 0) {
      // A <- (I - 2 v vᵀ / vᵀv) A on rows k.., columns k..
      for (int64_t j = k; j < n; ++j) {
        double dot = 0;
        for (int64_t i = k; i < m; ++i) dot += v[i - k] * at(a, i, j);
        const double s = 2 * dot / vv;
        for (int64_t i = k; i < m; ++i) at(a, i, j) -= s * v[i - k];
      }
      for (double& e : v) e /= std::sqrt(vv);  // unit reflector from here on
    } else {
      std::fill(v.begin(), v.end(), 0.0);  // column already zero below the pivot: H_k = I
    }
    r_diag[k] = at(a, k, k);
    reflectors.push_back(std::move(v));
  }
  // Q = H_0 H_1 ... H_{n-1} applied to the first n columns of the identity, innermost reflector first.
  std::vector<double> q(m * n, 0.0);
  for (int64_t j = 0; j < n; ++j) at(q, j, j) = 1;
  for (int64_t k = n - 1; k >= 0; --k) {
    const std::vector<double>& v = reflectors[k];
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t i = k; i < m; ++i) dot += v[i - k] * at(q, i, j);
      for (int64_t i = k; i < m; ++i) at(q, i, j) -= 2 * dot * v[i - k];
    }
  }
  for (int64_t j = 0; j < n; ++j)
    if (r_diag[j] < 0)
      for (int64_t i = 0; i < m; ++i) at(q, i, j) = -at(q, i, j);
  return q;
}

}  // namespace

const Tensor& uniform_(const Tensor& t, double a, double b, Generator* gen) {
  check_target("uniform_", t);
  REMATCH_CHECK(a <= b, "uniform_: lower bound ", a, " is above upper bound ", b);
  const Tensor r = rand(t.sizes(), t.dtype(), t.device(), gen);
  return assign(t, affine(r, b - a, a));
}

const Tensor& normal_(const Tensor& t, double mean, double std, Generator* gen) {
  check_target("normal_", t);
  REMATCH_CHECK(std >= 0, "normal_: std must be non-negative, got ", std);
  const Tensor r = randn(t.sizes(), t.dtype(), t.device(), gen);
  return assign(t, affine(r, std, mean));
}

const Tensor& constant_(const Tensor& t, double value) {
  check_target("constant_", t);
  NoGradGuard no_grad;
  kernels::fill_(t, value);
  return t;
}

const Tensor& zeros_(const Tensor& t) { return constant_(t, 0.0); }

const Tensor& xavier_uniform_(const Tensor& t, double gain, Generator* gen) {
  check_target("xavier_uniform_", t);
  REMATCH_CHECK(t.dim() >= 2, "xavier_uniform_: fan in and fan out need at least 2 dims, got ", t.describe());
  if (t.numel() == 0) return t;
  const int64_t receptive = t.numel() / (t.size(0) * t.size(1));
  const double fan_in = static_cast<double>(t.size(1) * receptive);
  const double fan_out = static_cast<double>(t.size(0) * receptive);
  const double a = gain * std::sqrt(6.0 / (fan_in + fan_out));
  return uniform_(t, -a, a, gen);
}

const Tensor& orthogonal_(const Tensor& t, double gain, Generator* gen) {
  check_target("orthogonal_", t);
  REMATCH_CHECK(t.dim() >= 2, "orthogonal_: needs at least 2 dims, got ", t.describe());
  if (t.numel() == 0) return t;
  const int64_t rows = t.size(0), cols = t.numel() / rows;
  // The Gaussian matrix is drawn [rows, cols] as torch does; QR runs on its transpose when it is wide.
  const std::vector<double> g = randn({rows, cols}, DType::Float64, Device::cpu(), gen).to_vector<double>();
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  std::vector<double> a(g.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) (wide ? a[j * n + i] : a[i * n + j]) = g[i * cols + j];
  const std::vector<double> q = orthonormal_columns(std::move(a), m, n);
  std::vector<double> out(q.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = gain * (wide ? q[j * n + i] : q[i * n + j]);
  return assign(t, kernels::reshape(from_vector(out, {rows, cols}), t.sizes()));
}

void default_linear_init(Linear& layer, Generator* gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(layer.in_features()));
  uniform_(layer.weight(), -bound, bound, gen);
  if (layer.has_bias()) uniform_(layer.bias(), -bound, bound, gen);
}

void default_gru_init(Module& module, int64_t hidden, Generator* gen) {
  REMATCH_CHECK(hidden > 0, "default_gru_init: hidden size must be positive, got ", hidden);
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  for (const Tensor& p : module.parameters()) uniform_(p, -bound, bound, gen);
}

}  // namespace rematch::nn
