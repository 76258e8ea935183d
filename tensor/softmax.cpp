// kernels:: entry points of the fused row ops (softmax, log_softmax, their backwards, lp_normalize):
// validate, make the inputs contiguous, allocate and hand over to the device's implementation.
#include "tensor/cpu/softmax_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/kernels.h"

namespace rematch::kernels {

namespace {

void check_float(const char* op, const Tensor& x) {
  REMATCH_CHECK(x.defined(), op, ": undefined input");
  REMATCH_CHECK(is_floating(x.dtype()), op, ": expected a float32 or float64 tensor, got ", x.describe());
}

Tensor softmax_forward(const char* op, const Tensor& x, int64_t dim, bool log) {
  check_float(op, x);
  dim = wrap_dim(dim, x.dim(), op);
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (x.device().is_cuda()) cuda::softmax(out, contiguous(x), dim, log);
  else cpu::softmax(out, contiguous(x), dim, log);
  return out;
}

Tensor softmax_grad(const char* op, const Tensor& grad, const Tensor& y, int64_t dim, bool log) {
  check_float(op, y);
  REMATCH_CHECK(grad.defined(), op, ": undefined gradient");
  check_same_device(op, {&grad, &y});
  REMATCH_CHECK(grad.sizes() == y.sizes() && grad.dtype() == y.dtype(), op, ": gradient ", grad.describe(),
                " does not match the output ", y.describe());
  dim = wrap_dim(dim, y.dim(), op);
  Tensor out = empty(y.sizes(), y.dtype(), y.device());
  if (out.numel() == 0) return out;
  if (y.device().is_cuda()) cuda::softmax_backward(out, contiguous(grad), contiguous(y), dim, log);
  else cpu::softmax_backward(out, contiguous(grad), contiguous(y), dim, log);
  return out;
}

}  // namespace

// A row whose entries are all -inf has no defined softmax; like PyTorch the result is NaN for that row
// (exp(-inf - max) with max = -inf), and a NaN anywhere in a row makes the whole row NaN.
Tensor softmax(const Tensor& x, int64_t dim) { return softmax_forward("softmax", x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_forward("log_softmax", x, dim, true); }

Tensor softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim) {
  return softmax_grad("softmax_backward", grad, y, dim, false);
}
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim) {
  return softmax_grad("log_softmax_backward", grad, y, dim, true);
}

Tensor lp_normalize(const Tensor& x, int64_t dim, int p, double eps) {
  check_float("lp_normalize", x);
  REMATCH_CHECK(p == 1 || p == 2, "lp_normalize: p must be 1 or 2, got ", p);
  REMATCH_CHECK(eps >= 0, "lp_normalize: eps must be >= 0, got ", eps);
  dim = wrap_dim(dim, x.dim(), "lp_normalize");
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  if (x.device().is_cuda()) cuda::lp_normalize(out, contiguous(x), dim, p, eps);
  else cpu::lp_normalize(out, contiguous(x), dim, p, eps);
  return out;
}

}  // namespace rematch::kernels
