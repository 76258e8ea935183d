// CPU implementations behind tensor/kernels.h. Inputs are already validated, on the host and (for the
// elementwise family) broadcast to `out`'s shape; `out` is allocated by the caller.
#pragma once

#include "tensor/kernels.h"

namespace rematch::cpu {

void unary(kernels::UnaryOp op, const Tensor& out, const Tensor& x);
void scalar_op(kernels::ScalarOp op, const Tensor& out, const Tensor& x, double s);
void binary(kernels::BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void fill(const Tensor& out, double value);
void copy(const Tensor& dst, const Tensor& src);  // converts dtype; src broadcast to dst's shape

}  // namespace rematch::cpu
