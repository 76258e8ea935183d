// kernels:: reductions: normalise the dims, bring the input into an [outer, R, inner] layout (a view when the
// reduced dims are one contiguous block of a contiguous tensor, else a permuted copy), run the device's loop.
#include <algorithm>
#include <cmath>

#include "tensor/cpu/reduce_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/kernels.h"

namespace rematch::kernels {

const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
  }
  return "reduce";
}

namespace {

// Sorted, de-duplicated, wrapped dims; empty input means every dim.
std::vector<int64_t> normalise_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim, op);
    REMATCH_CHECK(std::find(out.begin(), out.end(), w) == out.end(), op, ": dim ", d, " appears twice");
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  if (ndim == 0) out.clear();  // dim 0 of a 0-d tensor reduces nothing
  return out;
}

Shape reduced_shape(const Shape& sizes, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    if (!reduced) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// x contiguous, viewed as [outer, R, inner]; runs on x's device.
void run_reduce(ReduceOp op, const Tensor& out, const Tensor& x, int64_t outer, int64_t R, int64_t inner) {
  if (x.device().is_cuda()) cuda::reduce(op, out, x, outer, R, inner);
  else cpu::reduce(op, out, x, outer, R, inner);
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
  const char* name = reduce_name(op);
  REMATCH_CHECK(x.defined(), name, ": undefined input");
  REMATCH_CHECK(x.dtype() != DType::Bool, name, ": bool tensors cannot be reduced; cast to int32 or float first");
  REMATCH_CHECK(op != ReduceOp::Mean || is_floating(x.dtype()), "mean: needs a floating tensor, got ",
                x.describe());
  const std::vector<int64_t> dims = normalise_dims(dims_in, x.dim(), name);
  const Shape out_shape = reduced_shape(x.sizes(), dims, keepdim);
  int64_t R = 1;
  for (int64_t d : dims) R *= x.sizes()[d];
  if (R == 0) {
    REMATCH_CHECK(op == ReduceOp::Sum || op == ReduceOp::Mean, name, ": cannot take the ", name,
                  " over zero elements of ", x.describe());
    return full(out_shape, op == ReduceOp::Sum ? 0.0 : std::nan(""), x.dtype(), x.device());
  }
  Tensor out = empty(out_shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;

  const bool block = dims.empty() || dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  if (dims.empty()) {
    copy_(out, x);
    return out;
  }
  if (block && x.is_contiguous()) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dims.front(); ++d) outer *= x.sizes()[d];
    for (int64_t d = dims.back() + 1; d < x.dim(); ++d) inner *= x.sizes()[d];
    run_reduce(op, out, x, outer, R, inner);
    return out;
  }
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) order.push_back(d);
  order.insert(order.end(), dims.begin(), dims.end());
  Tensor laid_out = contiguous(permute(x, order));
  run_reduce(op, out, laid_out, out.numel(), R, 1);
  return out;
}

std::pair<Tensor, Tensor> reduce_with_index(ReduceOp op, const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = reduce_name(op);
  REMATCH_CHECK(x.defined(), name, ": undefined input");
  REMATCH_CHECK(op == ReduceOp::Max || op == ReduceOp::Min, "reduce_with_index: only max and min have indices");
  REMATCH_CHECK(x.dtype() != DType::Bool, name, ": bool tensors are not supported; cast first");
  dim = wrap_dim(dim, x.dim(), name);
  const std::vector<int64_t> dims = x.dim() ? std::vector<int64_t>{dim} : std::vector<int64_t>{};
  const Shape out_shape = reduced_shape(x.sizes(), dims, keepdim);
  const int64_t R = x.dim() ? x.sizes()[dim] : 1;
  REMATCH_CHECK(R > 0, name, ": dim ", dim, " of ", x.describe(), " is empty");
  Tensor values = empty(out_shape, x.dtype(), x.device());
  Tensor indices = empty(out_shape, DType::Int64, x.device());
  if (values.numel() == 0) return {values, indices};
  // Move `dim` last, keeping the other dims in order, so rows come out in the output's order.
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim) order.push_back(d);
  if (x.dim()) order.push_back(dim);
  Tensor rows = contiguous(permute(x, order));
  if (rows.device().is_cuda()) cuda::reduce_with_index(op, values, indices, rows, values.numel(), R);
  else cpu::reduce_with_index(op, values, indices, rows, values.numel(), R);
  return {values, indices};
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  REMATCH_CHECK(x.defined() && is_floating(x.dtype()), "logsumexp: needs a floating tensor, got ", x.describe());
  // log Σ exp(x) = m + log Σ exp(x - m) with m the max; rows whose max is ±inf use m = 0 so that all -inf
  // gives log 0 = -inf and +inf gives +inf, without inf - inf.
  Tensor m = reduce(ReduceOp::Max, x, dims, true);
  Tensor finite = unary(UnaryOp::IsFinite, m);
  m = where(finite, m, zeros({}, x.dtype(), x.device()));
  Tensor s = reduce(ReduceOp::Sum, unary(UnaryOp::Exp, binary(BinaryOp::Sub, x, m)), dims, true);
  Tensor out = binary(BinaryOp::Add, unary(UnaryOp::Log, s), m);
  if (keepdim) return out;
  const std::vector<int64_t> nd = normalise_dims(dims, x.dim(), "logsumexp");
  return reshape(out, reduced_shape(x.sizes(), nd, false));
}

}  // namespace rematch::kernels
