// Differentiable views and shape ops. A view's backward routes the gradient back to where the view's elements
// sit in the input: shape changes reshape it back, transposes/permutes undo themselves, and views that drop
// elements (slice, select, narrow) place it into zeros of the input's shape. Placing is itself an op whose
// derivative is the same view again, so every backward here differentiates to any order.
#include <algorithm>
#include <functional>

#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

namespace {

// The gradient of a reshaping view: the same values in the input's shape. reshape, not view: the incoming
// gradient may be an expanded or transposed tensor that has no view of that shape.
Tensor record_reshaping(const char* name, const Tensor& x, const Tensor& y) {
  return record(name, {x}, y, [shape = x.sizes()](const TensorList& g) { return TensorList{reshape(g[0], shape)}; });
}

// A view that picks some of x's elements (slice, narrow, select), as a kernels:: view.
using Pick = std::function<Tensor(const Tensor&)>;

// Names of a pick op and of its backward, the placing op.
struct PickNames {
  const char* pick;
  const char* place;
};

Tensor picked(PickNames names, const Tensor& x, const Pick& pick);

// The backward of a pick: g written where the picked elements sit in zeros of `shape`. Its own derivative picks
// the same elements of the incoming gradient.
Tensor placed(PickNames names, const Tensor& g, const Shape& shape, const Pick& pick) {
  Tensor gx = zeros(shape, g.dtype(), g.device());
  kernels::copy_(pick(gx), g);
  return record(names.place, {g}, gx,
                [names, pick](const TensorList& gg) { return TensorList{picked(names, gg[0], pick)}; });
}

Tensor picked(PickNames names, const Tensor& x, const Pick& pick) {
  return record(names.pick, {x}, pick(x), [names, shape = x.sizes(), pick](const TensorList& g) {
    return TensorList{placed(names, g[0], shape, pick)};
  });
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  return record_reshaping("reshape", x, kernels::reshape(x, shape));
}
Tensor view(const Tensor& x, const Shape& shape) { return record_reshaping("view", x, kernels::view(x, shape)); }
Tensor squeeze(const Tensor& x, int64_t dim) { return record_reshaping("squeeze", x, kernels::squeeze(x, dim)); }
Tensor squeeze(const Tensor& x) { return record_reshaping("squeeze", x, kernels::squeeze(x)); }
Tensor unsqueeze(const Tensor& x, int64_t dim) {
  return record_reshaping("unsqueeze", x, kernels::unsqueeze(x, dim));
}
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  return record_reshaping("flatten", x, kernels::flatten(x, start_dim, end_dim));
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  Tensor y = kernels::transpose(x, d0, d1);
  return record("transpose", {x}, y, [d0, d1](const TensorList& g) { return TensorList{transpose(g[0], d0, d1)}; });
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  Tensor y = kernels::permute(x, dims);
  // Output dim i is input dim dims[i], so input dim dims[i] comes back from output dim i.
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], x.dim(), "permute")] = static_cast<int64_t>(i);
  return record("permute", {x}, y, [inverse](const TensorList& g) { return TensorList{permute(g[0], inverse)}; });
}

// The same view of a zeros tensor shaped like x is where the gradient belongs.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return picked({"slice", "slice_backward"}, x,
                [dim, start, end, step](const Tensor& t) { return kernels::slice(t, dim, start, end, step); });
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return picked({"narrow", "narrow_backward"}, x,
                [dim, start, length](const Tensor& t) { return kernels::narrow(t, dim, start, length); });
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return picked({"select", "select_backward"}, x,
                [dim, index](const Tensor& t) { return kernels::select(t, dim, index); });
}

Tensor expand(const Tensor& x, const Shape& shape) {
  Tensor y = kernels::expand(x, shape);
  // Every copy of a broadcast element contributes to it.
  return record("expand", {x}, y, [shape = x.sizes()](const TensorList& g) { return TensorList{sum_to(g[0], shape)}; });
}

