// An SGR or SAF model (docs/backbones.md §2–§4): image encoder, text encoder, similarity encoder, registered as
// img_enc, txt_enc and sim_enc so that state_dict() carries exactly the official names with the prefixes
// tools/convert_pth.py writes ("img_enc.fc.weight", "txt_enc.cap_rnn.weight_ih_l0_reverse",
// "sim_enc.SGR_module.2.sim_graph_w.bias", ...; the full list in §4.9). A converted official checkpoint
// therefore loads without renaming, and the parameter counts equal §4.9's (F30K, V = 8,481: SGR 18,109,175,
// SAF 17,517,306).
// SGRAF is not a network (§4.8): it is the mean of the sigmoid score matrices of an SGR and a SAF model
// trained separately, evaluated in eval mode — average_scores below.
#pragma once

#include <memory>
#include <vector>

#include "models/image_encoder.h"
#include "models/sgraf_config.h"
#include "models/similarity_encoder.h"
#include "models/text_encoder.h"

namespace rematch::models {

class SgrafModel : public nn::Module {
 public:
  // Initialised as §1 says; `gen` (nullptr: default_generator()) draws the initial values and the dropout
  // masks and must outlive the model.
  explicit SgrafModel(const SgrafConfig& config, DType dtype = DType::Float32, Generator* gen = nullptr);

  // regions float [B_img, R, img_dim] -> [B_img, R, d] unit vectors.
  Tensor encode_images(const Tensor& regions) { return img_enc_->forward(regions); }
  // ids int64 [B_cap, T], lengths int64 [B_cap] (host) -> [B_cap, max(lengths), d].
  Tensor encode_captions(const Tensor& ids, const Tensor& lengths) { return txt_enc_->forward(ids, lengths); }
  // The [B_img, B_cap] sigmoid score matrix of every image against every caption, rows = images.
  Tensor forward(const Tensor& regions, const Tensor& ids, const Tensor& lengths);
  Tensor operator()(const Tensor& regions, const Tensor& ids, const Tensor& lengths) {
    return forward(regions, ids, lengths);
  }

  const SgrafConfig& config() const { return config_; }
  ImageEncoder& img_enc() { return *img_enc_; }
  TextEncoder& txt_enc() { return *txt_enc_; }
  SimilarityEncoder& sim_enc() { return *sim_enc_; }

 private:
  SgrafConfig config_;
  std::shared_ptr<ImageEncoder> img_enc_;
  std::shared_ptr<TextEncoder> txt_enc_;
  std::shared_ptr<SimilarityEncoder> sim_enc_;
};

// SGRAF (§4.8; also NCR's two-net average): the element-wise mean of score matrices of equal shape.
Tensor average_scores(const std::vector<Tensor>& scores);

}  // namespace rematch::models
