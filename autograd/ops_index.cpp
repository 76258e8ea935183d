// Differentiable index ops. Reading by index (index_select, gather, embedding) sends the gradient back by
// adding it at the same indices (index_add, scatter_add), so repeated indices accumulate; adding by index is
// the reverse, it reads the gradient back at the indices. So each pair is the other's backward, and both
// differentiate to any order. Index tensors get no gradient.
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor y = kernels::index_select(x, dim, index);
  return record("index_select", {x}, y, [shape = x.sizes(), dim, index](const TensorList& g) {
    return TensorList{index_add(zeros(shape, g[0].dtype(), g[0].device()), dim, index, g[0])};
  });
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor y = kernels::index_add(x, dim, index, src);
  // d/dx = identity; d/dsrc reads g at the rows each src row was added to.
  return record("index_add", {x, src}, y,
                [dim, index](const TensorList& g) { return TensorList{g[0], index_select(g[0], dim, index)}; });
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor y = kernels::gather(x, dim, index);
  return record("gather", {x}, y, [shape = x.sizes(), dim, index](const TensorList& g) {
    return TensorList{scatter_add(zeros(shape, g[0].dtype(), g[0].device()), dim, index, g[0])};
  });
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor y = kernels::scatter_add(x, dim, index, src);
  // d/dx = identity; d/dsrc reads g where each src element was added. src may be larger than index (only its
  // leading index-shaped block is scattered), and the rest of it gets zero gradient: the block is padded with
  // zeros to src's shape.
  return record("scatter_add", {x, src}, y, [dim, index, src_shape = src.sizes()](const TensorList& g) {
    Tensor gsrc = gather(g[0], dim, index);
    for (int64_t d = 0; d < gsrc.dim(); ++d)
      if (gsrc.size(d) != src_shape[d]) gsrc = pad(gsrc, d, 0, src_shape[d] - gsrc.size(d));
    return TensorList{g[0], gsrc};
  });
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  REMATCH_CHECK(weight.defined() && weight.dim() == 2, "embedding: weight must be [num_embeddings, dim], got ",
                weight.defined() ? weight.describe() : "undefined");
  REMATCH_CHECK(ids.defined() && is_index_dtype(ids.dtype()), "embedding: ids must be int32 or int64, got ",
                ids.defined() ? ids.describe() : "undefined");
  const Tensor flat = kernels::reshape(ids, {-1});
  Tensor rows;
  try {
    rows = kernels::index_select(weight, 0, flat);
  } catch (const Error& e) {
    REMATCH_FAIL("embedding: ids ", ids.describe(), " do not index weight ", weight.describe(), ": ", e.what());
  }
  Shape shape = ids.sizes();
  shape.push_back(weight.sizes()[1]);
  Tensor y = kernels::reshape(rows, shape);
  // Row ids[i] of the gradient table collects every output row that read it.
  return record("embedding", {weight}, y, [wshape = weight.sizes(), flat](const TensorList& g) {
    Tensor rows_grad = reshape(g[0], {flat.numel(), wshape[1]});
    return TensorList{index_add(zeros(wshape, g[0].dtype(), g[0].device()), 0, flat, rows_grad)};
  });
}

}  // namespace rematch
