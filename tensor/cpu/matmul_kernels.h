// CPU matrix products behind kernels::matmul (tensor/matmul.cpp). Inputs are validated there: float32 or
// float64 of one dtype, on the host, a of [n,k] or [Ba,n,k], b of [k,m] or [Bb,k,m] with batch sizes equal or
// 1; `out` is a fresh contiguous [n,m] or [B,n,m].
#pragma once

#include "tensor/tensor_core.h"

namespace rematch::cpu {

void matmul(const Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace rematch::cpu
