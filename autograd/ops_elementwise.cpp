// Elementwise differentiable ops. Each backward is written next to its forward with the same op API, so that
// with create_graph it is recorded and differentiates again (autograd/record.h says what a backward captures).
// d/dx comments give the derivative being applied. The special functions are in ops_special.cpp.
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

using kernels::BinaryOp;
using kernels::ScalarOp;
using kernels::UnaryOp;

namespace {

Tensor like_scalar(const Tensor& t, double v) { return scalar_tensor(v, t.dtype(), t.device()); }

// The mask as a 0/1 tensor of x's dtype.
Tensor as_float_mask(const Tensor& mask, const Tensor& like) { return kernels::cast(mask, like.dtype()); }

}  // namespace

// ---- binary arithmetic --------------------------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::Add, a, b);
  return record("add", {a, b}, y, [sa = a.sizes(), sb = b.sizes()](const TensorList& g) {
    return TensorList{sum_to(g[0], sa), sum_to(g[0], sb)};
  });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::Sub, a, b);
  return record("sub", {a, b}, y, [sa = a.sizes(), sb = b.sizes()](const TensorList& g) {
    return TensorList{sum_to(g[0], sa), sum_to(neg(g[0]), sb)};
  });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::Mul, a, b);
  const bool ga = a.requires_grad(), gb = b.requires_grad();
  // d(ab)/da = b, d(ab)/db = a: keep only the operand the other side needs.
  return record("mul", {a, b}, y,
                [a = gb ? a : Tensor(), b = ga ? b : Tensor(), sa = a.sizes(),
                 sb = b.sizes()](const TensorList& g) {
                  return TensorList{b.defined() ? sum_to(mul(g[0], b), sa) : Tensor(),
                                    a.defined() ? sum_to(mul(g[0], a), sb) : Tensor()};
                });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::Div, a, b);
  // d(a/b)/da = 1/b, d(a/b)/db = -a/b² = -y/b.
  return record("div", {a, b}, y,
                [b, y = y.detach(), sa = a.sizes(), sb = b.sizes()](const TensorList& g) {
                  Tensor ga = div(g[0], b);
                  return TensorList{sum_to(ga, sa), sum_to(neg(mul(ga, saved_output(y))), sb)};
                });
}

// ---- scalar arithmetic ---------------------------------------------------------------------------------------
Tensor add(const Tensor& a, double s) {
  Tensor y = kernels::scalar_op(ScalarOp::Add, a, s);
  return record("add_scalar", {a}, y, [](const TensorList& g) { return TensorList{g[0]}; });
}
Tensor sub(const Tensor& a, double s) { return add(a, -s); }

Tensor rsub(double s, const Tensor& a) {
  Tensor y = kernels::scalar_op(ScalarOp::RSub, a, s);
  return record("rsub_scalar", {a}, y, [](const TensorList& g) { return TensorList{neg(g[0])}; });
}

Tensor mul(const Tensor& a, double s) {
  Tensor y = kernels::scalar_op(ScalarOp::Mul, a, s);
  return record("mul_scalar", {a}, y, [s](const TensorList& g) { return TensorList{mul(g[0], s)}; });
}
Tensor div(const Tensor& a, double s) { return mul(a, 1.0 / s); }

Tensor rdiv(double s, const Tensor& a) {
  Tensor y = kernels::scalar_op(ScalarOp::RDiv, a, s);
  // d(s/a)/da = -s/a² = -y/a.
  return record("rdiv_scalar", {a}, y, [a, y = y.detach()](const TensorList& g) {
    return TensorList{neg(div(mul(g[0], saved_output(y)), a))};
  });
}

// ---- unary ----------------------------------------------------------------------------------------------------
Tensor neg(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Neg, x);
  return record("neg", {x}, y, [](const TensorList& g) { return TensorList{neg(g[0])}; });
}

Tensor abs(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Abs, x);
  return record("abs", {x}, y, [x = x.detach()](const TensorList& g) {  // sign(x) is piecewise constant
    return TensorList{mul(g[0], kernels::unary(UnaryOp::Sign, x))};
  });
}

Tensor exp(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Exp, x);
  return record("exp", {x}, y,
                [y = y.detach()](const TensorList& g) { return TensorList{mul(g[0], saved_output(y))}; });
}

Tensor log(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Log, x);
  return record("log", {x}, y, [x](const TensorList& g) { return TensorList{div(g[0], x)}; });
}

