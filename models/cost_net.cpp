#include "models/cost_net.h"

namespace rematch::models {

Tensor cost_function(const Tensor& similarities, const Tensor& weight, const Tensor& bias) {
  REMATCH_CHECK(similarities.defined() && similarities.dim() == 2, "CostNet: similarities must be [N, B], got ",
                similarities.defined() ? similarities.describe() : "undefined");
  return relu(nn::linear(similarities, weight, bias, "CostNet fc"));
}

CostNet::CostNet(int64_t size, DType dtype) {
  REMATCH_CHECK(size > 0, "CostNet: size must be positive, got ", size);
  // FeedForward_Network.init_weights: weight = diag(−1), bias = 1. Deterministic, so no generator is taken:
  // the Linear's own random init draws from a local generator (the default one is left untouched) and is
  // overwritten.
  Generator scratch(0);
  fc_ = register_module("fc", std::make_shared<nn::Linear>(size, size, true, dtype, &scratch));
  NoGradGuard no_grad;
  kernels::copy_(fc_->weight(), kernels::scalar_op(kernels::ScalarOp::Mul, eye(size, size, dtype), -1.0));
  nn::constant_(fc_->bias(), 1.0);
}

Tensor CostNet::forward(const Tensor& similarities) {
  return cost_function(similarities, fc_->weight(), fc_->bias());
}

}  // namespace rematch::models
