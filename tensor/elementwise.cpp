// kernels:: entry points for copy/fill/cast and the elementwise family: validate, allocate, broadcast, then
// hand over to the device's implementation.
#include "tensor/cpu/cpu_kernels.h"
#include "tensor/creation.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/kernels.h"

namespace rematch::kernels {

const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Log1p: return "log1p";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Square: return "square";
    case UnaryOp::Reciprocal: return "reciprocal";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Sign: return "sign";
    case UnaryOp::LogicalNot: return "logical_not";
    case UnaryOp::IsFinite: return "isfinite";
  }
  return "?";
}

const char* op_name(ScalarOp op) {
  switch (op) {
    case ScalarOp::Add: return "add";
    case ScalarOp::Mul: return "mul";
    case ScalarOp::Pow: return "pow";
    case ScalarOp::LeakyRelu: return "leaky_relu";
    case ScalarOp::ClampMin: return "clamp_min";
    case ScalarOp::ClampMax: return "clamp_max";
    case ScalarOp::RSub: return "rsub";
    case ScalarOp::RDiv: return "rdiv";
    case ScalarOp::Eq: return "eq";
    case ScalarOp::Ne: return "ne";
    case ScalarOp::Lt: return "lt";
    case ScalarOp::Le: return "le";
    case ScalarOp::Gt: return "gt";
    case ScalarOp::Ge: return "ge";
  }
  return "?";
}

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
    case BinaryOp::Eq: return "eq";
    case BinaryOp::Ne: return "ne";
    case BinaryOp::Lt: return "lt";
    case BinaryOp::Le: return "le";
    case BinaryOp::Gt: return "gt";
    case BinaryOp::Ge: return "ge";
    case BinaryOp::LogicalAnd: return "logical_and";
    case BinaryOp::LogicalOr: return "logical_or";
  }
  return "?";
}

namespace {
bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Lt || op == BinaryOp::Le ||
         op == BinaryOp::Gt || op == BinaryOp::Ge || op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr;
}
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
  REMATCH_CHECK(x.defined(), op_name(op), ": undefined input");
  const bool bool_out = op == UnaryOp::IsFinite || op == UnaryOp::LogicalNot;
  if (op == UnaryOp::LogicalNot)
    REMATCH_CHECK(x.dtype() == DType::Bool, "logical_not: expected a bool tensor, got ", x.describe());
  Tensor out = empty(x.sizes(), bool_out ? DType::Bool : x.dtype(), x.device());
  if (x.numel() == 0) return out;
  if (x.device().is_cuda()) cuda::unary(op, out, x);
  else cpu::unary(op, out, x);
  return out;
}

Tensor scalar_op(ScalarOp op, const Tensor& x, double s) {
  REMATCH_CHECK(x.defined(), op_name(op), ": undefined input");
  const bool bool_out = op >= ScalarOp::Eq;
  Tensor out = empty(x.sizes(), bool_out ? DType::Bool : x.dtype(), x.device());
  if (x.numel() == 0) return out;
  if (x.device().is_cuda()) cuda::scalar_op(op, out, x, s);
  else cpu::scalar_op(op, out, x, s);
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = op_name(op);
  REMATCH_CHECK(a.defined() && b.defined(), name, ": undefined input");
  check_same_device(name, {&a, &b});
  REMATCH_CHECK(a.dtype() == b.dtype(), name, ": dtypes differ (", a.describe(), " and ", b.describe(),
                "); convert one with to()");
  if (op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr)
    REMATCH_CHECK(a.dtype() == DType::Bool, name, ": expected bool tensors, got ", a.describe());
  const Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = empty(shape, is_comparison(op) ? DType::Bool : a.dtype(), a.device());
  if (out.numel() == 0) return out;
  if (a.device().is_cuda()) cuda::binary(op, out, expand(a, shape), expand(b, shape));
  else cpu::binary(op, out, expand(a, shape), expand(b, shape));
  return out;
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
