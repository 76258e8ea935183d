#include "models/image_encoder.h"

namespace rematch::models {

ImageEncoder::ImageEncoder(int64_t img_dim, int64_t embed_size, DType dtype, Generator* gen) {
  fc_ = register_module("fc", std::make_shared<nn::Linear>(img_dim, embed_size, true, dtype, gen));
  nn::xavier_uniform_(fc_->weight(), 1, gen);
  nn::zeros_(fc_->bias());
}

Tensor ImageEncoder::forward(const Tensor& regions) {
  REMATCH_CHECK(regions.defined() && regions.dim() == 3 && regions.size(2) == img_dim(),
                "img_enc: expected regions [B, R, ", img_dim(), "], got ",
                regions.defined() ? regions.describe() : "undefined");
  return l2_normalize(fc_->forward(regions), -1);
}

}  // namespace rematch::models
