// CUDA fills of the Philox streams of tensor/random.h (implemented in random.cu, present only in CUDA
// builds). Each writes n contiguous elements at the device pointer `out` on cuda:`device`, element i from the
// Philox block of counter offset + i, with the same value functions (tensor/philox.h) as the CPU path.
// Inputs are validated by the caller (tensor/random.cpp).
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace rematch::cuda {

// dtype float32 or float64.
void philox_uniform(void* out, DType dtype, int64_t n, uint64_t seed, uint64_t offset, int device);
void philox_normal(void* out, DType dtype, int64_t n, uint64_t seed, uint64_t offset, int device);
// dtype int32 or int64; values low + (x mod range).
void philox_randint(void* out, DType dtype, int64_t n, int64_t low, uint64_t range, uint64_t seed, uint64_t offset,
                    int device);
void philox_bernoulli(bool* out, int64_t n, double p, uint64_t seed, uint64_t offset, int device);
// True when every one of the n contiguous probabilities at `p` (float32 or float64) lies in [0, 1]
// (NaN does not); synchronises with the device to read the answer.
bool probabilities_valid(const void* p, DType p_dtype, int64_t n, int device);
// Per-element probabilities `p` (float32 or float64, contiguous, already validated).
void philox_bernoulli_tensor(bool* out, const void* p, DType p_dtype, int64_t n, uint64_t seed, uint64_t offset,
                             int device);
// out = argsort of the per-element keys philox::perm_key, ties broken by index (CUB's stable radix sort).
void philox_randperm(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int device);

}  // namespace rematch::cuda
