// RCSL's aggregated image encoder (docs/methods/rcsl.md §3.2, QinYang79/RCSL encoders.py: EncoderImageAggr, MLP).
// For region features x [B, R, img_dim] with per-image region counts:
//   h    = fc(x) + mlp(x)                         fc = Linear(img_dim → E), the residual MLP below
//   mlp  = layers.1(ReLU(bns.0(layers.0(x))))      Linear(img_dim → E/2) → BN(E/2) → ReLU → Linear(E/2 → E)
//   v    = Σ_r softmax_r(linear1(h))_rd · h_rd     per-dimension attention over the valid regions
//   f(I) = v / (‖v‖ + 1e-8)                        (skipped with no_imgnorm)
// The residual MLP runs on the flattened B·R rows, padding rows included, so its BatchNorm statistics count
// them (the official collate pads every image to the batch's largest region count; we cut the input to that
// count first, which is the same thing). The official MLP allocates a second BatchNorm, `mlp.bns.1` (E), that
// its forward never applies; it is kept so the state dict matches, and its parameters get no gradient.
//
// State-dict names (PyTorch order): fc.{weight,bias}, mlp.layers.{0,1}.{weight,bias},
// mlp.bns.{0,1}.{weight,bias,running_mean,running_var,num_batches_tracked}, linear1.{weight,bias}.
// Initialisation as EncoderImageAggr.init_weights: fc and linear1 Xavier-uniform with zero bias; the MLP's
// Linear layers keep PyTorch's default (init_weights only visits direct children); BatchNorm weight 1, bias 0.
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

// The official `MLP(img_dim, E/2, E, 2)`: children `layers` and `bns`, each a list named "0", "1" (held in a
// Sequential for the names only; forward indexes them).
class VseResidualMlp : public nn::Module {
 public:
  VseResidualMlp(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, DType dtype, Generator* gen);
  static constexpr size_t kNumParams = 8;  // layers.{0,1}.{weight,bias}, bns.{0,1}.{weight,bias}

  // x [N, input_dim] -> [N, output_dim], with `params` in named_parameters() order (the module's own for
  // forward()). Training mode uses and updates bns.0's batch statistics.
  Tensor forward_with(const TensorList& params, const Tensor& x);

 private:
  std::shared_ptr<nn::Sequential> layers_, bns_;
};

class VseImageEncoder : public nn::Module {
 public:
  VseImageEncoder(int64_t img_dim, int64_t embed_size, bool no_imgnorm = false, DType dtype = DType::Float32,
                  Generator* gen = nullptr);
  static constexpr size_t kNumParams = 4 + VseResidualMlp::kNumParams;

  // images [B, R, img_dim] (padding rows anywhere after each image's count), lengths int64 [B] in 1..R
  // -> [B, embed_size].
  Tensor forward(const Tensor& images, const Tensor& lengths);
  // The same with `params` (kNumParams tensors, named_parameters() order) in place of the module's own: the
  // hook for gradient checks. Buffers (BatchNorm running statistics) are always the module's.
  Tensor forward_with(const TensorList& params, const Tensor& images, const Tensor& lengths);

  int64_t img_dim() const { return img_dim_; }
  int64_t embed_size() const { return embed_size_; }

 private:
  int64_t img_dim_, embed_size_;
  bool no_imgnorm_;
  std::shared_ptr<nn::Linear> fc_;
  std::shared_ptr<VseResidualMlp> mlp_;
  std::shared_ptr<nn::Linear> linear1_;
};

}  // namespace rematch::models
