// Views: new sizes/strides/offset over the same storage. Nothing here copies except reshape's fallback.
#include <algorithm>
#include <numeric>

#include "tensor/kernels.h"

namespace rematch::kernels {

Tensor as_strided(const Tensor& x, Shape sizes, Shape strides, int64_t offset) {
  REMATCH_CHECK(sizes.size() == strides.size(), "as_strided: ", sizes.size(), " sizes but ", strides.size(),
                " strides");
  Tensor t = make_tensor(x.storage(), std::move(sizes), std::move(strides), offset, x.dtype());
  return t;
}

Shape infer_shape(Shape shape, int64_t numel, const char* op) {
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      REMATCH_CHECK(infer_at < 0, op, ": only one dim may be -1 in ", shape_str(shape));
      infer_at = static_cast<int64_t>(i);
    } else {
      REMATCH_CHECK(shape[i] >= 0, op, ": invalid size ", shape[i], " in ", shape_str(shape));
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    REMATCH_CHECK(known != 0 && numel % known == 0, op, ": cannot infer -1 in ", shape_str(shape), " for ", numel,
                  " elements");
    shape[infer_at] = numel / known;
  }
  REMATCH_CHECK(shape_numel(shape) == numel, op, ": shape ", shape_str(shape), " does not hold ", numel,
                " elements");
  return shape;
}

// Strides for viewing `x` as `shape` without a copy, or empty when impossible (PyTorch's computeStride).
static bool view_strides(const Tensor& x, const Shape& shape, Shape& out) {
  const Shape& old_sizes = x.sizes();
  const Shape& old_strides = x.strides();
  out.assign(shape.size(), 0);
  if (x.numel() == 0 || x.dim() == 0) {  // nothing to preserve: any layout of 0 or 1 element is a view
    out = contiguous_strides(shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  return true;
}

Tensor view(const Tensor& x, Shape shape) {
  shape = infer_shape(std::move(shape), x.numel(), "view");
  Shape strides;
  REMATCH_CHECK(view_strides(x, shape, strides), "view: ", x.describe(), " with strides ",
                shape_str(x.strides()), " cannot be viewed as ", shape_str(shape), "; use reshape (copies)");
  return as_strided(x, shape, strides, x.offset());
}

Tensor reshape(const Tensor& x, Shape shape) {
  shape = infer_shape(std::move(shape), x.numel(), "reshape");
  Shape strides;
  if (view_strides(x, shape, strides)) return as_strided(x, shape, strides, x.offset());
  return view(contiguous(x), shape);
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  d0 = wrap_dim(d0, x.dim(), "transpose");
  d1 = wrap_dim(d1, x.dim(), "transpose");
  if (x.dim() == 0) return x.detach();
  Shape sizes = x.sizes(), strides = x.strides();
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return as_strided(x, sizes, strides, x.offset());
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  const int64_t n = x.dim();
  REMATCH_CHECK(static_cast<int64_t>(dims.size()) == n, "permute: ", dims.size(), " dims given for ",
                x.describe());
  std::vector<bool> seen(n, false);
  Shape sizes(n), strides(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = wrap_dim(dims[i], n, "permute");
    REMATCH_CHECK(!seen[d], "permute: dim ", dims[i], " repeated");
    seen[d] = true;
    sizes[i] = x.sizes()[d];
    strides[i] = x.strides()[d];
  }
  return as_strided(x, sizes, strides, x.offset());
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  dim = wrap_dim(dim, x.dim(), "slice");
  REMATCH_CHECK(x.dim() > 0, "slice: cannot slice a 0-d tensor");
  REMATCH_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t n = x.sizes()[dim];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sizes = x.sizes(), strides = x.strides();
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return as_strided(x, sizes, strides, x.offset() + start * x.strides()[dim]);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  dim = wrap_dim(dim, x.dim(), "narrow");
  const int64_t n = x.dim() ? x.sizes()[dim] : 0;
  if (start < 0) start += n;
  REMATCH_CHECK(start >= 0 && length >= 0 && start + length <= n, "narrow: [", start, ", ", start + length,
                ") is out of range for dim ", dim, " of size ", n, " in ", x.describe());
  return slice(x, dim, start, start + length);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  REMATCH_CHECK(x.dim() > 0, "select: cannot index a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "select");
  const int64_t n = x.sizes()[dim];
  REMATCH_CHECK(index >= -n && index < n, "select: index ", index, " is out of range for dim ", dim, " of size ",
                n, " in ", x.describe());
  if (index < 0) index += n;
  Shape sizes = x.sizes(), strides = x.strides();
  const int64_t off = x.offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(x, sizes, strides, off);
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return x.detach();
  dim = wrap_dim(dim, x.dim(), "squeeze");
  if (x.sizes()[dim] != 1) return as_strided(x, x.sizes(), x.strides(), x.offset());
  Shape sizes = x.sizes(), strides = x.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(x, sizes, strides, x.offset());
}

Tensor squeeze(const Tensor& x) {
  Shape sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.sizes()[d] != 1) {
      sizes.push_back(x.sizes()[d]);
      strides.push_back(x.strides()[d]);
    }
  return as_strided(x, sizes, strides, x.offset());
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  dim = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape sizes = x.sizes(), strides = x.strides();
  const int64_t st = dim < x.dim() ? sizes[dim] * strides[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, st);
  return as_strided(x, sizes, strides, x.offset());
}

Tensor expand(const Tensor& x, Shape shape) {
  const int64_t n = static_cast<int64_t>(shape.size());
  REMATCH_CHECK(n >= x.dim(), "expand: ", x.describe(), " has more dims than target ", shape_str(shape));
  Shape strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t xd = i - (n - x.dim());
    if (xd >= 0) {
      const int64_t xs = x.sizes()[xd];
      if (shape[i] == -1) shape[i] = xs;
      REMATCH_CHECK(xs == shape[i] || xs == 1, "expand: ", x.describe(), " cannot be expanded to ",
                    shape_str(shape), " (dim ", i, ": ", xs, " vs ", shape[i], ")");
      strides[i] = xs == shape[i] ? x.strides()[xd] : 0;
    } else {
      REMATCH_CHECK(shape[i] >= 0, "expand: -1 is not allowed for a new leading dim in ", shape_str(shape));
      strides[i] = 0;
    }
  }
  return as_strided(x, shape, strides, x.offset());
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) return reshape(x, {1});
  start_dim = wrap_dim(start_dim, x.dim(), "flatten");
  end_dim = wrap_dim(end_dim, x.dim(), "flatten");
  REMATCH_CHECK(start_dim <= end_dim, "flatten: start_dim ", start_dim, " is after end_dim ", end_dim);
  Shape shape(x.sizes().begin(), x.sizes().begin() + start_dim);
  int64_t merged = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) merged *= x.sizes()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.sizes().begin() + end_dim + 1, x.sizes().end());
  return reshape(x, shape);
}

}  // namespace rematch::kernels
