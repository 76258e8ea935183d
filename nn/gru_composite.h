// The GRU layer of nn/gru.h written with the differentiable op API instead of fused kernels, internal to nn/: the
// same packed plan (nn/cpu/gru_kernels.h), one matmul for the input projections of all steps and per step one
// matmul with W_hh and the gate ops, on any device. It is slower than the kernels and serves one purpose: the
// derivative of the fused backward (nn/gru_double_backward.h), which autograd takes through this graph.
#pragma once

#include "nn/cpu/gru_kernels.h"
#include "nn/gru.h"

namespace rematch::nn {

// Per direction, the flat row b·T + t of the input (and of the output) that each packed row reads: the rows of
// step s are [offset[s], offset[s] + active[s]); int64 on `device`.
Tensor gru_packed_rows(const gru_cpu::Packing& p, int64_t direction, Device device);

// gru() on x [B, T, I] with the packing of its lengths and weights as gru() takes them (4 per direction).
GRUOutput gru_composite(const Tensor& x, const gru_cpu::Packing& p, const TensorList& weights);

}  // namespace rematch::nn
