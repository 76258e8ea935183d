// EncoderImage (docs/backbones.md §2): one Linear img_dim → embed_size applied to each precomputed region
// feature, then l2n. No BatchNorm, dropout or ReLU, and the raw features are not normalised first.
// State-dict names: fc.weight [embed, img_dim], fc.bias [embed] (§4.9, under "img_enc.").
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

class ImageEncoder : public nn::Module {
 public:
  // fc: Xavier-uniform weight, zero bias (§1).
  ImageEncoder(int64_t img_dim, int64_t embed_size, DType dtype = DType::Float32, Generator* gen = nullptr);

  // regions [B, R, img_dim] -> [B, R, embed_size], every region vector l2-normalised (eps on the norm, §1).
  Tensor forward(const Tensor& regions);
  Tensor operator()(const Tensor& regions) { return forward(regions); }

  int64_t img_dim() const { return fc_->in_features(); }
  int64_t embed_size() const { return fc_->out_features(); }

 private:
  std::shared_ptr<nn::Linear> fc_;
};

}  // namespace rematch::models
