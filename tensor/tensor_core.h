// Tensor: a cheap shared handle to (storage, sizes, strides, offset, dtype, device) plus autograd metadata.
// This header holds only the handle and its metadata accessors; computing on tensors goes through
// `kernels::` (tensor/kernels.h, no autograd) or the differentiable API of autograd/autograd.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/storage.h"

namespace rematch {

using Shape = std::vector<int64_t>;

class Node;  // autograd/node.h: a recorded op of the backward graph
struct TensorImpl;
struct AutogradMeta;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& sizes() const;
  const Shape& strides() const;
  int64_t size(int64_t dim) const;    // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  int64_t offset() const;             // in elements, into the storage
  DType dtype() const;
  Device device() const;
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const;

  // Pointer to element 0 of this view. The typed form checks the dtype and that the tensor is on the host.
  void* raw_data() const;
  template <typename T> T* data() const;
  // Value of a one-element tensor, converted to T (copied from the device when needed).
  template <typename T> T item() const;
  // All values in row-major order, converted to T, on the host.
  template <typename T> std::vector<T> to_vector() const;

  // Autograd metadata. The graph itself is built by autograd/; these only read and set flags.
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);   // leaves only
  const Tensor& grad() const;               // undefined until a backward pass reaches this tensor
  void set_grad(const Tensor& g) const;
  void zero_grad() const;                   // drops .grad (PyTorch's set_to_none)
  void retain_grad() const;                 // keep .grad on a non-leaf after backward
  bool is_leaf() const;
  const std::shared_ptr<Node>& grad_fn() const;
  // A new handle on the same storage that is cut from the graph.
  Tensor detach() const;

  // "float32[2, 3] cpu" — what error messages print.
  std::string describe() const;
  std::string shape_str() const;
  // Values, for debugging and tests (elides the middle of long tensors).
  std::string str() const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  AutogradMeta& autograd_meta() const;      // created on first use
  bool has_autograd_meta() const;
  bool same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  void check_defined(const char* what) const;
  std::shared_ptr<TensorImpl> impl_;
};

struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;       // null for leaves
  int output_nr = 0;                   // which output of grad_fn this tensor is
  std::weak_ptr<Node> grad_accumulator;  // leaves: the node that sums into .grad (autograd/engine)
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape sizes;
  Shape strides;  // in elements
  int64_t offset = 0;
  DType dtype = DType::Float32;
  std::shared_ptr<AutogradMeta> autograd;
};

std::string shape_str(const Shape& s);
int64_t shape_numel(const Shape& s);
Shape contiguous_strides(const Shape& sizes);
// Wraps a possibly negative dim into [0, ndim); `op` names the caller in the error.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// NumPy broadcasting of two shapes; the error names `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Every input must be on the same device; the error lists each input's device.
void check_same_device(const char* op, std::initializer_list<const Tensor*> ts);
// Builds a tensor over existing storage.
Tensor make_tensor(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset, DType dtype);

template <typename T> T* Tensor::data() const {
  check_defined("data");
  REMATCH_CHECK(dtype() == dtype_of<T>::value, "data<", dtype_name(dtype_of<T>::value), ">: tensor is ",
                describe());
  REMATCH_CHECK(device().is_cpu(), "data<T>(): tensor ", describe(), " is not on the host; copy it with to()");
  return static_cast<T*>(raw_data());
}

}  // namespace rematch
