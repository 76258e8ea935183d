#include "models/vse_model.h"

namespace rematch::models {

VseModel::VseModel(const VseConfig& config, DType dtype, Generator* gen) : config_(config) {
  REMATCH_CHECK(config.vocab_size > 0, "VseModel: vocab_size must be positive, got ", config.vocab_size);
  img_enc_ = register_module(
      "img_enc", std::make_shared<VseImageEncoder>(config.img_dim, config.embed_size, config.no_imgnorm, dtype, gen));
  txt_enc_ = register_module("txt_enc",
                             std::make_shared<VseTextEncoder>(config.vocab_size, config.word_dim, config.embed_size,
                                                              config.text_dropout, config.no_txtnorm, dtype, gen));
}

VseEmbeddings VseModel::forward(const Tensor& images, const Tensor& image_lengths, const Tensor& ids,
                                const Tensor& lengths) {
  return {img_enc_->forward(images, image_lengths), txt_enc_->forward(ids, lengths)};
}

VseEmbeddings VseModel::forward_with(const TensorList& params, const Tensor& images, const Tensor& image_lengths,
                                     const Tensor& ids, const Tensor& lengths) {
  constexpr size_t n_img = VseImageEncoder::kNumParams;
  REMATCH_CHECK(params.size() == n_img + VseTextEncoder::kNumParams, "VseModel: expected ",
                n_img + VseTextEncoder::kNumParams, " parameter tensors, got ", params.size());
  return {img_enc_->forward_with(TensorList(params.begin(), params.begin() + n_img), images, image_lengths),
          txt_enc_->forward_with(TensorList(params.begin() + n_img, params.end()), ids, lengths)};
}

Tensor VseModel::similarity(const Tensor& image_embs, const Tensor& caption_embs) {
  REMATCH_CHECK(image_embs.dim() == 2 && caption_embs.dim() == 2 && image_embs.size(1) == caption_embs.size(1),
                "VseModel::similarity: expected [B_img, E] and [B_cap, E], got ", image_embs.describe(), " and ",
                caption_embs.describe());
  return matmul(image_embs, transpose(caption_embs, 0, 1));
}

}  // namespace rematch::models
