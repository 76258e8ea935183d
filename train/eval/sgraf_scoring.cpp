#include "train/eval/sgraf_scoring.h"

#include <algorithm>

#include "autograd/autograd.h"

namespace rematch::eval {

std::pair<Tensor, Tensor> caption_block(const data::PrecompDataset& ds, int64_t begin, int64_t end) {
  REMATCH_CHECK(begin >= 0 && begin < end && end <= ds.num_captions(), "caption_block: captions [", begin, ", ",
                end, ") outside the split's ", ds.num_captions());
  std::vector<int64_t> lengths;
  for (int64_t j = begin; j < end; ++j) lengths.push_back(ds.caption_length(j));
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> ids(static_cast<size_t>((end - begin) * longest), data::Vocabulary::kPad);
  for (int64_t j = begin; j < end; ++j)
    std::copy(ds.caption_ids(j), ds.caption_ids(j) + ds.caption_length(j), ids.begin() + (j - begin) * longest);
  return {from_vector(ids, {end - begin, longest}), from_vector(lengths)};
}

Tensor score_precomp_split(const std::vector<models::SgrafModel*>& nets, const data::PrecompDataset& ds,
                           BlockSize block, const BlockProgress& progress) {
  return score_precomp_rows(nets, ds, 0, ds.num_captions() / ds.captions_per_image(), block, progress);
}

Tensor score_precomp_rows(const std::vector<models::SgrafModel*>& nets, const data::PrecompDataset& ds,
                          int64_t img_begin, int64_t img_end, BlockSize block, const BlockProgress& progress) {
  REMATCH_CHECK(!nets.empty(), "score_precomp_split: no model");
  const int64_t per_image = ds.captions_per_image();
  const int64_t n_cap = ds.num_captions(), n_img = n_cap / per_image;
  REMATCH_CHECK(0 <= img_begin && img_begin <= img_end && img_end <= n_img && img_begin % block.images == 0,
                "score_precomp_rows: rows [", img_begin, ", ", img_end, ") of ", n_img,
                " images must start on a block of ", block.images);
  for (models::SgrafModel* net : nets) net->eval();
  auto device_of = [](models::SgrafModel* net) { return net->parameters().front().device(); };
  // The regions in the models' dtype (float64 in the golden-step and float64 data-parallel tests), the scores too.
  const DType dtype = nets.front()->parameters().front().dtype();

  NoGradGuard no_grad;
  std::vector<std::vector<models::CaptionSide>> captions(nets.size());
  for (int64_t c0 = 0; c0 < n_cap; c0 += block.captions) {
    const auto [ids, lengths] = caption_block(ds, c0, std::min(n_cap, c0 + block.captions));
    for (size_t m = 0; m < nets.size(); ++m)
      captions[m].push_back(nets[m]->sim_enc().encode_captions(
          nets[m]->encode_captions(to(ids, device_of(nets[m])), lengths), lengths));
  }
  std::vector<models::ImageSide> images(nets.size());
  int64_t cached_begin = -1;
  auto scorer = [&](int64_t r0, int64_t r1, int64_t c0, int64_t /*c1: the block's end, known from c0*/) {
    const int64_t i0 = img_begin + r0, i1 = img_begin + r1;  // the rows' images
    if (i0 != cached_begin) {
      // Distinct image i is the row of its first caption (F30K dev/test repeat each image 5 times).
      std::vector<int64_t> rows;
      for (int64_t i = i0; i < i1; ++i) rows.push_back(ds.image_index(i * per_image));
      const Tensor regions = ds.images(rows);
      for (size_t m = 0; m < nets.size(); ++m)
        images[m] = nets[m]->sim_enc().encode_images(
            nets[m]->encode_images(to(regions.dtype() == dtype ? regions : to(regions, dtype), device_of(nets[m]))));
      cached_begin = i0;
    }
    std::vector<Tensor> scores;
    for (size_t m = 0; m < nets.size(); ++m)
      scores.push_back(nets[m]->sim_enc().scores(images[m], captions[m][c0 / block.captions]));
    return models::average_scores(scores);
  };
  return score_blocks(img_end - img_begin, n_cap, scorer, block, dtype, progress);
}

}  // namespace rematch::eval
