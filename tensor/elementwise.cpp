// kernels:: entry points for copy/fill/cast and the elementwise family: validate, allocate, broadcast, then
// hand over to the device's implementation. The elementwise ops' names and dtype rules come from the table of
// tensor/elementwise_ops.h; the checks are made here, once for both devices.
#include "tensor/cpu/cpu_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/elementwise_in_place.h"
#include "tensor/kernels.h"

namespace rematch::kernels {

// One case of an op_info switch: the row of `op` in the family `Op`.
#define REMATCH_OP_INFO(op, name, accepts, result, functor) \
  case Op::op: return {name, Accepts::accepts, Result::result};

OpInfo op_info(UnaryOp op) {
  using Op = UnaryOp;
  switch (op) { REMATCH_UNARY_OPS(REMATCH_OP_INFO) }
  return {"?", Accepts::Numeric, Result::Same};
}

OpInfo op_info(ScalarOp op) {
  using Op = ScalarOp;
  switch (op) { REMATCH_SCALAR_OPS(REMATCH_OP_INFO) }
  return {"?", Accepts::Numeric, Result::Same};
}

OpInfo op_info(BinaryOp op) {
  using Op = BinaryOp;
  switch (op) { REMATCH_BINARY_OPS(REMATCH_OP_INFO) }
  return {"?", Accepts::Numeric, Result::Same};
}

#undef REMATCH_OP_INFO

const char* op_name(UnaryOp op) { return op_info(op).name; }
const char* op_name(ScalarOp op) { return op_info(op).name; }
const char* op_name(BinaryOp op) { return op_info(op).name; }

namespace {

// The refusals of Accepts (tensor/elementwise_ops.h) other than Bool's, which the callers check first.
void check_dtype(const OpInfo& info, DType t) {
  if (info.accepts == Accepts::Bool) return;
  if (t == DType::Bool) throw_dtype_unsupported(info.name, t, "a numeric dtype (not bool)");
  switch (info.accepts) {
    case Accepts::Numeric:
    case Accepts::Bool: return;
    case Accepts::Floating:
      if (!is_floating(t)) REMATCH_FAIL(info.name, ": dtype ", dtype_name(t), " is not supported");
      return;
    case Accepts::Division:
      if (!is_floating(t))
        REMATCH_FAIL(info.name, ": integer division is not supported (", dtype_name(t),
                     "); cast to a floating dtype first");
      return;
  }
}

DType result_dtype(const OpInfo& info, DType input) { return info.result == Result::Bool ? DType::Bool : input; }

}  // namespace

void copy_(const Tensor& dst, const Tensor& src) {
  REMATCH_CHECK(dst.defined() && src.defined(), "copy_: undefined tensor");
  broadcast_shapes(dst.sizes(), src.sizes(), "copy_");
  if (src.device() != dst.device()) {
    Tensor staged = to_device(src, dst.device());
    return copy_(dst, staged);
  }
  const Tensor expanded = expand(src, dst.sizes());
  if (dst.device().is_cuda()) cuda::copy(dst, expanded);
  else cpu::copy(dst, expanded);
}

void fill_(const Tensor& dst, double value) {
  if (dst.numel() == 0) return;
  if (dst.device().is_cuda()) cuda::fill(dst, value);
  else cpu::fill(dst, value);
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

Tensor clone(const Tensor& x) {
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  copy_(out, x);
  return out;
}

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out = empty(x.sizes(), dtype, x.device());
  copy_(out, x);
  return out;
}

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  Tensor src = contiguous(x);
  Tensor out = empty(x.sizes(), x.dtype(), device);
  copy_bytes(out.raw_data(), device, src.raw_data(), src.device(),
             static_cast<size_t>(x.numel()) * dtype_size(x.dtype()));
  return out;
}

Tensor unary(UnaryOp op, const Tensor& x) {
  const OpInfo info = op_info(op);
  REMATCH_CHECK(x.defined(), info.name, ": undefined input");
  if (info.accepts == Accepts::Bool)
    REMATCH_CHECK(x.dtype() == DType::Bool, info.name, ": expected a bool tensor, got ", x.describe());
  Tensor out = empty(x.sizes(), result_dtype(info, x.dtype()), x.device());
  if (x.numel() == 0) return out;
  check_dtype(info, x.dtype());
  if (x.device().is_cuda()) cuda::unary(op, out, x);
  else cpu::unary(op, out, x);
  return out;
}

