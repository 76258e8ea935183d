#include "models/similarity_encoder.h"

#include <algorithm>

#include "models/attention.h"
#include "models/local_similarity.h"
#include "models/padding.h"
#include "models/scoring_budget.h"
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
  if (module_ == SimilarityModule::SGR) sgr_steps_ = config.sgr_step;
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
  // Chunks only where a graph would be kept (training) and one pass would pass the budget; not while SAF
  // gathers its statistics over ranks (one call per batch there), nor while a higher-order graph is recorded.
  const bool gathers = saf_ && saf_->gathers_statistics();
  if (!over_budget(images, captions) || gathers || in_backward()) return pair_logits(images, captions);
  return per_caption_logits(images, captions);
}

bool SimilarityEncoder::over_budget(const ImageSide& images, const CaptionSide& captions) const {
  if (!grad_enabled()) return false;  // without a graph nothing is kept: evaluation blocks (--eval_batch) bound it
  const int64_t budget = scoring_memory_budget(images.regions.device());
  if (budget <= 0) return false;
  const int64_t per_caption =
      pair_bytes_per_caption(images.regions.size(0), captions.words.size(1), images.regions.size(1), embed_size_,
                             sim_dim_, sgr_steps_, images.regions.dtype());
  return per_caption * captions.words.size(0) > budget;
}

Tensor SimilarityEncoder::pair_logits(const ImageSide& images, const CaptionSide& captions) {
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

std::vector<Tensor> SimilarityEncoder::pair_parameters() const {
  std::vector<Tensor> out;
  for (const nn::Module* m : {static_cast<const nn::Module*>(sim_tranloc_w_.get()),
                              static_cast<const nn::Module*>(sim_tranglo_w_.get()),
                              static_cast<const nn::Module*>(sim_eval_w_.get()),
                              sgr_ ? static_cast<const nn::Module*>(sgr_.get()) : static_cast<const nn::Module*>(saf_.get())})
    for (const Tensor& p : m->parameters()) out.push_back(p);
  return out;
}

namespace {

// Captions [c0, c0 + n) of a caption side, at the batch's padded length (the shapes of one pass but for B_cap).
CaptionSide caption_rows(const CaptionSide& c, int64_t c0, int64_t n) {
  CaptionSide out;
  out.words = narrow(c.words, 0, c0, n);
  out.lengths = contiguous(narrow(c.lengths, 0, c0, n));
  out.word_mask = contiguous(narrow(c.word_mask, 0, c0, n));
  out.global = narrow(c.global, 0, c0, n);
  return out;
}

// A leaf holding t's values, requiring grad when t does (the recomputed graph ends there).
Tensor leaf_of(const Tensor& t) {
  Tensor leaf = t.detach();
  if (t.requires_grad()) leaf.requires_grad_(true);
  return leaf;
}

}  // namespace

Tensor SimilarityEncoder::per_caption_logits(const ImageSide& images, const CaptionSide& captions) {
  const int64_t n_cap = captions.words.size(0);
  Tensor out;
  {
    NoGradGuard no_grad;  // the forward pass keeps nothing; SAF's running statistics move caption by caption
    TensorList parts;
    for (int64_t c = 0; c < n_cap; ++c) parts.push_back(pair_logits(images, caption_rows(captions, c, 1)));
    out = cat(parts, 1);
  }
  const std::vector<Tensor> params = pair_parameters();
  TensorList inputs{images.regions, images.global, captions.words, captions.global};
  inputs.insert(inputs.end(), params.begin(), params.end());
  // Backward: one caption at a time, recomputed with a graph from leaves that hold the inputs' values, and
  // backpropagated with grad(); the gradients add up caption by caption in caption order.
  return record_once_differentiable(
      "per_caption_logits", inputs, out,
      [this, images, captions, params, inputs, n_cap](const TensorList& grads) {
        GradModeGuard with_grad(true);
        TensorList totals(inputs.size());
        // SAF's running statistics moved in the forward pass; the recomputation must not move them again.
        std::vector<std::pair<Tensor, double>> frozen;
        if (saf_)
          for (const auto& [name, b] : saf_->named_buffers()) frozen.emplace_back(b, b.item<double>());
        const Tensor g = grads[0];
        const ImageSide img{leaf_of(images.regions), leaf_of(images.global)};
        Tensor g_words, g_cap_global;
        for (int64_t c = 0; c < n_cap; ++c) {
          CaptionSide cap = caption_rows(captions, c, 1);
          cap.words = leaf_of(cap.words);
          cap.global = leaf_of(cap.global);
          // What this caption's gradient is taken with respect to, and the input slot each one goes to.
          TensorList wrt;
          std::vector<size_t> slot;
          const TensorList sides{img.regions, img.global, cap.words, cap.global};
          for (size_t i = 0; i < sides.size(); ++i)
            if (sides[i].requires_grad()) wrt.push_back(sides[i]), slot.push_back(i);
          for (size_t k = 0; k < params.size(); ++k)
            if (params[k].requires_grad()) wrt.push_back(params[k]), slot.push_back(4 + k);
          if (wrt.empty()) break;
          const Tensor y = pair_logits(img, cap);  // [B_img, 1]
          GradOptions options;
          options.allow_unused = true;
          const TensorList got = grad({y}, wrt, {contiguous(narrow(g, 1, c, 1))}, options);
          NoGradGuard no_grad;
          for (size_t k = 0; k < got.size(); ++k) {
            if (!got[k].defined()) continue;
            const size_t at = slot[k];
            if (at == 2 || at == 3) {  // this caption's row of the words / the global vectors
              Tensor& whole = at == 2 ? g_words : g_cap_global;
              if (!whole.defined()) whole = zeros(inputs[at].sizes(), inputs[at].dtype(), inputs[at].device());
              kernels::copy_(narrow(whole, 0, c, 1), got[k]);
            } else {
              totals[at] = totals[at].defined() ? add(totals[at], got[k]) : got[k];
            }
          }
        }
        for (auto& [b, v] : frozen) kernels::fill_(b, v);
        totals[2] = g_words;
        totals[3] = g_cap_global;
        return totals;
      });
}

}  // namespace rematch::models
