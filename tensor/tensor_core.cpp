#include "tensor/tensor_core.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "tensor/kernels.h"

namespace rematch {

void Tensor::check_defined(const char* what) const {
  REMATCH_CHECK(impl_ != nullptr, what, ": the tensor is undefined (default-constructed)");
}

const Shape& Tensor::sizes() const { check_defined("sizes"); return impl_->sizes; }
const Shape& Tensor::strides() const { check_defined("strides"); return impl_->strides; }
int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }
int64_t Tensor::dim() const { return static_cast<int64_t>(sizes().size()); }
int64_t Tensor::numel() const { return shape_numel(sizes()); }
int64_t Tensor::offset() const { check_defined("offset"); return impl_->offset; }
DType Tensor::dtype() const { check_defined("dtype"); return impl_->dtype; }
Device Tensor::device() const { check_defined("device"); return impl_->storage->device(); }
const std::shared_ptr<Storage>& Tensor::storage() const { check_defined("storage"); return impl_->storage; }

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (impl_->sizes[d] == 1) continue;
    if (impl_->strides[d] != expected) return false;
    expected *= impl_->sizes[d];
  }
  return true;
}

void* Tensor::raw_data() const {
  check_defined("raw_data");
  return static_cast<char*>(impl_->storage->data()) + impl_->offset * static_cast<int64_t>(dtype_size(dtype()));
}

template <typename T> std::vector<T> Tensor::to_vector() const {
  check_defined("to_vector");
  Tensor host = kernels::contiguous(kernels::to_device(*this, Device::cpu()));
  std::vector<T> out(static_cast<size_t>(host.numel()));
  dispatch_all(host.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* p = static_cast<const S*>(host.raw_data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(p[i]);
  });
  return out;
}

template <typename T> T Tensor::item() const {
  REMATCH_CHECK(defined() && numel() == 1, "item: expected a one-element tensor, got ",
                defined() ? describe() : std::string("an undefined tensor"));
  return to_vector<T>()[0];
}

#define REMATCH_INSTANTIATE(T)                            \
  template std::vector<T> Tensor::to_vector<T>() const;   \
  template T Tensor::item<T>() const;
REMATCH_INSTANTIATE(float)
REMATCH_INSTANTIATE(double)
REMATCH_INSTANTIATE(int32_t)
REMATCH_INSTANTIATE(int64_t)
REMATCH_INSTANTIATE(bool)
REMATCH_INSTANTIATE(uint8_t)
#undef REMATCH_INSTANTIATE

AutogradMeta& Tensor::autograd_meta() const {
  check_defined("autograd_meta");
  if (!impl_->autograd) impl_->autograd = std::make_shared<AutogradMeta>();
  return *impl_->autograd;
}
bool Tensor::has_autograd_meta() const { return impl_ && impl_->autograd; }

bool Tensor::requires_grad() const { return has_autograd_meta() && impl_->autograd->requires_grad; }

Tensor& Tensor::requires_grad_(bool on) {
  check_defined("requires_grad_");
  REMATCH_CHECK(!on || is_floating(dtype()), "requires_grad_: only floating tensors can require gradients, got ",
                describe());
  REMATCH_CHECK(is_leaf(), "requires_grad_: ", describe(),
                " is the output of an op; only leaves can change requires_grad (use detach() first)");
  autograd_meta().requires_grad = on;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  return has_autograd_meta() ? impl_->autograd->grad : undefined;
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined())
    REMATCH_CHECK(g.sizes() == sizes() && g.dtype() == dtype() && g.device() == device(), "set_grad: gradient ",
                  g.describe(), " does not match tensor ", describe());
  autograd_meta().grad = g;
}

void Tensor::zero_grad() const {
  if (has_autograd_meta()) impl_->autograd->grad = Tensor();
}

void Tensor::retain_grad() const {
  REMATCH_CHECK(requires_grad(), "retain_grad: ", describe(), " does not require grad");
  autograd_meta().retains_grad = true;
}

bool Tensor::is_leaf() const { return !has_autograd_meta() || impl_->autograd->grad_fn == nullptr; }

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<Node> none;
  return has_autograd_meta() ? impl_->autograd->grad_fn : none;
}

Tensor Tensor::detach() const {
  check_defined("detach");
  return make_tensor(impl_->storage, impl_->sizes, impl_->strides, impl_->offset, impl_->dtype);
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

std::string Tensor::shape_str() const { return rematch::shape_str(sizes()); }

std::string Tensor::describe() const {
  if (!defined()) return "undefined";
  return std::string(dtype_name(dtype())) + shape_str() + " " + device().str();
}

std::string Tensor::str() const {
  std::ostringstream os;
  os << describe() << " {";
  std::vector<double> v = to_vector<double>();
  const size_t n = v.size(), edge = 6;
  for (size_t i = 0; i < n; ++i) {
    if (n > 2 * edge && i == edge) { os << ", ..."; i = n - edge; }
    os << (i ? ", " : "") << v[i];
  }
  os << '}';
  return os.str();
}

int64_t shape_numel(const Shape& s) {
  // A zero anywhere makes the product 0, however large the other sizes (and must be seen before they overflow).
  for (int64_t d : s)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : s)
    REMATCH_CHECK(!__builtin_mul_overflow(n, d, &n), "shape ", shape_str(s),
                  " holds more elements than a 64-bit count can hold: no tensor can have it");
  return n;
}

Shape contiguous_strides(const Shape& sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    // Past 64 bits only when a zero size elsewhere makes the tensor empty (shape_numel refuses the rest): its
    // strides address nothing, so they saturate instead of overflowing.
    if (d > 0 && __builtin_mul_overflow(acc, std::max<int64_t>(sizes[d], 1), &acc))
      acc = std::numeric_limits<int64_t>::max();
  }
  return st;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 / -1, as in PyTorch
  REMATCH_CHECK(dim >= -n && dim < n, op, ": dim ", dim, " is out of range for a tensor with ", ndim,
                " dims (expected ", -n, " to ", n - 1, ")");
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    REMATCH_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", shape_str(a), " and ", shape_str(b),
                  " cannot be broadcast (dim ", i, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void check_same_device(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    if (!t->defined()) continue;
    if (!first) { first = t; continue; }
    if (t->device() != first->device()) {
      std::string list;
      for (const Tensor* u : ts) if (u->defined()) list += (list.empty() ? "" : ", ") + u->describe();
      REMATCH_FAIL(op, ": inputs are on different devices (", list, "); move them with to() first");
    }
  }
}

Tensor make_tensor(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace rematch
