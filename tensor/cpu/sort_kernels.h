// CPU sorting behind tensor/sort.cpp. `x` is contiguous and validated, `dim` wrapped; `values` (x's dtype)
// and `indices` (int64) are fresh contiguous tensors of x's shape with dim `dim` cut to k.
#pragma once

#include "tensor/tensor_core.h"

namespace rematch::cpu {

// The first k entries of each lane along dim in sorted order (k = the dim size: a full sort).
void sort(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t dim, bool descending, int64_t k);

}  // namespace rematch::cpu
