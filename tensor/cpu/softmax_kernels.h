// CPU fused row ops behind tensor/softmax.cpp. Inputs are validated there and passed contiguous, with `dim`
// already wrapped; `out` is a fresh contiguous tensor of the input's shape.
#pragma once

#include "tensor/tensor_core.h"

namespace rematch::cpu {

void softmax(const Tensor& out, const Tensor& x, int64_t dim, bool log);
void softmax_backward(const Tensor& out, const Tensor& grad, const Tensor& y, int64_t dim, bool log);
void lp_normalize(const Tensor& out, const Tensor& x, int64_t dim, int p, double eps);

}  // namespace rematch::cpu
