// kernels:: entry points of the shape and index family: validate (dims, shapes, dtypes, devices, index
// values), allocate, then hand over to the device's implementation (tensor/cpu/index.cpp,
// tensor/cuda/index.cu). cat and pad are composites of copy_ and fill_ into views of the output, so they run
// wherever those do.
#include <tuple>

#include "tensor/cpu/index_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/kernels.h"

namespace rematch::kernels {
namespace {

void check_index_dtype(const char* op, const Tensor& index) {
  REMATCH_CHECK(index.defined(), op, ": undefined index");
  REMATCH_CHECK(is_index_dtype(index.dtype()), op, ": index must be int32 or int64, got ", index.describe());
}

// Every index value must lie in [0, size): the error names the value, where it sits and the dim it indexes.
void check_index_values(const char* op, const Tensor& index, int64_t dim, int64_t size, const Tensor& x) {
  cpu::BadIndex bad;
  if (index.device().is_cuda()) std::tie(bad.position, bad.value) = cuda::find_bad_index(index, size);
  else bad = cpu::find_bad_index(index, size);
  REMATCH_CHECK(bad.position < 0, op, ": index ", bad.value, " (at flat position ", bad.position,
                " of index ", index.describe(), ") is out of range for dim ", dim, " of size ", size, " in ",
                x.describe());
}

// x must be at least 1-d; returns dim wrapped.
int64_t indexed_dim(const char* op, const Tensor& x, int64_t dim) {
  REMATCH_CHECK(x.defined(), op, ": undefined input");
  REMATCH_CHECK(x.dim() > 0, op, ": cannot index a 0-d tensor ", x.describe());
  return wrap_dim(dim, x.dim(), op);
}

void check_src(const char* op, const Tensor& x, const Tensor& src) {
  REMATCH_CHECK(src.defined(), op, ": undefined src");
  REMATCH_CHECK(src.dtype() == x.dtype(), op, ": src ", src.describe(), " and x ", x.describe(),
                " have different dtypes");
  REMATCH_CHECK(src.dim() == x.dim(), op, ": src ", src.describe(), " and x ", x.describe(),
                " have different numbers of dims");
}

}  // namespace

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  REMATCH_CHECK(!xs.empty(), "cat: expected a non-empty list of tensors");
  for (size_t i = 0; i < xs.size(); ++i) {
    REMATCH_CHECK(xs[i].defined(), "cat: tensor ", i, " is undefined");
    REMATCH_CHECK(xs[i].dim() > 0, "cat: tensor ", i, " (", xs[i].describe(), ") is 0-d and cannot be concatenated");
  }
  const Tensor& first = xs[0];
  dim = wrap_dim(dim, first.dim(), "cat");
  Shape shape = first.sizes();
  shape[dim] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    check_same_device("cat", {&first, &x});
    REMATCH_CHECK(x.dtype() == first.dtype(), "cat: tensor ", i, " is ", x.describe(), " but tensor 0 is ",
                  first.describe(), "; dtypes must match");
    bool same = x.dim() == first.dim();
    for (int64_t d = 0; same && d < x.dim(); ++d) same = d == dim || x.sizes()[d] == first.sizes()[d];
    REMATCH_CHECK(same, "cat: tensor ", i, " has shape ", x.shape_str(), " but tensor 0 has shape ",
                  first.shape_str(), "; all dims but dim ", dim, " must match");
    shape[dim] += x.sizes()[dim];
  }
  Tensor out = empty(shape, first.dtype(), first.device());
  int64_t at = 0;
  for (const Tensor& x : xs) {
    const int64_t n = x.sizes()[dim];
    if (n > 0 && x.numel() > 0) copy_(narrow(out, dim, at, n), x);
    at += n;
  }
  return out;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = indexed_dim("index_select", x, dim);
  check_index_dtype("index_select", index);
  REMATCH_CHECK(index.dim() == 1, "index_select: index must be 1-d, got ", index.describe());
  check_same_device("index_select", {&x, &index});
  Shape shape = x.sizes();
  shape[dim] = index.numel();
  Tensor out = empty(shape, x.dtype(), x.device());
  if (out.numel() == 0 && index.numel() == 0) return out;
  check_index_values("index_select", index, dim, x.sizes()[dim], x);
  if (out.numel() == 0) return out;
  if (x.device().is_cuda()) cuda::index_select(out, x, dim, index);
  else cpu::index_select(out, x, dim, index);
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = indexed_dim("gather", x, dim);
  check_index_dtype("gather", index);
  check_same_device("gather", {&x, &index});
  REMATCH_CHECK(index.dim() == x.dim(), "gather: index ", index.describe(), " and x ", x.describe(),
                " must have the same number of dims");
  for (int64_t d = 0; d < x.dim(); ++d)
    REMATCH_CHECK(d == dim || index.sizes()[d] <= x.sizes()[d], "gather: index ", index.describe(),
                  " is larger than x ", x.describe(), " in dim ", d, " (only dim ", dim, " may differ)");
  Tensor out = empty(index.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  check_index_values("gather", index, dim, x.sizes()[dim], x);
  if (x.device().is_cuda()) cuda::gather(out, x, dim, index);
  else cpu::gather(out, x, dim, index);
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = indexed_dim("scatter_add", x, dim);
  check_index_dtype("scatter_add", index);
  check_src("scatter_add", x, src);
  check_same_device("scatter_add", {&x, &index, &src});
  REMATCH_CHECK(x.dtype() != DType::Bool, "scatter_add: cannot add into a bool tensor ", x.describe());
  REMATCH_CHECK(index.dim() == x.dim(), "scatter_add: index ", index.describe(), " and x ", x.describe(),
                " must have the same number of dims");
  for (int64_t d = 0; d < x.dim(); ++d) {
    REMATCH_CHECK(index.sizes()[d] <= src.sizes()[d], "scatter_add: index ", index.describe(),
                  " is larger than src ", src.describe(), " in dim ", d);
    REMATCH_CHECK(d == dim || index.sizes()[d] <= x.sizes()[d], "scatter_add: index ", index.describe(),
                  " is larger than x ", x.describe(), " in dim ", d, " (only dim ", dim, " may differ)");
  }
  Tensor out = clone(x);
  if (index.numel() == 0) return out;
  check_index_values("scatter_add", index, dim, x.sizes()[dim], x);
  if (x.device().is_cuda()) cuda::scatter_add_(out, dim, index, src);
  else cpu::scatter_add_(out, dim, index, src);
  return out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = indexed_dim("index_add", x, dim);
  check_index_dtype("index_add", index);
  REMATCH_CHECK(index.dim() == 1, "index_add: index must be 1-d, got ", index.describe());
  check_src("index_add", x, src);
  check_same_device("index_add", {&x, &index, &src});
  REMATCH_CHECK(x.dtype() != DType::Bool, "index_add: cannot add into a bool tensor ", x.describe());
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t want = d == dim ? index.numel() : x.sizes()[d];
    REMATCH_CHECK(src.sizes()[d] == want, "index_add: src ", src.describe(), " does not fit x ", x.describe(),
                  " with ", index.numel(), " indices along dim ", dim, " (dim ", d, ": ", src.sizes()[d],
                  " vs ", want, ")");
  }
  Tensor out = clone(x);
  if (src.numel() == 0) return out;
  check_index_values("index_add", index, dim, x.sizes()[dim], x);
  if (x.device().is_cuda()) cuda::index_add_(out, dim, index, src);
  else cpu::index_add_(out, dim, index, src);
  return out;
}

Tensor pad(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value) {
  REMATCH_CHECK(x.defined(), "pad: undefined input");
  REMATCH_CHECK(x.dim() > 0, "pad: cannot pad a 0-d tensor ", x.describe());
  dim = wrap_dim(dim, x.dim(), "pad");
  REMATCH_CHECK(before >= 0 && after >= 0, "pad: padding must be non-negative, got before ", before, ", after ",
                after, " for ", x.describe());
  Shape shape = x.sizes();
  shape[dim] += before + after;
  Tensor out = full(shape, value, x.dtype(), x.device());
  if (x.numel() > 0) copy_(narrow(out, dim, before, x.sizes()[dim]), x);
  return out;
}

}  // namespace rematch::kernels
