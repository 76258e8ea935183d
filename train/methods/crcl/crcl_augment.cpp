#include "train/methods/crcl/crcl_augment.h"

#include <algorithm>
#include <numeric>

#include "tensor/creation.h"
#include "tensor/error.h"
#include "tensor/kernels.h"

namespace rematch::train {
namespace {

constexpr double kAlter = 0.2;         // data.py: prob < 0.20 (caption), rand_list < 0.20 (regions)
constexpr double kMasked = 0.5;        // prob < 0.5: <mask>
constexpr double kReplaced = 0.6;      // prob < 0.6: a random token; otherwise deleted
constexpr float kDroppedValue = 1e-10f;  // process_image_2: image[...] = 1e-10

}  // namespace

Tensor crcl_augment_regions(const Tensor& regions, Generator& gen) {
  REMATCH_CHECK(regions.defined() && regions.dim() == 3 && regions.device().is_cpu() &&
                    regions.dtype() == DType::Float32,
                "crcl_augment_regions: regions must be float32 [B, R, D] on the CPU, got ",
                regions.defined() ? regions.describe() : "undefined");
  const int64_t B = regions.size(0), R = regions.size(1), D = regions.size(2);
  std::vector<float> v = kernels::contiguous(regions).to_vector<float>();
  const std::vector<double> u = rand({B, R}, DType::Float64, Device::cpu(), &gen).to_vector<double>();
  for (int64_t i = 0; i < B * R; ++i)
    if (u[static_cast<size_t>(i)] < kAlter)
      std::fill_n(v.begin() + i * D, D, kDroppedValue);
  return from_vector(v, {B, R, D});
}

std::vector<int64_t> crcl_augment_caption(const std::vector<int64_t>& ids, int64_t vocab_size, int64_t mask_id,
                                          Generator& gen) {
  REMATCH_CHECK(vocab_size > 0 && mask_id >= 0 && mask_id < vocab_size, "crcl_augment_caption: mask id ", mask_id,
                " must be a vocabulary id (vocabulary size ", vocab_size, ")");
  const int64_t L = static_cast<int64_t>(ids.size());
  if (L == 0) return ids;
  std::vector<int64_t> out;
  while (out.empty()) {
    const std::vector<double> u = rand({L}, DType::Float64, Device::cpu(), &gen).to_vector<double>();
    const std::vector<int64_t> random_ids =
        randint(0, vocab_size, {L}, DType::Int64, Device::cpu(), &gen).to_vector<int64_t>();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (u[i] >= kAlter) {
        out.push_back(ids[i]);
        continue;
      }
      const double v = u[i] / kAlter;
      if (v < kMasked) {
        out.push_back(mask_id);
      } else if (v < kReplaced) {
        out.push_back(random_ids[i]);
      }  // else: deleted
    }
  }
  return out;
}

data::Batch crcl_augment_batch(const data::Batch& b, int64_t vocab_size, int64_t mask_id, Generator& gen) {
  const int64_t B = b.size();
  REMATCH_CHECK(B >= 1 && b.captions.device().is_cpu(), "crcl_augment_batch: a non-empty CPU batch is needed");
  const Tensor regions = crcl_augment_regions(b.regions, gen);
  const int64_t L = b.captions.size(1);
  const std::vector<int64_t> ids = kernels::contiguous(b.captions).to_vector<int64_t>();
  const std::vector<int64_t> lengths = b.lengths.to_vector<int64_t>();
  std::vector<std::vector<int64_t>> caps(static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) {
    const auto first = ids.begin() + i * L;
    caps[static_cast<size_t>(i)] =
        crcl_augment_caption(std::vector<int64_t>(first, first + lengths[static_cast<size_t>(i)]), vocab_size,
                             mask_id, gen);
  }
  std::vector<int64_t> order(static_cast<size_t>(B));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t c) { return caps[static_cast<size_t>(a)].size() > caps[static_cast<size_t>(c)].size(); });
  const int64_t L_new = static_cast<int64_t>(caps[static_cast<size_t>(order[0])].size());
  std::vector<int64_t> padded(static_cast<size_t>(B * L_new), 0), new_lengths(static_cast<size_t>(B));
  for (int64_t k = 0; k < B; ++k) {
    const std::vector<int64_t>& c = caps[static_cast<size_t>(order[static_cast<size_t>(k)])];
    std::copy(c.begin(), c.end(), padded.begin() + k * L_new);
    new_lengths[static_cast<size_t>(k)] = static_cast<int64_t>(c.size());
  }
  const Tensor index = from_vector(order, {B});
  data::Batch out;
  out.regions = kernels::index_select(regions, 0, index);
  out.captions = from_vector(padded, {B, L_new});
  out.lengths = from_vector(new_lengths, {B});
  out.caption_index = kernels::index_select(b.caption_index, 0, index);
  out.image_index = kernels::index_select(b.image_index, 0, index);
  return out;
}

}  // namespace rematch::train
