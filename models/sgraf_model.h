// An SGR or SAF model (docs/backbones.md §2–§4): image encoder, text encoder, similarity encoder, registered as
// img_enc, txt_enc and sim_enc so that state_dict() carries exactly the official names with the prefixes
// tools/convert_pth.py writes ("img_enc.fc.weight", "txt_enc.cap_rnn.weight_ih_l0_reverse",
// "sim_enc.SGR_module.2.sim_graph_w.bias", ...; the full list in §4.9). A converted official checkpoint
// therefore loads without renaming, and the parameter counts equal §4.9's (F30K, V = 8,481: SGR 18,109,175,
// SAF 17,517,306).
// SGRAF is not a network (§4.8): it is the mean of the sigmoid score matrices of an SGR and a SAF model
// trained separately, evaluated in eval mode — average_scores below.
#pragma once

#include <functional>
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
  // The same matrix before the sigmoid (SimilarityEncoder::logits). Its dropout masks are drawn in an order of its
  // own (word embeddings, VisualSA, TextSA), kept so that a seed trains the run it trained.
  Tensor logits(const Tensor& regions, const Tensor& ids, const Tensor& lengths);

  // Data-parallel training (docs/distributed.md §4): this rank's share of a batch of B images and B captions.
  struct ColumnShare {
    int64_t begin = 0, end = 0;  // this rank's rows of the batch: the images it encodes, the captions it scores
    // Rows [end - begin, ...] of every rank -> [B, ...] in rank order, with gradient; backward: the sum over ranks
    // of each one's gradient for this rank's rows (parallel::all_gather_rows, GatherBackward::SumOverRanks).
    std::function<Tensor(const Tensor&)> gather;
    // The same for host float64 values without gradient (SAF's per-caption BatchNorm statistics).
    std::function<Tensor(const Tensor&)> gather_values;
    // The columns of logits() instead: before the sigmoid, VisualSA run before TextSA (logits()'s dropout order).
    bool logits = false;
    // When set, the columns are score_vectors(z) of this rank's similarity vectors z [B, end - begin, sim_dim]
    // (SimilarityEncoder::vectors) -> [B, end - begin], in forward()'s dropout order: MSCN's meta net in place of
    // sim_eval_w (train/methods/mscn/mscn_scores.h).
    std::function<Tensor(const Tensor&)> score_vectors;
  };
  // Columns [begin, end) of forward(regions, ids, lengths) — every image of the batch against this rank's
  // captions, [B, end - begin] — computed with one process's semantics: this rank's images go through the image
  // encoder and its captions through the Bi-GRU, and both are gathered; the word embedding and dropout (the mask
  // one process draws for the batch), VisualSA (its BatchNorm over the batch's images) and TextSA (its dropout)
  // run on the whole batch on every rank, identically; SAF's per-caption BatchNorm statistics are over every
  // image, as in one process, and its running statistics move over the gathered statistics of every caption.
  // The ranks' columns, stacked, are forward()'s matrix but for the reduction order of the kernels; the
  // parameters' gradients, summed over ranks, are forward()'s (each rank's hold its columns' share).
  Tensor forward_columns(const Tensor& regions, const Tensor& ids, const Tensor& lengths, const ColumnShare& share);

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
