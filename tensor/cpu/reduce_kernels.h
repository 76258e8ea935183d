// CPU reductions. The dispatcher (tensor/reduce.cpp) hands over a contiguous input already laid out as
// [outer, R, inner] with the reduced elements along R, so two loop shapes cover every case:
// inner == 1 (contiguous rows) and inner > 1 (accumulate whole rows, vectorised along inner).
#pragma once

#include "tensor/kernels.h"

namespace rematch::cpu {

// out (contiguous, outer*inner elements) = op over R of x viewed as [outer, R, inner].
void reduce(kernels::ReduceOp op, const Tensor& out, const Tensor& x, int64_t outer, int64_t R, int64_t inner);
// Max/Min along the last dim of contiguous [rows, R]: values and first-occurrence int64 indices.
void reduce_with_index(kernels::ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& x,
                       int64_t rows, int64_t R);

}  // namespace rematch::cpu
