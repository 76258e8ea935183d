// CUDA implementations behind tensor/kernels.h, one declaration per CPU counterpart (tensor/cpu/*_kernels.h)
// with the same contract: inputs are validated (dtypes, shapes, index ranges) by the dispatcher and live on one
// CUDA device; `out` tensors are allocated by the caller on that device. Every kernel runs on the device's one
// stream (tensor/cuda/runtime.h) and is checked at launch (tensor/cuda/check.h).
// Implemented in tensor/cuda/{elementwise,reduce,softmax,matmul,index,sort}.cu in CUDA builds and by
// kernels_disabled.cpp (every call throws) in CPU-only builds, where no CUDA tensor can exist anyway.
#pragma once

#include <cstdint>

#include "tensor/kernels.h"

namespace rematch::cuda {

// ---- elementwise (elementwise.cu): inputs already broadcast to out's shape, any strides ---------------------
void unary(kernels::UnaryOp op, const Tensor& out, const Tensor& x);
void scalar_op(kernels::ScalarOp op, const Tensor& out, const Tensor& x, double s);
void binary(kernels::BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void fill(const Tensor& out, double value);
void copy(const Tensor& dst, const Tensor& src);  // same device; converts dtype; src broadcast to dst's shape

// ---- reductions (reduce.cu): x contiguous, viewed as [outer, R, inner] --------------------------------------
void reduce(kernels::ReduceOp op, const Tensor& out, const Tensor& x, int64_t outer, int64_t R, int64_t inner);
// Max/Min along the last dim of contiguous [rows, R]: values and first-occurrence int64 indices.
void reduce_with_index(kernels::ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& x,
                       int64_t rows, int64_t R);

// ---- fused row ops (softmax.cu): inputs contiguous, dim wrapped, out fresh contiguous ------------------------
void softmax(const Tensor& out, const Tensor& x, int64_t dim, bool log);
void softmax_backward(const Tensor& out, const Tensor& grad, const Tensor& y, int64_t dim, bool log);
void lp_normalize(const Tensor& out, const Tensor& x, int64_t dim, int p, double eps);

// ---- matrix products (matmul.cu): cuBLAS, shapes as cpu::matmul -----------------------------------------------
void matmul(const Tensor& out, const Tensor& a, const Tensor& b);
// TF32 tensor-core math for float32 products: off by default (results then match the CPU to float32
// rounding); REMATCH_ALLOW_TF32=1 in the environment or this switch turns it on. The switch is atomic and
// applies from the next product; the products of one device must come from one thread at a time
// (tensor/cuda/runtime.h).
void set_allow_tf32(bool allow);
bool allow_tf32();

// ---- index family (index.cu): as tensor/cpu/index_kernels.h ---------------------------------------------------
// Returns (position, value) of the first index outside [0, size) in row-major order, position -1 if none
// (synchronises to read the answer).
std::pair<int64_t, int64_t> find_bad_index(const Tensor& index, int64_t size);
void index_select(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);
void gather(const Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);
// Deterministic: repeated indices add up in increasing source order (no floating-point atomics).
void scatter_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
void index_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);

// ---- sorting (sort.cu): as tensor/cpu/sort_kernels.h, stable, through CUB ------------------------------------
void sort(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t dim, bool descending, int64_t k);

}  // namespace rematch::cuda
