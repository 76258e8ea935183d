// Making new tensors: empty/zeros/ones/full, ranges, identity, copies of host data. All results are leaves
// that do not require grad.
#pragma once

#include <vector>

#include "tensor/tensor_core.h"

namespace rematch {

Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor scalar_tensor(double value, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
// [start, end) in steps of `step` (may be negative; not zero).
Tensor arange(double start, double end, double step = 1, DType dtype = DType::Int64, Device device = Device::cpu());
Tensor arange(int64_t end, DType dtype = DType::Int64, Device device = Device::cpu());
// n x m identity (m = n when negative).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::Float32, Device device = Device::cpu());
// A copy of `n` elements of `dtype` at `data` (host memory), shaped `shape`.
Tensor from_buffer(const void* data, const Shape& shape, DType dtype, Device device = Device::cpu());
// A copy of `values` shaped `shape`, which must hold exactly that many elements. An empty shape means 1-D
// [values.size()]; make 0-d tensors with scalar_tensor.
template <typename T>
Tensor from_vector(const std::vector<T>& values, Shape shape = {}, Device device = Device::cpu()) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  REMATCH_CHECK(shape_numel(shape) == static_cast<int64_t>(values.size()), "from_vector: ", values.size(),
                " values do not fill shape ", shape_str(shape));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return from_buffer(bytes.data(), shape, DType::Bool, device);
  } else {
    return from_buffer(values.data(), shape, dtype_of<T>::value, device);
  }
}

}  // namespace rematch
