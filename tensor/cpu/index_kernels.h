// CPU implementations of the index family behind tensor/kernels.h (index_select, gather, scatter_add,
// index_add). Inputs are already validated by tensor/index.cpp: shapes agree, indices are in range, dtypes
// match. Every tensor may be any strided view; `out` is allocated by the caller.
#pragma once

#include <cstdint>

#include "tensor/tensor_core.h"

namespace rematch::cpu {

// The first index value outside [0, size), in row-major order of `index`; position -1 when all are inside.
struct BadIndex {
  int64_t position = -1;
  int64_t value = 0;
};
BadIndex find_bad_index(const Tensor& index, int64_t size);

// out[..., j, ...] = x[..., index[j], ...] along dim (index 1-D).
void index_select(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (out has index's shape).
void gather(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);
// out[i][index[i][j][k]][k] += src[i][j][k] for dim 1, over index's shape; repeated indices add up in
// increasing j whatever the thread count.
void scatter_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
// out[..., index[j], ...] += src[..., j, ...] along dim (index 1-D), in increasing j.
void index_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);

}  // namespace rematch::cpu
