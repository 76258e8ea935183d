// Differentiable reductions. The backward of a reduction broadcasts the output gradient back over the
// reduced dims: `expand_back` reshapes it to the keepdim shape and expands it to the input's shape (both
// differentiable views, so the backwards differentiate again).
#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

using kernels::ReduceOp;

namespace {

std::vector<int64_t> wrapped_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
  } else {
    for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, op));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape keepdim_shape(const Shape& sizes, const std::vector<int64_t>& dims) {
  Shape s = sizes;
  for (int64_t d : dims)
    if (d < static_cast<int64_t>(s.size())) s[d] = 1;
  return s;
}

int64_t reduced_count(const Shape& sizes, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (d < static_cast<int64_t>(sizes.size())) n *= sizes[d];
  return n;
}

// g has the reduced shape (with or without kept dims): view it with kept dims, broadcast to `sizes`.
Tensor expand_back(const Tensor& g, const Shape& sizes, const std::vector<int64_t>& dims) {
  return expand(reshape(g, keepdim_shape(sizes, dims)), sizes);
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor y = kernels::reduce(ReduceOp::Sum, x, dims, keepdim);
  return record("sum", {x}, y, [sizes = x.sizes(), d = wrapped_dims(dims, x.dim(), "sum")](const TensorList& g) {
    return TensorList{expand_back(g[0], sizes, d)};
  });
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor y = kernels::reduce(ReduceOp::Mean, x, dims, keepdim);
  const std::vector<int64_t> d = wrapped_dims(dims, x.dim(), "mean");
  const double n = static_cast<double>(reduced_count(x.sizes(), d));
  return record("mean", {x}, y, [sizes = x.sizes(), d, n](const TensorList& g) {
    return TensorList{expand_back(mul(g[0], 1.0 / n), sizes, d)};
  });
}

// amax/amin: the gradient is shared evenly among the elements equal to the extreme (PyTorch).
static Tensor extreme(const char* name, ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims,
                      bool keepdim) {
  Tensor y = kernels::reduce(op, x, dims, keepdim);
  const std::vector<int64_t> d = wrapped_dims(dims, x.dim(), name);
  return record(name, {x}, y, [x = x.detach(), y = y.detach(), d](const TensorList& g) {
    Tensor y_full = expand_back(y, x.sizes(), d);
    Tensor hits = kernels::cast(kernels::binary(kernels::BinaryOp::Eq, x, y_full), x.dtype());
    Tensor count = kernels::reduce(ReduceOp::Sum, hits, d, true);
    Tensor share = kernels::binary(kernels::BinaryOp::Div, hits, count);
    return TensorList{mul(share, expand_back(g[0], x.sizes(), d))};
  });
}
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme("amax", ReduceOp::Max, x, dims, keepdim);
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme("amin", ReduceOp::Min, x, dims, keepdim);
}

// max/min along a dim: the gradient goes to the index that was returned.
static std::pair<Tensor, Tensor> extreme_with_index(const char* name, ReduceOp op, const Tensor& x, int64_t dim,
                                                    bool keepdim) {
  auto [values, indices] = kernels::reduce_with_index(op, x, dim, keepdim);
  const int64_t d = wrap_dim(dim, x.dim(), name);
  if (x.dim() == 0) {
    Tensor v = record(name, {x}, values, [](const TensorList& g) { return TensorList{g[0]}; });
    return {v, indices};
  }
  Tensor v = record(name, {x}, values, [sizes = x.sizes(), idx = indices, d](const TensorList& g) {
    Shape keep = keepdim_shape(sizes, {d});
    Tensor zero = zeros(sizes, g[0].dtype(), g[0].device());
    return TensorList{scatter_add(zero, d, kernels::reshape(idx, keep), reshape(g[0], keep))};
  });
  return {v, indices};
}
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_with_index("max", ReduceOp::Max, x, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_with_index("min", ReduceOp::Min, x, dim, keepdim);
}
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return kernels::reduce_with_index(ReduceOp::Max, x, dim, keepdim).second;
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return kernels::reduce_with_index(ReduceOp::Min, x, dim, keepdim).second;
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor y = kernels::logsumexp(x, dims, keepdim);
  const std::vector<int64_t> d = wrapped_dims(dims, x.dim(), "logsumexp");
  // d/dx logΣexp = softmax(x) = exp(x - y).
  return record("logsumexp", {x}, y, [x, y = y.detach(), d](const TensorList& g) {
    Tensor p = exp(sub(x, expand_back(saved_output(y), x.sizes(), d)));
    return TensorList{mul(p, expand_back(g[0], x.sizes(), d))};
  });
}

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const std::vector<int64_t> d = wrapped_dims(dims, x.dim(), "var");
  const int64_t n = reduced_count(x.sizes(), d);
  REMATCH_CHECK(correction >= 0, "var: correction must be 0 (biased) or positive, got ", correction);
  // Composite: Σ(x - mean)² / (N - correction); N <= correction gives inf/NaN as in PyTorch.
  Tensor centred = sub(x, mean(x, dims, true));
  return div(sum(square(centred), dims, keepdim), static_cast<double>(n - correction));
}

Tensor norm(const Tensor& x, int p, const std::vector<int64_t>& dims, bool keepdim) {
  REMATCH_CHECK(p == 1 || p == 2, "norm: p must be 1 or 2, got ", p);
  if (p == 1) return sum(abs(x), dims, keepdim);
  Tensor y = kernels::unary(kernels::UnaryOp::Sqrt,
                            kernels::reduce(ReduceOp::Sum, kernels::unary(kernels::UnaryOp::Square, x), dims, keepdim));
  const std::vector<int64_t> d = wrapped_dims(dims, x.dim(), "norm");
  // d||x|| = x / ||x||, and 0 where ||x|| = 0 (the subgradient PyTorch picks).
  return record("norm", {x}, y, [x, y = y.detach(), d](const TensorList& g) {
    Tensor y_full = expand_back(saved_output(y), x.sizes(), d);
    Tensor zero = zeros({}, x.dtype(), x.device());
    Tensor at_zero = eq(y_full, 0.0);
    Tensor safe = where(at_zero, ones({}, x.dtype(), x.device()), y_full);
    Tensor dir = where(at_zero, zero, div(x, safe));
    return TensorList{mul(dir, expand_back(g[0], x.sizes(), d))};
  });
}

}  // namespace rematch
