// EncoderSimilarity (docs/backbones.md §4, §5.1): the B_img × B_cap matrix of sigmoid scores of an SGR or SAF
// model, computed for all captions in one pass — no per-caption loop. Captions are padded to the longest
// of the call and the padding is masked wherever §5.1 lists: the attention's per-region word norm
// (attention.h), TextSA's mean and softmax (text_sa.h), SGR's key softmax and node updates (sgr.h), SAF's
// BatchNorm statistics and l1 sum (saf.h). The result equals the official per-caption computation (tests:
// similarity_encoder_test.cpp, and the PyTorch goldens of sgraf_golden_test.cpp).
//
// Per call:
//   images:   v^g = VisualSA(v)                                        [B_img, d]  (one BN update per call)
//   captions: t^g = TextSA(w, mask)                                    [B_cap, d]
//   pairs:    α = attention_weights(v, w, mask)                        [B_img, B_cap, L, R]
//             σ_t = l2n(local_similarity(α, v, w, W_l, b_l))           [B_img, B_cap, L, m]  (0 at padding)
//             σ_0 = l2n(W_g (v^g − t^g)^{∘2} + b_g)                    [B_img, B_cap, m]
//             S⁰ = [σ_0; σ_1 … σ_L] → SGR or SAF → z                   [B_img, B_cap, m]
//             score = sigmoid(w_e · z + b_e)                           [B_img, B_cap], rows = images
//
// Memory plan (training, batch 128 × 128 = 16,384 pairs, L = 14, d = 1024, m = 256, R = 36, float32): the
// official code keeps ≈ 6–8 pair-level d-wide tensors ([pairs·L, d], 0.94 GB each) for backward. Here:
//   * no pair-level d-wide tensor is kept: local_similarity recomputes Σαv, its l2n and a − w chunk by
//     chunk in backward (≤ 16 MB temporaries) and saves only α;
//   * the attention keeps 3 tensors of [pairs, L, R] (33 MB each): the scores, the masked LeakyReLU output
//     and α;
//   * the global node keeps 2 tensors of [B_img, B_cap, d] (64 MB each): the difference and its square;
//   * the node matrices keep [pairs, L+1, m] tensors (0.25 GB each): the local part before its l2n and S⁰,
//     then per full SGR step the queries, keys, A·S, the update before and after its ReLU and the masked
//     result (the edges A are [pairs, L+1, L+1], 0.06 GB); the last step works on node 0 only, keeping just
//     its keys. ≈ 14 such tensors, ≈ 3.5 GB in all, against ≈ 10–14 GB for the official structure (§5.2,
//     §9 item 10). SAF keeps the two node-sized tensors and a few [pairs, L+1] scalar maps.
//   * image- and caption-level tensors (encoders, VisualSA, TextSA) are small next to these.
// Measured (CPU, float32, full dims, batch 64 × 64, L = 10–14, forward + backward of the whole model): peak
// resident memory 1.37 GB for SGR and 0.74 GB for SAF, weights and gradients included.
// At evaluation (no graph) only one block of these is alive at a time (train/eval/block_scoring.h).
//
// State-dict names (§4.9, under "sim_enc."): v_global_w.*, t_global_w.*, sim_tranloc_w.*, sim_tranglo_w.*,
// sim_eval_w.*, then SGR_module.<step>.* or SAF_module.*.
#pragma once

#include <memory>

#include "models/saf.h"
#include "models/sgr.h"
#include "models/sgraf_config.h"
#include "models/text_sa.h"
#include "models/visual_sa.h"
#include "nn/nn.h"

namespace rematch::models {

// The image side of a call: unit region vectors and the VisualSA global vector.
struct ImageSide {
  Tensor regions;  // [B_img, R, d]
  Tensor global;   // [B_img, d]
};

// The caption side: padded unit word vectors, lengths (int64 host), mask and the TextSA global vector.
struct CaptionSide {
  Tensor words;      // [B_cap, L, d], L = max(lengths)
  Tensor lengths;    // [B_cap]
  Tensor word_mask;  // bool [B_cap, L]
  Tensor global;     // [B_cap, d]
};

class SimilarityEncoder : public nn::Module {
 public:
  // Uses config.embed_size, sim_dim, num_regions, sgr_step, dropout and module.
  SimilarityEncoder(const SgrafConfig& config, DType dtype = DType::Float32, Generator* gen = nullptr);