Tensor log1p(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Log1p, x);
  return record("log1p", {x}, y, [x](const TensorList& g) { return TensorList{div(g[0], add(x, 1.0))}; });
}

Tensor sqrt(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Sqrt, x);
  // d sqrt(x) = 1 / (2 sqrt(x)).
  return record("sqrt", {x}, y, [y = y.detach()](const TensorList& g) {
    return TensorList{div(g[0], mul(saved_output(y), 2.0))};
  });
}

Tensor rsqrt(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Rsqrt, x);
  // d x^-1/2 = -1/2 x^-3/2 = -y³/2.
  return record("rsqrt", {x}, y, [y = y.detach()](const TensorList& g) {
    return TensorList{mul(g[0], mul(pow(saved_output(y), 3.0), -0.5))};
  });
}

Tensor pow(const Tensor& x, double e) {
  Tensor y = kernels::scalar_op(ScalarOp::Pow, x, e);
  // d x^e = e x^(e-1).
  return record("pow", {x}, y, [x, e](const TensorList& g) {
    if (e == 0) return TensorList{zeros_like(g[0])};
    return TensorList{mul(g[0], mul(pow(x, e - 1), e))};
  });
}

Tensor square(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Square, x);
  return record("square", {x}, y, [x](const TensorList& g) { return TensorList{mul(g[0], mul(x, 2.0))}; });
}

Tensor reciprocal(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Reciprocal, x);
  // d 1/x = -1/x² = -y².
  return record("reciprocal", {x}, y, [y = y.detach()](const TensorList& g) {
    return TensorList{neg(mul(g[0], square(saved_output(y))))};
  });
}

Tensor tanh(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Tanh, x);
  // d tanh = 1 - y².
  return record("tanh", {x}, y, [y = y.detach()](const TensorList& g) {
    return TensorList{mul(g[0], rsub(1.0, square(saved_output(y))))};
  });
}

Tensor sigmoid(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Sigmoid, x);
  // d σ = σ (1 - σ).
  return record("sigmoid", {x}, y, [y = y.detach()](const TensorList& g) {
    const Tensor s = saved_output(y);
    return TensorList{mul(g[0], mul(s, rsub(1.0, s)))};
  });
}

Tensor relu(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Relu, x);
  return record("relu", {x}, y, [y = y.detach()](const TensorList& g) {
    return TensorList{mul(g[0], as_float_mask(kernels::scalar_op(ScalarOp::Gt, y, 0.0), y))};
  });
}

Tensor leaky_relu(const Tensor& x, double slope) {
  Tensor y = kernels::scalar_op(ScalarOp::LeakyRelu, x, slope);
  // slope for x <= 0 (PyTorch: the gradient at 0 is the slope).
  return record("leaky_relu", {x}, y, [x = x.detach(), slope](const TensorList& g) {
    Tensor pos = kernels::scalar_op(ScalarOp::Gt, x, 0.0);
    return TensorList{mul(g[0], kernels::where(pos, like_scalar(x, 1.0), like_scalar(x, slope)))};
  });
}

Tensor clamp(const Tensor& x, double lo, double hi) {
  REMATCH_CHECK(std::isnan(lo) || std::isnan(hi) || lo <= hi, "clamp: min ", lo, " is larger than max ", hi);
  Tensor y = x;
  if (!std::isnan(lo)) y = kernels::scalar_op(ScalarOp::ClampMin, y, lo);
  if (!std::isnan(hi)) y = kernels::scalar_op(ScalarOp::ClampMax, y, hi);
  if (y.same(x)) y = kernels::clone(x);
  // The gradient passes where lo <= x <= hi.
  return record("clamp", {x}, y, [x = x.detach(), lo, hi](const TensorList& g) {
    Tensor pass = ones(x.sizes(), DType::Bool, x.device());
    if (!std::isnan(lo)) pass = kernels::binary(BinaryOp::LogicalAnd, pass, kernels::scalar_op(ScalarOp::Ge, x, lo));
    if (!std::isnan(hi)) pass = kernels::binary(BinaryOp::LogicalAnd, pass, kernels::scalar_op(ScalarOp::Le, x, hi));
    return TensorList{mul(g[0], as_float_mask(pass, x))};
  });
}
Tensor clamp_min(const Tensor& x, double lo) { return clamp(x, lo, std::numeric_limits<double>::quiet_NaN()); }
Tensor clamp_max(const Tensor& x, double hi) { return clamp(x, std::numeric_limits<double>::quiet_NaN(), hi); }

