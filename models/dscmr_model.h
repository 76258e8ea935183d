// DSCMR's networks (Zhen et al., "Deep Supervised Cross-Modal Retrieval", CVPR 2019; official code
// penghu-cs/DSCMR `model.py: IDCM_NN` on pre-extracted features, docs/methods/dscmr.md §2):
//   u = W(ReLU(A x_v + a)) + w,   v = W(ReLU(B x_t + b)) + w     (ImgNN / TextNN denseL1, then the shared
//                                                               linearLayer: the common space, not normalised)
//   ŷ_u = P u + p,   ŷ_v = P v + p                             (linearLayer2: the shared linear classifier)
// Widths d_v → hidden (img_output_dim = text_output_dim = 2048) → common (minus_one_dim = 1024) → K;
// PyTorch's default Linear init.
// State-dict names as the official module's: img_net.denseL1.{weight,bias}, text_net.denseL1.{weight,bias},
// linearLayer.{weight,bias}, linearLayer2.{weight,bias} (also the parameter order, which the Adam state follows).
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

struct DscmrConfig {
  int64_t img_dim = 4096;      // read from the feature file
  int64_t txt_dim = 300;       // read from the feature file
  int64_t hidden_dim = 2048;   // IDCM_NN img_output_dim = text_output_dim
  int64_t common_dim = 1024;   // IDCM_NN minus_one_dim
  int64_t num_classes = 0;     // IDCM_NN output_dim = K, required
};

class DscmrModel : public nn::Module {
 public:
  explicit DscmrModel(const DscmrConfig& config, DType dtype = DType::Float32, Generator* gen = nullptr);

  Tensor encode_images(const Tensor& x);  // u [N, common]
  Tensor encode_texts(const Tensor& x);   // v [N, common]
  Tensor classify(const Tensor& features);  // linearLayer2: [N, common] -> [N, K]

  const DscmrConfig& config() const { return config_; }

 private:
  // ImgNN / TextNN: one Linear + ReLU under the name "denseL1".
  struct Branch : nn::Module {
    Branch(int64_t in, int64_t out, DType dtype, Generator* gen);
    std::shared_ptr<nn::Linear> dense;
  };
  DscmrConfig config_;
  std::shared_ptr<Branch> img_net_, text_net_;
  std::shared_ptr<nn::Linear> common_, classifier_;
};

}  // namespace rematch::models
