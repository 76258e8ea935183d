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
  // Captions first, then images, in this order (forward_columns draws its dropout masks in the same order): the
  // order GCC gave the arguments of one call before, kept so that a seed trains the run it trained.
  const Tensor cap_emb = encode_captions(ids, lengths);
  const Tensor img_emb = encode_images(regions);
  return sim_enc_->forward(img_emb, cap_emb, lengths);
}

Tensor SgrafModel::logits(const Tensor& regions, const Tensor& ids, const Tensor& lengths) {
  const Tensor img = encode_images(regions);
  const Tensor cap = encode_captions(ids, lengths);
  const ImageSide images = sim_enc_->encode_images(img);
  const CaptionSide captions = sim_enc_->encode_captions(cap, lengths);
  return sim_enc_->logits(images, captions);
}

Tensor SgrafModel::forward_columns(const Tensor& regions, const Tensor& ids, const Tensor& lengths,
                                   const ColumnShare& share) {
  const int64_t b = regions.size(0), n = share.end - share.begin;
  REMATCH_CHECK(ids.size(0) == b && lengths.size(0) == b && share.begin >= 0 && n > 0 && share.end <= b &&
                    share.gather,
                "forward_columns: rows [", share.begin, ", ", share.end, ") of a batch of ", b, " images and ",
                ids.size(0), " captions");
  // The dropout masks are drawn in forward()'s order: word embeddings, TextSA, VisualSA.
  const Tensor words = txt_enc_->embed_words(ids, lengths);  // [B, L, word_dim]
  const Tensor my_lengths = contiguous(narrow(lengths, 0, share.begin, n));
  const Tensor cap = share.gather(txt_enc_->encode_words(narrow(words, 0, share.begin, n), my_lengths));
  const Tensor img = share.gather(encode_images(narrow(regions, 0, share.begin, n)));  // [B, R, d]
  ImageSide images;
  CaptionSide all;
  if (share.logits) images = sim_enc_->encode_images(img);  // logits(): VisualSA, then TextSA
  all = sim_enc_->encode_captions(cap, lengths);
  if (!share.logits) images = sim_enc_->encode_images(img);
  CaptionSide mine;
  mine.words = narrow(all.words, 0, share.begin, n);
  mine.lengths = my_lengths;
  mine.word_mask = contiguous(narrow(all.word_mask, 0, share.begin, n));
  mine.global = narrow(all.global, 0, share.begin, n);
  AttentionFiltration* saf = sim_enc_->saf();
  const auto columns = [&] {
    if (share.score_vectors) return share.score_vectors(sim_enc_->vectors(images, mine));
    return share.logits ? sim_enc_->logits(images, mine) : sim_enc_->scores(images, mine);
  };
  if (saf == nullptr) return columns();
  struct Unset {
    AttentionFiltration* saf;
    ~Unset() { saf->set_statistics_gather({}); }
  } unset{saf};
  saf->set_statistics_gather(share.gather_values);
  return columns();
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
