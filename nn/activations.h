// Activation layers as UnaryModules, so they chain in a Sequential like torch.nn's: ReLU, LeakyReLU (the
// backbones' attention uses slope 0.1, docs/backbones.md §4.3), Tanh, Sigmoid. No parameters, no state.
#pragma once

#include "nn/module.h"

namespace rematch::nn {

class ReLU : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};

class LeakyReLU : public UnaryModule {
 public:
  explicit LeakyReLU(double negative_slope = 0.01);  // PyTorch's default slope
  Tensor forward(const Tensor& x) override;
  double negative_slope() const { return slope_; }

 private:
  double slope_;
};

class Tanh : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};

class Sigmoid : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};

}  // namespace rematch::nn
