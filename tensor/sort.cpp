// kernels::sort and kernels::topk: validate, allocate values and int64 indices, hand over to the device's
// implementation (tensor/cpu/sort.cpp, tensor/cuda/sort.cu).
#include "tensor/cpu/sort_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/kernels.h"

namespace rematch::kernels {

namespace {

// Sorted first k entries along dim. A 0-d tensor is its own sort and top-k, whatever k (PyTorch).
std::pair<Tensor, Tensor> sorted_prefix(const char* op, const Tensor& x, int64_t dim, bool descending,
                                        int64_t k) {
  REMATCH_CHECK(x.dtype() != DType::Bool, op, ": cannot order a bool tensor ", x.describe(),
                "; cast it to an integer dtype first");
  Shape shape = x.sizes();
  if (x.dim() > 0) shape[dim] = k;
  else k = 1;
  Tensor values = empty(shape, x.dtype(), x.device());
  Tensor indices = empty(shape, DType::Int64, x.device());
  if (values.numel() == 0) return {values, indices};
  if (x.device().is_cuda()) cuda::sort(values, indices, contiguous(x), dim, descending, k);
  else cpu::sort(values, indices, contiguous(x), dim, descending, k);
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  REMATCH_CHECK(x.defined(), "sort: undefined input");
  dim = wrap_dim(dim, x.dim(), "sort");
  return sorted_prefix("sort", x, dim, descending, x.dim() ? x.size(dim) : 1);
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  REMATCH_CHECK(x.defined(), "topk: undefined input");
  dim = wrap_dim(dim, x.dim(), "topk");
  const int64_t n = x.dim() ? x.size(dim) : 1;
  REMATCH_CHECK(k >= 0 && k <= n, "topk: k = ", k, " is out of range for dim ", dim, " of size ", n, " in ",
                x.describe());
  return sorted_prefix("topk", x, dim, largest, k);
}

}  // namespace rematch::kernels
