#include "models/sgraf_model.h"

namespace rematch::models {

SgrafModel::SgrafModel(const SgrafConfig& config, DType dtype, Generator* gen) : config_(config) {
  validate(config);
  img_enc_ = register_module("img_enc", std::make_shared<ImageEncoder>(config.img_dim, config.embed_size, dtype, gen));
  txt_enc_ = register_module("txt_enc", std::make_shared<TextEncoder>(config.vocab_size, config.word_dim,
                                                                      config.embed_size, config.dropout, dtype, gen));
  sim_enc_ = register_module("sim_enc", std::make_shared<SimilarityEncoder>(config, dtype, gen));
}

Tensor SgrafModel::forward(const Tensor& regions, const Tensor& ids, const Tensor& lengths) {
  return sim_enc_->forward(encode_images(regions), encode_captions(ids, lengths), lengths);
}

Tensor average_scores(const std::vector<Tensor>& scores) {
  REMATCH_CHECK(!scores.empty(), "average_scores: no score matrices");
  Tensor total = scores.front();
  for (size_t i = 1; i < scores.size(); ++i) {
    REMATCH_CHECK(scores[i].sizes() == total.sizes(), "average_scores: matrix ", i, " is ", scores[i].describe(),
                  ", matrix 0 is ", scores.front().describe());
    total = add(total, scores[i]);
  }
  return div(total, static_cast<double>(scores.size()));
}

}  // namespace rematch::models