Tensor cat(const TensorList& xs, int64_t dim) {
  Tensor y = kernels::cat(xs, dim);
  const int64_t d = wrap_dim(dim, y.dim(), "cat");
  std::vector<int64_t> lengths;
  for (const Tensor& x : xs) lengths.push_back(x.sizes()[d]);
  // Each input gets back its own stretch of the gradient along dim.
  return record("cat", xs, y, [d, lengths](const TensorList& g) {
    TensorList grads;
    int64_t at = 0;
    for (int64_t n : lengths) {
      grads.push_back(narrow(g[0], d, at, n));
      at += n;
    }
    return grads;
  });
}

Tensor stack(const TensorList& xs, int64_t dim) {
  REMATCH_CHECK(!xs.empty(), "stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < xs.size(); ++i) {
    REMATCH_CHECK(xs[i].defined(), "stack: tensor ", i, " is undefined");
    REMATCH_CHECK(xs[i].sizes() == xs[0].sizes(), "stack: tensor ", i, " has shape ", xs[i].shape_str(),
                  " but tensor 0 has shape ", xs[0].shape_str(), "; all must match");
  }
  const int64_t d = wrap_dim(dim, xs[0].dim() + 1, "stack");
  TensorList parts;
  for (const Tensor& x : xs) parts.push_back(unsqueeze(x, d));
  return cat(parts, d);
}

TensorList split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  REMATCH_CHECK(x.dim() > 0, "split: cannot split a 0-d tensor ", x.describe());
  const int64_t d = wrap_dim(dim, x.dim(), "split");
  int64_t total = 0;
  for (int64_t n : sizes) {
    REMATCH_CHECK(n >= 0, "split: negative size ", n, " in split sizes for ", x.describe());
    total += n;
  }
  REMATCH_CHECK(total == x.sizes()[d], "split: sizes add up to ", total, " but dim ", d, " of ", x.describe(),
                " has size ", x.sizes()[d]);
  TensorList pieces;
  int64_t at = 0;
  for (int64_t n : sizes) {
    pieces.push_back(kernels::narrow(x, d, at, n));
    at += n;
  }
  // One node for all pieces; the engine fills the gradients of unused pieces with zeros.
  return record("split", {x}, pieces, [d](const TensorList& g) { return TensorList{cat(g, d)}; });
}

TensorList split(const Tensor& x, int64_t split_size, int64_t dim) {
  REMATCH_CHECK(x.dim() > 0, "split: cannot split a 0-d tensor ", x.describe());
  const int64_t n = x.sizes()[wrap_dim(dim, x.dim(), "split")];
  REMATCH_CHECK(split_size > 0 || (split_size == 0 && n == 0), "split: split_size must be positive, got ",
                split_size, " for ", x.describe());
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += split_size) sizes.push_back(std::min(split_size, n - at));
  if (sizes.empty()) sizes.push_back(0);  // an empty dim splits into one empty piece (PyTorch)
  return split(x, sizes, dim);
}

TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  REMATCH_CHECK(chunks > 0, "chunk: number of chunks must be positive, got ", chunks);
  REMATCH_CHECK(x.dim() > 0, "chunk: cannot chunk a 0-d tensor ", x.describe());
  const int64_t n = x.sizes()[wrap_dim(dim, x.dim(), "chunk")];
  // PyTorch: pieces of ceil(n / chunks), so there may be fewer than `chunks` of them.
  return split(x, (n + chunks - 1) / chunks, dim);
}

Tensor pad(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value) {
  Tensor y = kernels::pad(x, dim, before, after, value);
  const int64_t d = wrap_dim(dim, x.dim(), "pad");
  return record("pad", {x}, y, [d, before, n = x.sizes()[d]](const TensorList& g) {
    return TensorList{narrow(g[0], d, before, n)};
  });
}

}  // namespace rematch
