#include "train/data/semi_paired.h"

#include <sstream>

#include "tensor/tensor.h"

namespace rematch::data {

SemiPairedSplit semi_paired_split(int64_t num_images, int64_t im_div, int64_t paired_length, uint64_t seed) {
  REMATCH_CHECK(num_images >= 0 && (im_div == 1 || im_div == 5), "semi_paired_split: need num_images >= 0 and ",
                "im_div 1 or 5, got ", num_images, " and ", im_div);
  REMATCH_CHECK(paired_length >= 0 && paired_length <= num_images, "semi_paired_split: paired_length ",
                paired_length, " is outside [0, ", num_images, "] images");
  Generator gen(seed);
  const std::vector<int64_t> order = randperm(num_images, Device::cpu(), &gen).to_vector<int64_t>();
  const int64_t n_unpaired = num_images - paired_length;
  const std::vector<int64_t> shuffle = randperm(n_unpaired, Device::cpu(), &gen).to_vector<int64_t>();

  // shuffle_inx = arange; unpaired = order[paired_length:]; shuffle_inx[unpaired] = shuffled(unpaired).
  std::vector<int64_t> image_row(static_cast<size_t>(num_images));
  for (int64_t i = 0; i < num_images; ++i) image_row[i] = i;
  for (int64_t k = 0; k < n_unpaired; ++k) image_row[order[paired_length + k]] = order[paired_length + shuffle[k]];

  SemiPairedSplit s;
  s.paired_images.assign(order.begin(), order.begin() + paired_length);
  Correspondence& c = s.correspondence;
  c.num_images = num_images;
  c.im_div = im_div;
  std::ostringstream source;
  source << "semi-paired paired_length=" << paired_length << " seed=" << seed;
  c.source = source.str();
  const int64_t n_cap = num_images * im_div;
  c.caption_to_row.resize(static_cast<size_t>(n_cap));
  c.clean.resize(static_cast<size_t>(n_cap));
  for (int64_t j = 0; j < n_cap; ++j) {
    c.caption_to_row[j] = image_row[j / im_div];
    c.clean[j] = c.caption_to_row[j] == j / im_div;
    (c.clean[j] ? s.paired_captions : s.unpaired_captions).push_back(j);
  }
  return s;
}

}  // namespace rematch::data
