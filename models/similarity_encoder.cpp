#include "models/similarity_encoder.h"

#include <algorithm>

#include "models/attention.h"
#include "models/local_similarity.h"
#include "models/padding.h"
#include "models/xavier_linear.h"

namespace rematch::models {

SimilarityEncoder::SimilarityEncoder(const SgrafConfig& config, DType dtype, Generator* gen)
    : module_(config.module), embed_size_(config.embed_size), sim_dim_(config.sim_dim) {
  validate(config);
  const int64_t d = config.embed_size, m = config.sim_dim;
  // Registration order = the official EncoderSimilarity's, so state_dict() lists names in PyTorch's order.
  v_global_w_ =
      register_module("v_global_w", std::make_shared<VisualSA>(d, config.num_regions, config.dropout, dtype, gen));
  t_global_w_ = register_module("t_global_w", std::make_shared<TextSA>(d, config.dropout, dtype, gen));
  sim_tranloc_w_ = register_module("sim_tranloc_w", xavier_linear(d, m, dtype, gen));
  sim_tranglo_w_ = register_module("sim_tranglo_w", xavier_linear(d, m, dtype, gen));
  sim_eval_w_ = register_module("sim_eval_w", xavier_linear(m, 1, dtype, gen));
  if (module_ == SimilarityModule::SGR)
    sgr_ = register_module("SGR_module", std::make_shared<SimilarityGraphReasoning>(m, config.sgr_step, dtype, gen));
  else
    saf_ = register_module("SAF_module", std::make_shared<AttentionFiltration>(m, dtype, gen));
}

ImageSide SimilarityEncoder::encode_images(const Tensor& img_emb) { return {img_emb, v_global_w_->forward(img_emb)}; }

CaptionSide SimilarityEncoder::encode_captions(const Tensor& cap_emb, const Tensor& lengths) {
  REMATCH_CHECK(cap_emb.defined() && cap_emb.dim() == 3 && cap_emb.size(2) == embed_size_,
                "sim_enc: expected caption embeddings [B_cap, L, ", embed_size_, "], got ",
                cap_emb.defined() ? cap_emb.describe() : "undefined");
  check_lengths(lengths, cap_emb.size(0), cap_emb.size(1), "sim_enc");
  const std::vector<int64_t> len = lengths.to_vector<int64_t>();
  const int64_t max_len = *std::max_element(len.begin(), len.end());
  CaptionSide c;
  c.words = narrow(cap_emb, 1, 0, max_len);
  c.lengths = lengths;
  c.word_mask = word_mask(lengths, max_len, cap_emb.device());
  c.global = t_global_w_->forward(c.words, c.word_mask);
  return c;
}

Tensor SimilarityEncoder::scores(const ImageSide& images, const CaptionSide& captions) {
  return sigmoid(logits(images, captions));  // §4.7
}

Tensor SimilarityEncoder::logits(const ImageSide& images, const CaptionSide& captions) {
  return squeeze(sim_eval_w_->forward(vectors(images, captions)), 2);
}

Tensor SimilarityEncoder::vectors(const ImageSide& images, const CaptionSide& captions) {
  REMATCH_CHECK(
      images.regions.defined() && images.global.defined() && captions.words.defined() && captions.global.defined(),
      "sim_enc: scores() needs the results of encode_images() and encode_captions()");
  // σ_1..σ_L: local alignments (§4.3, §4.4), zero at padded words.
  const Tensor alpha = attention_weights(images.regions, captions.words, captions.word_mask);
  const Tensor local = l2_normalize(local_similarity(alpha, images.regions, captions.words, captions.word_mask,
                                                     sim_tranloc_w_->weight(), sim_tranloc_w_->bias()),
                                    -1);
  // σ_0: the global alignment of every pair (§4.4).
  const Tensor diff = sub(unsqueeze(images.global, 1), unsqueeze(captions.global, 0));  // [B_img, B_cap, d]
  const Tensor global = l2_normalize(sim_tranglo_w_->forward(square(diff)), -1);
  const Tensor nodes = cat({unsqueeze(global, 2), local}, 2);  // global node first: [B_img, B_cap, L+1, m]
  const Tensor mask = node_mask(captions.lengths, captions.words.size(1), nodes.device());
  return module_ == SimilarityModule::SGR ? sgr_->forward(nodes, mask) : saf_->forward(nodes, mask);
}

}  // namespace rematch::models
