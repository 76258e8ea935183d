// The UOT-RCL networks (docs/methods/uotrcl.md §4.2; UOT-RCL has no public code, so the layout follows MRL, which the
// paper says it builds on: penghu-cs/MRL nets/ImageNet.py, nets/TextNet.py, main_noisy.py).
//   f_v, f_t:  x -> fc3(ReLU(fc2(ReLU(fc1(x))))),  then z = y / (‖y‖ + 1e-8)
//              widths d_in → hidden (4096) → hidden (4096) → L (512), PyTorch's default Linear init
//   prototypes: C [L, K], column k = μ_k; orthogonal init (MRL: orthogonal L×L, first K columns), columns
//              unit length; p(k | x) = softmax_k(μ_kᵀ z / τ₁), τ₁ = 1 (UOT-RCL §III).
// MRL divides by the bare norm; the 1e-8 guards a zero output (the rematch rule for divisions that can give
// NaN) and changes a unit-scale result by about 1e-8 relative. `norm_eps` sets it: the mrl method divides by
// the bare norm as MRL does (its golden step against the official code holds to 1e-10 only so; a zero output then
// gives a non-finite loss, which the step refuses by name).
// Prototype normalisation (a §4.5 ambiguity) follows MRL: C is used as it is in the forward, and the caller
// renormalises its columns in place before every optimizer step (renormalize_prototypes), as MRL's training
// loop does (`C.data = C / C.norm(dim=0)`). The constructor leaves the columns unit length.
//
// State-dict names: C (MRL's checkpoint key), img_net.fc{1,2,3}.{weight,bias}, txt_net.fc{1,2,3}.{weight,bias}
// (MRL stores the two networks as model_state_dict_0 / _1 with the fc names).
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

// One modality's encoder, MRL's ImageNet / TextNet (they are identical).
class ModalityMlp : public nn::Module {
 public:
  ModalityMlp(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, DType dtype = DType::Float32,
              Generator* gen = nullptr, double norm_eps = 1e-8);
  static constexpr size_t kNumParams = 6;

  // x [N, input_dim] -> unit rows [N, output_dim].
  Tensor forward(const Tensor& x);
  // The same with `params` (named_parameters() order) in place of the module's own, for gradient checks.
  static Tensor forward_with(const TensorList& params, const Tensor& x, double norm_eps = 1e-8);

  int64_t input_dim() const { return fc1_->in_features(); }

 private:
  std::shared_ptr<nn::Linear> fc1_, fc2_, fc3_;
  double norm_eps_ = 1e-8;
};

struct MlpPrototypeConfig {
  int64_t img_dim = 4096;     // read from the feature file (VGG-19 fc7)
  int64_t txt_dim = 300;      // read from the feature file (Doc2Vec)
  int64_t hidden_dim = 4096;  // MRL's mid_num
  int64_t output_dim = 512;   // L
  int64_t num_classes = 0;    // K, required
  double norm_eps = 1e-8;     // z = y / (‖y‖ + norm_eps); 0 for MRL's bare norm
};

class MlpPrototypeModel : public nn::Module {
 public:
  explicit MlpPrototypeModel(const MlpPrototypeConfig& config, DType dtype = DType::Float32, Generator* gen = nullptr);

  Tensor encode_images(const Tensor& x) { return img_net_->forward(x); }  // z_v [N, L]
  Tensor encode_texts(const Tensor& x) { return txt_net_->forward(x); }   // z_t [N, L]

  // μᵀz / τ₁ [N, K] for embeddings z [N, L], against the given prototypes [L, K].
  static Tensor prototype_logits(const Tensor& z, const Tensor& prototypes, double tau = 1.0);
  // p(k | x) = softmax_k(μ_kᵀ z / τ₁) [N, K] against this model's prototypes.
  Tensor class_probs(const Tensor& z, double tau = 1.0) const;
  Tensor logits(const Tensor& z, double tau = 1.0) const { return prototype_logits(z, prototypes_, tau); }

  // C[:, k] ← C[:, k] / ‖C[:, k]‖ in place, outside the graph (MRL main_noisy.py, before every step).
  void renormalize_prototypes();

  const Tensor& prototypes() const { return prototypes_; }  // C [L, K]
  ModalityMlp& img_net() { return *img_net_; }
  ModalityMlp& txt_net() { return *txt_net_; }
  const MlpPrototypeConfig& config() const { return config_; }

 private:
  MlpPrototypeConfig config_;
  Tensor prototypes_;
  std::shared_ptr<ModalityMlp> img_net_, txt_net_;
};

}  // namespace rematch::models
