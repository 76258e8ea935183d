// BatchNorm1d with PyTorch semantics (docs/backbones.md §1, §4.1, §4.6): input [N, C] or [N, C, L], channel axis
// 1. Training normalises with the biased batch variance over N (and L) and moves the running statistics
// towards the batch with `momentum`, using the unbiased variance (rv ← (1-m)·rv + m·var·n/(n-1),
// rm ← (1-m)·rm + m·mean); eval normalises with the running statistics. y = γ·x̂ + β.
// The forward is one graph node with the analytic backward (batch_norm in batchnorm.cpp).
#pragma once

#include "nn/module.h"

namespace rematch::nn {

// Functional form. weight/bias may be undefined (no affine). In training the running statistics, when
// defined, are updated in place; in eval they are required. `who` names the caller in errors.
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5,
                  const char* who = "batch_norm");

class BatchNorm1d : public UnaryModule {
 public:
  // weight = 1, bias = 0, running_mean = 0, running_var = 1, num_batches_tracked = 0 (int64, 0-d): the
  // backbones' BatchNorm initialisation (docs/backbones.md §1) and PyTorch's.
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       DType dtype = DType::Float32);

  // Training mode also increments num_batches_tracked.
  Tensor forward(const Tensor& x) override;

  int64_t num_features() const { return channels_; }
  double eps() const { return eps_; }
  double momentum() const { return momentum_; }

 private:
  int64_t channels_;
  double eps_, momentum_;
  std::string name_;  // "BatchNorm1d(36)", for errors
  Tensor weight_, bias_;
};

}  // namespace rematch::nn
