// L2RM's learnable cost function f_c (docs/methods/l2rm.md §1.4; hhc1997/L2RM models.py: FeedForward_Network): one
// Linear(B → B) followed by ReLU, applied to each row of an image × caption similarity matrix S [N, B]:
//   C_ij = ReLU(Σ_k W_jk S_ik + b_j)
// with W = −I and b = 1 at initialisation, so that f_c(S) = max(1 − S, 0) until the self-supervised cost
// update (L_OT = Σ π^sup ⊙ f_c(S^key) on reconstructed pairs, docs/methods/l2rm.md §1.4) moves it. The width B is the
// number of captions of a batch and is baked into the weights; after training the map is not
// permutation-equivariant in the caption axis. The official module also allocates a Sigmoid that it never
// uses; it has no parameters and is left out.
// State-dict names: fc.weight [B, B], fc.bias [B].
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

// The functional form: ReLU(S Wᵀ + b) for S [N, B], weight [B, B], bias [B].
Tensor cost_function(const Tensor& similarities, const Tensor& weight, const Tensor& bias);

class CostNet : public nn::UnaryModule {
 public:
  explicit CostNet(int64_t size = 128, DType dtype = DType::Float32);

  // S [N, size] -> costs [N, size].
  Tensor forward(const Tensor& similarities) override;

  int64_t size() const { return fc_->in_features(); }
  nn::Linear& fc() { return *fc_; }

 private:
  std::shared_ptr<nn::Linear> fc_;
};

}  // namespace rematch::models
