// The Bi-GRU case that bench/gru_bench.cpp (CPU) and bench/cuda_gru_bench.cpp time: the SGRAF caption encoder
// (docs/backbones.md §3.3) at batch 128, 14 steps, input 300, hidden 1024 per direction, float32, with every
// sequence 14 steps ("full") or mixed lengths 4..14 ("mixed", lengths[b] = 4 + (5·b) mod 11, mean 9).
// bench/baselines/gru.py and cuda_ops.py build the same case in PyTorch.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/gru.h"

namespace rematch::bench::gru_case {

constexpr int64_t kBatch = 128, kSteps = 14, kInput = 300, kHidden = 1024;

inline std::vector<int64_t> lengths_for(bool mixed) {
  std::vector<int64_t> lengths(kBatch, kSteps);
  if (mixed)
    for (int64_t b = 0; b < kBatch; ++b) lengths[b] = 4 + (5 * b) % 11;
  return lengths;
}

// The model (generator seed 0) on `device` and its input x ~ U[-0.5, 0.5) [kBatch, kSteps, kInput], drawn on
// the host from the same generator and moved there, so every device times the same numbers.
struct Setup {
  Generator gen{0};
  nn::GRU gru{kInput, kHidden, true, DType::Float32, &gen};
  Tensor x;
  Tensor lengths;
  Setup(bool mixed, Device device) {
    gru.to(device);
    const Tensor u = rand({kBatch, kSteps, kInput}, DType::Float32, Device::cpu(), &gen);
    x = kernels::to_device(kernels::scalar_op(kernels::ScalarOp::Add, u, -0.5), device);
    lengths = from_vector(lengths_for(mixed));
  }
};

// FLOP of one call. Per direction and token the input and recurrent products take 2·3H·(I + H); the backward
// does twice the forward's.
inline double flop(bool backward, bool mixed) {
  double tokens = 0;
  for (int64_t len : lengths_for(mixed)) tokens += static_cast<double>(len);
  const double forward = 2.0 * tokens * 2.0 * 3 * kHidden * (kInput + kHidden);
  return backward ? 3 * forward : forward;
}

}  // namespace rematch::bench::gru_case
