#include "models/visual_sa.h"

#include "models/xavier_linear.h"

namespace rematch::models {

VisualSA::VisualSA(int64_t embed_size, int64_t num_regions, double dropout, DType dtype, Generator* gen)
    : embed_size_(embed_size), num_regions_(num_regions) {
  using Layers = std::vector<std::shared_ptr<nn::UnaryModule>>;
  // Linear, BatchNorm1d (eps 1e-5, momentum 0.1), Tanh, Dropout: children "0".."3" as in torch.nn.Sequential.
  auto branch = [&](int64_t bn_channels) {
    return std::make_shared<nn::Sequential>(
        Layers{xavier_linear(embed_size, embed_size, dtype, gen),
               std::make_shared<nn::BatchNorm1d>(bn_channels, 1e-5, 0.1, true, dtype), std::make_shared<nn::Tanh>(),
               std::make_shared<nn::Dropout>(dropout, gen)});
  };
  local_ = register_module("embedding_local", branch(num_regions));
  global_ = register_module("embedding_global", branch(embed_size));
  common_ = register_module("embedding_common",
                            std::make_shared<nn::Sequential>(Layers{xavier_linear(embed_size, 1, dtype, gen)}));
}

Tensor VisualSA::forward(const Tensor& regions) {
  REMATCH_CHECK(
      regions.defined() && regions.dim() == 3 && regions.size(1) == num_regions_ && regions.size(2) == embed_size_,
      "v_global_w (VisualSA): expected regions [B_img, ", num_regions_, ", ", embed_size_, "], got ",
      regions.defined() ? regions.describe() : "undefined",
      " (the BatchNorm channels are the region slots, so R is fixed by the model)");
  const Tensor local = local_->forward(regions);                                         // p_r: [B, R, d]
  const Tensor global = global_->forward(mean(regions, {1}));                            // g:   [B, d]
  const Tensor logits = squeeze(common_->forward(mul(local, unsqueeze(global, 1))), 2);  // [B, R]
  const Tensor beta = softmax(logits, 1);
  return l2_normalize(sum(mul(unsqueeze(beta, 2), regions), {1}), -1);
}

}  // namespace rematch::models
