// kernels::matmul: validates shapes, dtypes and devices, allocates the result and hands over to the
// device's implementation (tensor/cpu/matmul.cpp, tensor/cuda/matmul.cu).
#include "tensor/cpu/matmul_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/kernels.h"

namespace rematch::kernels {

Tensor matmul(const Tensor& a, const Tensor& b) {
  REMATCH_CHECK(a.defined() && b.defined(), "matmul: undefined input");
  check_same_device("matmul", {&a, &b});
  REMATCH_CHECK(is_floating(a.dtype()), "matmul: expected float32 or float64 operands, got ", a.describe());
  REMATCH_CHECK(a.dtype() == b.dtype(), "matmul: dtypes differ (", a.describe(), " and ", b.describe(),
                "); convert one with to()");
  REMATCH_CHECK((a.dim() == 2 || a.dim() == 3) && (b.dim() == 2 || b.dim() == 3),
                "matmul: expected 2-D or 3-D operands, got ", a.describe(), " and ", b.describe());
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  REMATCH_CHECK(b.size(-2) == k, "matmul: inner dims differ: ", a.describe(), " x ", b.describe(), " (", k,
                " vs ", b.size(-2), ")");
  Shape out_shape{n, m};
  if (a.dim() == 3 || b.dim() == 3) {
    // A 2-D operand acts as a batch of one, which broadcasts like a batch dim of size 1.
    const int64_t ba = a.dim() == 3 ? a.size(0) : 1, bb = b.dim() == 3 ? b.size(0) : 1;
    REMATCH_CHECK(ba == bb || ba == 1 || bb == 1, "matmul: batch sizes ", ba, " and ", bb,
                  " do not broadcast: ", a.describe(), " x ", b.describe());
    out_shape.insert(out_shape.begin(), ba == 1 ? bb : ba);
  }
  Tensor out = empty(out_shape, a.dtype(), a.device());
  if (out.numel() == 0) return out;
  if (a.device().is_cuda()) cuda::matmul(out, a, b);
  else cpu::matmul(out, a, b);
  return out;
}

}  // namespace rematch::kernels
