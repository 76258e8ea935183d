// The global visual-semantic embedding model of RCSL (docs/methods/rcsl.md §3.2, QinYang79/RCSL model.py: SVSE): an
// image encoder f (models/vse_image_encoder.h) and a caption encoder g (models/vse_text_encoder.h), both
// ending in unit vectors, so the similarity S(I, T) = f(I)ᵀ g(T) is the cosine similarity.
//
// State-dict names: the two encoders' names under `img_enc.` and `txt_enc.` (SVSE's attribute names; the
// official checkpoint stores the list [img_enc.state_dict(), txt_enc.state_dict()], which a converter
// prefixes this way). The training-time augmentations of §3.1 act on the data, not here: models/augment.h.
#pragma once

#include <memory>

#include "models/vse_image_encoder.h"
#include "models/vse_text_encoder.h"

namespace rematch::models {

struct VseConfig {
  int64_t vocab_size = 0;     // required
  int64_t img_dim = 2048;     // --img_dim
  int64_t word_dim = 300;     // --word_dim
  int64_t embed_size = 1024;  // --embed_size
  double text_dropout = 0.1;  // EncoderText_gru's Dropout(0.1) on the word embeddings
  bool no_imgnorm = false;    // --no_imgnorm
  bool no_txtnorm = false;    // --no_txtnorm
};

struct VseEmbeddings {
  Tensor images;    // [B_img, E]
  Tensor captions;  // [B_cap, E]
};

class VseModel : public nn::Module {
 public:
  // `gen` draws the initial weights and the text dropout masks; it must outlive the model.
  explicit VseModel(const VseConfig& config, DType dtype = DType::Float32, Generator* gen = nullptr);

  // images [B, R, img_dim] with region counts [B]; ids [B', L] with caption lengths [B'].
  Tensor encode_images(const Tensor& images, const Tensor& image_lengths) {
    return img_enc_->forward(images, image_lengths);
  }
  Tensor encode_captions(const Tensor& ids, const Tensor& lengths) { return txt_enc_->forward(ids, lengths); }
  VseEmbeddings forward(const Tensor& images, const Tensor& image_lengths, const Tensor& ids, const Tensor& lengths);
  // The same with every parameter passed in (named_parameters() order), for gradient checks.
  VseEmbeddings forward_with(const TensorList& params, const Tensor& images, const Tensor& image_lengths,
                             const Tensor& ids, const Tensor& lengths);

  // S = images · captionsᵀ  [B_img, B_cap] (model.py get_sim: the embeddings are already unit vectors).
  static Tensor similarity(const Tensor& image_embs, const Tensor& caption_embs);

  const VseConfig& config() const { return config_; }
  VseImageEncoder& img_enc() { return *img_enc_; }
  VseTextEncoder& txt_enc() { return *txt_enc_; }

 private:
  VseConfig config_;
  std::shared_ptr<VseImageEncoder> img_enc_;
  std::shared_ptr<VseTextEncoder> txt_enc_;
};

}  // namespace rematch::models