  // The halves of forward(), for callers that reuse one side against many blocks of the other (evaluation).
  // In training mode, encode_images updates VisualSA's running statistics.
  ImageSide encode_images(const Tensor& img_emb);
  // cap_emb [B_cap, T, d] with T >= max(lengths); positions past each length are ignored.
  CaptionSide encode_captions(const Tensor& cap_emb, const Tensor& lengths);
  // [B_img, B_cap] sigmoid scores. In training mode, SAF updates its BatchNorm statistics per caption.
  Tensor scores(const ImageSide& images, const CaptionSide& captions);
  // The same before the sigmoid, w_e · z + b_e: DECL's raw similarities (its EncoderSimilarity drops the
  // sigmoid, docs/methods/decl.md §1). scores() is sigmoid(logits()).
  Tensor logits(const ImageSide& images, const CaptionSide& captions);
  // The similarity vectors z [B_img, B_cap, sim_dim] that logits() scores with sim_eval_w: MSCN scores them with
  // its meta network instead (`MSCN/models.py: EncoderSimilarity.forward`, train/methods/mscn/mscn_scores.h).
  Tensor vectors(const ImageSide& images, const CaptionSide& captions);

  // img_emb [B_img, R, d] (ImageEncoder), cap_emb [B_cap, L, d] (TextEncoder), lengths int64 [B_cap].
  // TextSA, then VisualSA: the order of their dropout draws (SgrafModel::forward).
  Tensor forward(const Tensor& img_emb, const Tensor& cap_emb, const Tensor& lengths) {
    const CaptionSide captions = encode_captions(cap_emb, lengths);
    return scores(encode_images(img_emb), captions);
  }
  Tensor operator()(const Tensor& img_emb, const Tensor& cap_emb, const Tensor& lengths) {
    return forward(img_emb, cap_emb, lengths);
  }

  SimilarityModule module() const { return module_; }

  // The pair-level part of logits() (attention, local and global similarity vectors, SGR/SAF, the head) for
  // every image against the given captions, in one pass: its graph keeps every pair's activations until backward.
  Tensor pair_logits(const ImageSide& images, const CaptionSide& captions);
  // The same one caption at a time, the unit of the official loop (docs/memory.md §2, models/scoring_budget.h):
  // the forward pass runs caption by caption without a graph and keeps only the [B_img, B_cap] result; backward
  // recomputes each caption's pairs with a graph and backpropagates through them, one caption at a time, so a
  // step keeps one caption's activations instead of every pair's. The results do not depend on the budget that
  // chose this (nothing in it does), and equal pair_logits()'s to rounding: a GEMM's bits depend on the shape
  // of the call an element falls in (tensor/cpu/matmul.cpp), so no split of the captions into chunks gives one
  // pass's bits; and the gradients add up caption by caption. In training mode SAF's running statistics move
  // once per caption, in caption order, as in one pass, and backward leaves them. Higher-order gradients
  // through it are an error (logits() takes one pass inside a backward).
  Tensor per_caption_logits(const ImageSide& images, const CaptionSide& captions);
  // Whether one pass over these shapes would keep more for backward than the scoring memory budget allows
  // (always false without grad mode).
  bool over_budget(const ImageSide& images, const CaptionSide& captions) const;
  // The SAF module (nullptr for SGR).
  AttentionFiltration* saf() { return saf_.get(); }

 private:
  SimilarityModule module_;
  int64_t embed_size_, sim_dim_;
  std::shared_ptr<VisualSA> v_global_w_;
  std::shared_ptr<TextSA> t_global_w_;
  std::shared_ptr<nn::Linear> sim_tranloc_w_, sim_tranglo_w_, sim_eval_w_;
  std::shared_ptr<SimilarityGraphReasoning> sgr_;
  std::shared_ptr<AttentionFiltration> saf_;
  int64_t sgr_steps_ = 0;
  std::vector<Tensor> pair_parameters() const;
};

}  // namespace rematch::models