Tensor scalar_op(ScalarOp op, const Tensor& x, double s) {
  const OpInfo info = op_info(op);
  REMATCH_CHECK(x.defined(), info.name, ": undefined input");
  if (info.accepts == Accepts::Bool)
    REMATCH_CHECK(x.dtype() == DType::Bool, info.name, ": expected a bool tensor, got ", x.describe());
  Tensor out = empty(x.sizes(), result_dtype(info, x.dtype()), x.device());
  if (x.numel() == 0) return out;
  check_dtype(info, x.dtype());
  if (x.device().is_cuda()) cuda::scalar_op(op, out, x, s);
  else cpu::scalar_op(op, out, x, s);
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const OpInfo info = op_info(op);
  const char* name = info.name;
  REMATCH_CHECK(a.defined() && b.defined(), name, ": undefined input");
  check_same_device(name, {&a, &b});
  REMATCH_CHECK(a.dtype() == b.dtype(), name, ": dtypes differ (", a.describe(), " and ", b.describe(),
                "); convert one with to()");
  if (info.accepts == Accepts::Bool)
    REMATCH_CHECK(a.dtype() == DType::Bool, name, ": expected bool tensors, got ", a.describe());
  const Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = empty(shape, result_dtype(info, a.dtype()), a.device());
  if (out.numel() == 0) return out;
  check_dtype(info, a.dtype());
  if (a.device().is_cuda()) cuda::binary(op, out, expand(a, shape), expand(b, shape));
  else cpu::binary(op, out, expand(a, shape), expand(b, shape));
  return out;
}

namespace {

// The checks of the in-place forms: dst is written once per element and keeps its dtype.
void check_in_place(const OpInfo& info, const Tensor& dst) {
  REMATCH_CHECK(dst.defined(), info.name, "_ (in place): undefined destination");
  REMATCH_CHECK(dst.is_contiguous(), info.name, "_ (in place): the destination must be contiguous, got ",
                dst.describe(), "; use the op that returns a new tensor");
  if (info.accepts == Accepts::Bool)
    REMATCH_CHECK(dst.dtype() == DType::Bool, info.name, "_ (in place): expected a bool tensor, got ", dst.describe());
  REMATCH_CHECK(result_dtype(info, dst.dtype()) == dst.dtype(), info.name, "_ (in place): the result is ",
                dtype_name(result_dtype(info, dst.dtype())), ", the destination ", dst.describe(),
                "; use the op that returns a new tensor");
  check_dtype(info, dst.dtype());
}

}  // namespace

void unary_(UnaryOp op, const Tensor& dst) {
  const OpInfo info = op_info(op);
  check_in_place(info, dst);
  if (dst.numel() == 0) return;
  if (dst.device().is_cuda()) cuda::unary(op, dst, dst);
  else cpu::unary(op, dst, dst);
}

void scalar_op_(ScalarOp op, const Tensor& dst, double s) {
  const OpInfo info = op_info(op);
  check_in_place(info, dst);
  if (dst.numel() == 0) return;
  if (dst.device().is_cuda()) cuda::scalar_op(op, dst, dst, s);
  else cpu::scalar_op(op, dst, dst, s);
}

void binary_(BinaryOp op, const Tensor& dst, const Tensor& b) {
  const OpInfo info = op_info(op);
  const char* name = info.name;
  check_in_place(info, dst);
  REMATCH_CHECK(b.defined(), name, "_ (in place): undefined input");
  check_same_device(name, {&dst, &b});
  REMATCH_CHECK(dst.dtype() == b.dtype(), name, "_ (in place): dtypes differ (", dst.describe(), " and ",
                b.describe(), "); convert one with to()");
  REMATCH_CHECK(b.storage() != dst.storage(), name, "_ (in place): the input ", b.describe(),
                " shares the destination's storage; use the op that returns a new tensor");
  const Shape shape = broadcast_shapes(dst.sizes(), b.sizes(), name);
  REMATCH_CHECK(shape == dst.sizes(), name, "_ (in place): ", b.describe(), " does not broadcast to the destination ",
                dst.describe());
  if (dst.numel() == 0) return;
  if (dst.device().is_cuda()) cuda::binary(op, dst, dst, expand(b, shape));
  else cpu::binary(op, dst, dst, expand(b, shape));
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  REMATCH_CHECK(cond.defined() && a.defined() && b.defined(), "where: undefined input");
  check_same_device("where", {&cond, &a, &b});
  REMATCH_CHECK(cond.dtype() == DType::Bool, "where: condition must be bool, got ", cond.describe());
  REMATCH_CHECK(a.dtype() == b.dtype(), "where: dtypes differ (", a.describe(), " and ", b.describe(), ")");
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = empty(shape, a.dtype(), a.device());
  if (out.numel() == 0) return out;
  if (a.device().is_cuda()) cuda::where(out, expand(cond, shape), expand(a, shape), expand(b, shape));
  else cpu::where(out, expand(cond, shape), expand(a, shape), expand(b, shape));
  return out;
}

}  // namespace rematch::kernels
