// SDML's networks (Hu, Zhen, Peng, Liu, "Scalable Deep Multimodal Learning for Cross-Modal Retrieval", SIGIR 2019;
// official code penghu-cs/SDML `model.py: Dense_Net`, `SDML.py: Solver`, docs/methods/sdml.md §2), for two views:
//   per view v, an encoder net_v: x -> fc3(ReLU(fc2(ReLU(fc1(x))))) / ‖·‖   (d_v → 1024 → 1024 → L)
//               and a decoder ae_v:  z -> the same shape back               (L → 1024 → 1024 → d_v, normalised too)
//   W [L, K]: the predefined common space, orthogonal(L×L)[:, :K], a buffer (never trained).
// Both are `Dense_Net`, MRL's ModalityMlp with the bare norm (models/mlp_prototype.h). The decoder's output is
// normalised as Dense_Net always does, though it is compared with the raw features (docs/methods/sdml.md §3).
// State-dict names: img.net.fc{1,2,3}.{weight,bias}, img.ae.*, txt.net.*, txt.ae.*, W.
#pragma once

#include <memory>

#include "models/mlp_prototype.h"
#include "nn/nn.h"

namespace rematch::models {

struct SdmlConfig {
  int64_t img_dim = 4096, txt_dim = 300;  // read from the feature file
  int64_t hidden_dim = 1024;              // Dense_Net mid_num
  int64_t output_dim = 512;               // L, SDML --output_shape
  int64_t num_classes = 0;                // K, required (K <= L)
};

// One view's encoder and decoder, trained together by their own optimizer.
class SdmlView : public nn::Module {
 public:
  SdmlView(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, DType dtype, Generator* gen);
  ModalityMlp& net() { return *net_; }
  ModalityMlp& ae() { return *ae_; }

 private:
  std::shared_ptr<ModalityMlp> net_, ae_;
};

class SdmlModel : public nn::Module {
 public:
  explicit SdmlModel(const SdmlConfig& config, DType dtype = DType::Float32, Generator* gen = nullptr);
  SdmlView& img() { return *img_; }
  SdmlView& txt() { return *txt_; }
  const Tensor& W() const { return buffer("W"); }

 private:
  std::shared_ptr<SdmlView> img_, txt_;
};

}  // namespace rematch::models
