// Differentiable sorting. The values output is x gathered at the returned indices, so its gradient goes
// back to those source positions (a scatter into zeros, whose own derivative gathers again); the indices carry
// no gradient. argsort only returns indices and is not recorded.
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

namespace {

// Backward of values = x picked along dim at `indices`: every position was picked at most once, so
// scatter-adding into zeros places each gradient entry at its source.
BackwardFn scatter_to_source(const Tensor& indices, const Shape& x_shape, int64_t dim) {
  return [indices, x_shape, dim](const TensorList& g) {
    if (!g[0].defined()) return TensorList{Tensor()};
    return TensorList{scatter_add(zeros(x_shape, g[0].dtype(), g[0].device()), dim, indices, g[0])};
  };
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  auto [values, indices] = kernels::sort(x, dim, descending);
  dim = wrap_dim(dim, x.dim(), "sort");
  TensorList out = record("sort", {x}, {values, indices}, scatter_to_source(indices, x.sizes(), dim));
  return {out[0], out[1]};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) { return kernels::sort(x, dim, descending).second; }

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  auto [values, indices] = kernels::topk(x, k, dim, largest);
  dim = wrap_dim(dim, x.dim(), "topk");
  TensorList out = record("topk", {x}, {values, indices}, scatter_to_source(indices, x.sizes(), dim));
  return {out[0], out[1]};
}

}  // namespace rematch