Tensor sign(const Tensor& x) {
  Tensor y = kernels::unary(UnaryOp::Sign, x);
  return record("sign", {x}, y, [](const TensorList& g) { return TensorList{zeros_like(g[0])}; });
}

// max(a, b): the gradient goes to the larger input; on a tie each gets half (PyTorch).
static Tensor extremum(const char* name, BinaryOp op, BinaryOp pick, const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(op, a, b);
  return record(name, {a, b}, y, [a = a.detach(), b = b.detach(), pick](const TensorList& g) {
    Tensor wins = as_float_mask(kernels::binary(pick, a, b), g[0]);
    Tensor ties = as_float_mask(kernels::binary(BinaryOp::Eq, a, b), g[0]);
    Tensor wa = add(wins, mul(ties, 0.5));
    Tensor wb = rsub(1.0, wa);
    return TensorList{sum_to(mul(g[0], wa), a.sizes()), sum_to(mul(g[0], wb), b.sizes())};
  });
}
Tensor maximum(const Tensor& a, const Tensor& b) { return extremum("maximum", BinaryOp::Maximum, BinaryOp::Gt, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum("minimum", BinaryOp::Minimum, BinaryOp::Lt, a, b); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor y = kernels::where(cond, a, b);
  return record("where", {a, b}, y, [cond = cond.detach(), sa = a.sizes(), sb = b.sizes()](const TensorList& g) {
    Tensor zero = like_scalar(g[0], 0.0);
    return TensorList{sum_to(where(cond, g[0], zero), sa), sum_to(where(cond, zero, g[0]), sb)};
  });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  REMATCH_CHECK(mask.defined() && mask.dtype() == DType::Bool, "masked_fill: mask must be bool, got ",
                mask.describe());
  Shape shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_fill");
  REMATCH_CHECK(shape == x.sizes(), "masked_fill: mask ", mask.describe(), " does not broadcast to ", x.describe());
  return where(mask, like_scalar(x, value), x);
}

// ---- comparisons and logic (no gradient) ------------------------------------------------------------------
Tensor eq(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Ge, a, b); }
Tensor eq(const Tensor& a, double s) { return kernels::scalar_op(ScalarOp::Eq, a, s); }
Tensor ne(const Tensor& a, double s) { return kernels::scalar_op(ScalarOp::Ne, a, s); }
Tensor lt(const Tensor& a, double s) { return kernels::scalar_op(ScalarOp::Lt, a, s); }
Tensor le(const Tensor& a, double s) { return kernels::scalar_op(ScalarOp::Le, a, s); }
Tensor gt(const Tensor& a, double s) { return kernels::scalar_op(ScalarOp::Gt, a, s); }
Tensor ge(const Tensor& a, double s) { return kernels::scalar_op(ScalarOp::Ge, a, s); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::LogicalOr, a, b); }
Tensor logical_not(const Tensor& a) { return kernels::unary(UnaryOp::LogicalNot, a); }

// ---- conversions -------------------------------------------------------------------------------------------
Tensor to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = kernels::cast(x, dtype);
  if (!is_floating(dtype)) return y;
  return record("to_dtype", {x}, y, [from = x.dtype()](const TensorList& g) { return TensorList{to(g[0], from)}; });
}

Tensor to(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  Tensor y = kernels::to_device(x, device);
  return record("to_device", {x}, y, [from = x.device()](const TensorList& g) { return TensorList{to(g[0], from)}; });
}

Tensor clone(const Tensor& x) {
  Tensor y = kernels::clone(x);
  return record("clone", {x}, y, [](const TensorList& g) { return TensorList{g[0]}; });
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

// ---- operators -------------------------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double s) { return add(a, s); }
Tensor operator-(const Tensor& a, double s) { return sub(a, s); }
Tensor operator*(const Tensor& a, double s) { return mul(a, s); }
Tensor operator/(const Tensor& a, double s) { return div(a, s); }
Tensor operator+(double s, const Tensor& a) { return add(a, s); }
Tensor operator-(double s, const Tensor& a) { return rsub(s, a); }
Tensor operator*(double s, const Tensor& a) { return mul(a, s); }
Tensor operator/(double s, const Tensor& a) { return rdiv(s, a); }
Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace rematch
