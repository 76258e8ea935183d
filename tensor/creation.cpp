#include "tensor/creation.h"

#include <cmath>

#include "tensor/kernels.h"

namespace rematch {

Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape) REMATCH_CHECK(d >= 0, "empty: negative size in shape ", shape_str(shape));
  const int64_t n = shape_numel(shape);
  size_t bytes = 0;
  // A byte count past size_t would wrap to a small allocation that the first copy writes past.
  REMATCH_CHECK(!__builtin_mul_overflow(static_cast<size_t>(n), dtype_size(dtype), &bytes), "empty: shape ",
                shape_str(shape), " of ", dtype_name(dtype), " needs more bytes than memory can address");
  auto storage = std::make_shared<Storage>(bytes, device);
  return make_tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  kernels::fill_(t, value);
  return t;
}

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor scalar_tensor(double value, DType dtype, Device device) { return full({}, value, dtype, device); }
Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.dtype(), t.device()); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.dtype(), t.device()); }
Tensor full_like(const Tensor& t, double value) { return full(t.sizes(), value, t.dtype(), t.device()); }

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  REMATCH_CHECK(step != 0 && std::isfinite(start) && std::isfinite(end) && std::isfinite(step),
                "arange: start ", start, ", end ", end, ", step ", step, " do not define a range");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
  Tensor host = empty({n}, dtype, Device::cpu());
  dispatch_numeric("arange", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = host.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return kernels::to_device(host, device);
}

Tensor arange(int64_t end, DType dtype, Device device) { return arange(0, static_cast<double>(end), 1, dtype, device); }

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (m < 0) m = n;
  REMATCH_CHECK(n >= 0, "eye: negative size ", n);
  Tensor t = zeros({n, m}, dtype, device);
  kernels::fill_(kernels::as_strided(t, {std::min(n, m)}, {m + 1}, 0), 1.0);
  return t;
}

Tensor from_buffer(const void* data, const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  copy_bytes(t.raw_data(), device, data, Device::cpu(), static_cast<size_t>(t.numel()) * dtype_size(dtype));
  return t;
}

}  // namespace rematch
