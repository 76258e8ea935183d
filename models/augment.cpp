#include "models/augment.h"

#include <algorithm>

namespace rematch::models {
namespace {

void check_probability(double p, const char* what) {
  REMATCH_CHECK(p >= 0 && p < 1, "augment: ", what, " must be in [0, 1), got ", p);
}

std::vector<int64_t> lengths_or_full(const Tensor& lengths, int64_t batch, int64_t full, const char* who) {
  if (!lengths.defined()) return std::vector<int64_t>(static_cast<size_t>(batch), full);
  REMATCH_CHECK(lengths.dtype() == DType::Int64 && lengths.dim() == 1 && lengths.size(0) == batch, who,
                ": lengths must be int64 [", batch, "], got ", lengths.describe());
  std::vector<int64_t> v = lengths.to_vector<int64_t>();
  for (size_t b = 0; b < v.size(); ++b)
    REMATCH_CHECK(v[b] >= 0 && v[b] <= full, who, ": lengths[", b, "] = ", v[b], " is out of range 0..", full);
  return v;
}

}  // namespace

Tensor augment_regions(const Tensor& regions, Generator& gen, const AugmentOptions& options) {
  check_probability(options.region_drop, "region_drop");
  REMATCH_CHECK(regions.defined() && regions.dim() == 2, "augment_regions: regions must be [R, D], got ",
                regions.defined() ? regions.describe() : "undefined");
  const int64_t R = regions.size(0);
  if (R < 2) return regions;
  std::vector<int64_t> kept;
  // data.py: image[np.where(rand_list > ag)], drawn again while <= 1 region survives.
  while (kept.size() <= 1) {
    kept.clear();
    const std::vector<double> u = rand({R}, DType::Float64, Device::cpu(), &gen).to_vector<double>();
    for (int64_t r = 0; r < R; ++r)
      if (u[static_cast<size_t>(r)] > options.region_drop) kept.push_back(r);
  }
  return kernels::index_select(regions, 0, from_vector(kept, {}, regions.device()));
}

std::vector<int64_t> augment_caption(const std::vector<int64_t>& ids, int64_t vocab_size, int64_t mask_id,
                                     Generator& gen, const AugmentOptions& options) {
  check_probability(options.token_alter, "token_alter");
  REMATCH_CHECK(vocab_size > 0 && mask_id >= 0 && mask_id < vocab_size, "augment_caption: mask id ", mask_id,
                " must be a vocabulary id (vocabulary size ", vocab_size, ")");
  const int64_t L = static_cast<int64_t>(ids.size());
  if (L == 0) return ids;
  const double p = options.token_alter;
  std::vector<int64_t> out;
  while (out.empty()) {
    const std::vector<double> u = rand({L}, DType::Float64, Device::cpu(), &gen).to_vector<double>();
    const std::vector<int64_t> random_ids = randint(0, vocab_size, {L}, DType::Int64, Device::cpu(), &gen)
                                                .to_vector<int64_t>();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (u[i] >= p) {
        out.push_back(ids[i]);
        continue;
      }
      // data.py process_caption: prob /= ag; < 0.5 mask, < 0.8 random token, else delete.
      const double v = u[i] / p;
      if (v < 0.5) {
        out.push_back(mask_id);
      } else if (v < 0.8) {
        out.push_back(random_ids[i]);
      }
    }
  }
  return out;
}

PaddedBatch augment_region_batch(const Tensor& images, const Tensor& lengths, Generator& gen,
                                 const AugmentOptions& options) {
  REMATCH_CHECK(images.defined() && images.dim() == 3, "augment_region_batch: images must be [B, R, D], got ",
                images.defined() ? images.describe() : "undefined");
  const int64_t B = images.size(0), D = images.size(2);
  REMATCH_CHECK(B >= 1, "augment_region_batch: empty batch ", images.describe());
  const std::vector<int64_t> counts = lengths_or_full(lengths, B, images.size(1), "augment_region_batch");
  std::vector<Tensor> kept(static_cast<size_t>(B));
  std::vector<int64_t> new_lengths(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const size_t i = static_cast<size_t>(b);
    kept[i] = augment_regions(kernels::narrow(kernels::select(images, 0, b), 0, 0, counts[i]), gen, options);
    new_lengths[i] = kept[i].size(0);
  }
  const int64_t T = std::max<int64_t>(1, *std::max_element(new_lengths.begin(), new_lengths.end()));
  Tensor data = zeros({B, T, D}, images.dtype(), images.device());
  for (int64_t b = 0; b < B; ++b) {
    const Tensor& rows = kept[static_cast<size_t>(b)];
    if (rows.size(0) > 0) kernels::copy_(kernels::narrow(kernels::select(data, 0, b), 0, 0, rows.size(0)), rows);
  }
  return {data, from_vector(new_lengths)};
}

PaddedBatch augment_caption_batch(const Tensor& ids, const Tensor& lengths, int64_t vocab_size, int64_t mask_id,
                                  Generator& gen, const AugmentOptions& options) {
  REMATCH_CHECK(ids.defined() && ids.dtype() == DType::Int64 && ids.dim() == 2,
                "augment_caption_batch: ids must be int64 [B, L], got ", ids.defined() ? ids.describe() : "undefined");
  REMATCH_CHECK(lengths.defined(), "augment_caption_batch: lengths is undefined");
  const int64_t B = ids.size(0), L = ids.size(1);
  REMATCH_CHECK(B >= 1, "augment_caption_batch: empty batch ", ids.describe());
  const std::vector<int64_t> counts = lengths_or_full(lengths, B, L, "augment_caption_batch");
  const std::vector<int64_t> all = kernels::contiguous(kernels::to_device(ids, Device::cpu())).to_vector<int64_t>();
  std::vector<std::vector<int64_t>> captions(static_cast<size_t>(B));
  std::vector<int64_t> new_lengths(static_cast<size_t>(B));
  for (size_t b = 0; b < captions.size(); ++b) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(b) * L;
    captions[b] = augment_caption(std::vector<int64_t>(first, first + counts[b]), vocab_size, mask_id, gen, options);
    new_lengths[b] = static_cast<int64_t>(captions[b].size());
  }
  const int64_t T = std::max<int64_t>(1, *std::max_element(new_lengths.begin(), new_lengths.end()));
  std::vector<int64_t> padded(static_cast<size_t>(B * T), 0);
  for (size_t b = 0; b < captions.size(); ++b)
    std::copy(captions[b].begin(), captions[b].end(), padded.begin() + static_cast<std::ptrdiff_t>(b) * T);
  return {from_vector(padded, {B, T}, ids.device()), from_vector(new_lengths)};
}

}  // namespace rematch::models
