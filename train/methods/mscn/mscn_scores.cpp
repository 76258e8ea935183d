#include "train/methods/mscn/mscn_scores.h"

#include <algorithm>
#include <cmath>

#include "autograd/autograd.h"
#include "nn/functional.h"
#include "parallel/gather_op.h"
#include "train/methods/data_parallel.h"
#include "train/eval/sgraf_scoring.h"

namespace rematch::train {
namespace {

void check_square(const char* op, const Tensor& scores) {
  REMATCH_CHECK(scores.defined() && scores.dim() == 2 && scores.size(0) == scores.size(1) && scores.size(0) >= 1,
                op, ": scores must be a square [B, B] matrix, got ", scores.defined() ? scores.describe() : "undefined");
}

// S_ii as [B, 1].
Tensor diagonal_of(const Tensor& scores) {
  const int64_t n = scores.size(0);
  return gather(scores, 1, reshape(arange(n, DType::Int64, scores.device()), {n, 1}));
}

// cost_s[i][j] = [M + S_ij − S_ii]_+ and cost_im[i][j] = [M + S_ij − S_jj]_+, diagonals zeroed.
std::pair<Tensor, Tensor> costs(const Tensor& scores, const Tensor& margins) {
  const int64_t n = scores.size(0);
  const Tensor d = diagonal_of(scores);
  const Tensor positives = eye(n, n, DType::Bool, scores.device());
  const Tensor cost_s = masked_fill(clamp_min(add(sub(scores, d), margins), 0.0), positives, 0.0);
  const Tensor cost_im = masked_fill(clamp_min(add(sub(scores, transpose(d, 0, 1)), margins), 0.0), positives, 0.0);
  return {cost_s, cost_im};
}

}  // namespace

Tensor mscn_scores(models::SgrafModel& model, MetaSim& meta, const Tensor& regions, const Tensor& ids,
                   const Tensor& lengths) {
  const Tensor cap_emb = model.encode_captions(ids, lengths);
  const Tensor img_emb = model.encode_images(regions);
  models::SimilarityEncoder& enc = model.sim_enc();
  const models::CaptionSide captions = enc.encode_captions(cap_emb, lengths);
  const models::ImageSide images = enc.encode_images(img_emb);
  return squeeze(meta.forward(enc.vectors(images, captions)), 2);
}

Tensor mscn_training_scores(parallel::Communicator& comm, models::SgrafModel& model, MetaSim& meta,
                            const data::Batch& b, bool& shared) {
  shared = comm.world_size() > 1 && b.size() >= comm.world_size();
  if (!shared) return mscn_scores(model, meta, b.regions, b.captions, b.lengths);
  const parallel::RowRange mine = batch_share(comm, b.size());
  models::SgrafModel::ColumnShare share;
  share.begin = mine.begin;
  share.end = mine.end;
  share.gather = [&comm](const Tensor& x) { return parallel::all_gather_rows(comm, x); };
  share.gather_values = [&comm](const Tensor& x) { return comm.all_gather(x); };
  share.score_vectors = [&meta](const Tensor& z) { return squeeze(meta.forward(z), 2); };
  const Tensor columns = model.forward_columns(b.regions, b.captions, b.lengths, share);  // [B, n_r]
  return transpose(parallel::all_gather_rows(comm, transpose(columns, 0, 1), parallel::GatherBackward::OwnRows), 0, 1);
}

Tensor mscn_pair_scores(models::SgrafModel& model, MetaSim& meta, const Tensor& regions, const Tensor& ids,
                        const Tensor& lengths) {
  const int64_t b = regions.size(0);
  REMATCH_CHECK(ids.size(0) == b && lengths.size(0) == b, "mscn_pair_scores: ", b, " images, ", ids.size(0),
                " captions and ", lengths.size(0), " lengths; pairs need as many of each");
  const Tensor cap_emb = model.encode_captions(ids, lengths);
  const Tensor img_emb = model.encode_images(regions);
  models::SimilarityEncoder& enc = model.sim_enc();
  const models::CaptionSide captions = enc.encode_captions(cap_emb, lengths);
  const models::ImageSide images = enc.encode_images(img_emb);
  const std::vector<int64_t> len = lengths.to_vector<int64_t>();
  std::vector<Tensor> z;
  for (int64_t i = 0; i < b; ++i) {
    models::ImageSide one_image{narrow(images.regions, 0, i, 1), narrow(images.global, 0, i, 1)};
    models::CaptionSide one_caption;
    const int64_t n = len[static_cast<size_t>(i)];
    one_caption.words = narrow(narrow(captions.words, 0, i, 1), 1, 0, n);
    one_caption.lengths = narrow(lengths, 0, i, 1);
    one_caption.word_mask = narrow(narrow(captions.word_mask, 0, i, 1), 1, 0, n);
    one_caption.global = narrow(captions.global, 0, i, 1);
    z.push_back(reshape(enc.vectors(one_image, one_caption), {1, -1}));  // [1, m]
  }
  return reshape(meta.forward(cat(z, 0)), {b});
}

Tensor mscn_warmup_loss(const Tensor& scores, double margin) {
  check_square("mscn_warmup_loss", scores);
  const auto [cost_s, cost_im] = costs(scores, full({1, 1}, margin, scores.dtype(), scores.device()));
  return add(sum(mean(cost_s, {1})), sum(mean(cost_im, {0})));
}

double mscn_adaptive_margin(double alpha, double p) {
  // s = 1 / (1 + (p / (1 − p))^−2) in IEEE arithmetic: p = 1 gives (inf)^−2 = 0, s = 1; p = 0 gives 0^−2 = inf, s = 0.
  const double ratio = p / (1 - p);
  return alpha * (1.0 / (1.0 + std::pow(ratio, -2.0)));
}

Tensor mscn_adaptive_margin_loss(const Tensor& scores, double margin) {
  check_square("mscn_adaptive_margin_loss", scores);
  const int64_t n = scores.size(0);
  const std::vector<double> p = to(to(diagonal_of(scores).detach(), Device::cpu()), DType::Float64).to_vector<double>();
  std::vector<double> m(p.size());
  for (size_t j = 0; j < p.size(); ++j) m[j] = mscn_adaptive_margin(margin, p[j]);
  const Tensor margins = to(to(from_vector(m, {1, n}), scores.dtype()), scores.device());  // column j's margin
  const auto [cost_s, cost_im] = costs(scores, margins);
  return add(sum(max(cost_s, 1).first), sum(max(cost_im, 0).first));
}

Tensor binary_cross_entropy(const Tensor& p, const Tensor& y) {
  REMATCH_CHECK(p.defined() && y.defined() && p.sizes() == y.sizes() && p.numel() > 0,
                "binary_cross_entropy: predictions ", p.defined() ? p.describe() : "undefined", " and targets ",
                y.defined() ? y.describe() : "undefined", " must have one shape");
  const Tensor yt = to(to(y, p.dtype()), p.device());
  const Tensor log_p = clamp_min(log(p), -100.0);
  const Tensor log_q = clamp_min(log(rsub(1.0, p)), -100.0);
  return neg(mean(add(mul(yt, log_p), mul(rsub(1.0, yt), log_q))));
}

Tensor mscn_split_scores(models::SgrafModel& model, MetaSim& meta, const data::PrecompDataset& ds,
                         eval::BlockSize block) {
  return mscn_split_rows(model, meta, ds, 0, ds.num_captions() / ds.captions_per_image(), block);
}

Tensor mscn_split_rows(models::SgrafModel& model, MetaSim& meta, const data::PrecompDataset& ds, int64_t img_begin,
                       int64_t img_end, eval::BlockSize block) {
  const int64_t per_image = ds.captions_per_image();
  const int64_t n_cap = ds.num_captions(), n_img = n_cap / per_image;
  REMATCH_CHECK(0 <= img_begin && img_begin <= img_end && img_end <= n_img && img_begin % block.images == 0,
                "mscn_split_rows: rows [", img_begin, ", ", img_end, ") of ", n_img,
                " images must start on a block of ", block.images);
  model.eval();
  meta.eval();
  const Tensor first = model.parameters().front();
  const DType dtype = first.dtype();
  const Device device = first.device();
  NoGradGuard no_grad;
  std::vector<models::CaptionSide> captions;
  for (int64_t c0 = 0; c0 < n_cap; c0 += block.captions) {
    const auto [ids, lengths] = eval::caption_block(ds, c0, std::min(n_cap, c0 + block.captions));
    captions.push_back(model.sim_enc().encode_captions(model.encode_captions(to(ids, device), lengths), lengths));
  }
  models::ImageSide images;
  int64_t cached_begin = -1;
  auto scorer = [&](int64_t r0, int64_t r1, int64_t c0, int64_t) {
    const int64_t i0 = img_begin + r0, i1 = img_begin + r1;  // the rows' images
    if (i0 != cached_begin) {
      std::vector<int64_t> rows;
      for (int64_t i = i0; i < i1; ++i) rows.push_back(ds.image_index(i * per_image));
      const Tensor regions = ds.images(rows);
      images = model.sim_enc().encode_images(
          model.encode_images(to(regions.dtype() == dtype ? regions : to(regions, dtype), device)));
      cached_begin = i0;
    }
    return squeeze(meta.forward(model.sim_enc().vectors(images, captions[static_cast<size_t>(c0 / block.captions)])), 2);
  };
  return eval::score_blocks(img_end - img_begin, n_cap, scorer, block, dtype);
}

}  // namespace rematch::train
