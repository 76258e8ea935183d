// MSCN's meta set (`MSCN/data.py: PrecompDataset_meta_C`, docs/methods/mscn.md §4): N clean pairs (caption j of
// the meta source with its own image, label 1) and N non-correspondences (label 0) drawn afresh from the training
// split at the start of every training pass of a net (`get_add_non_correspondence_idx`): N training captions
// without replacement, each with a training image drawn with replacement, the whole draw repeated until no caption
// got its own (clean) image. Items 0..N−1 are the clean pairs, N..2N−1 the drawn ones, as the code's indices.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"
#include "train/data/precomp_dataset.h"

namespace rematch::train {

struct MetaBatch {
  Tensor regions;  // [B, R, D] in the requested dtype, on the requested device
  Tensor captions;  // [B, L] int64, padded with <pad> = 0
  Tensor lengths;   // [B] int64 (host)
  Tensor labels;    // [B] 1 for a clean pair, 0 for a drawn non-correspondence (requested dtype and device)
  int64_t size() const { return lengths.defined() ? lengths.size(0) : 0; }
};

class MetaSet {
 public:
  // `source`'s captions `clean` (all when empty) are the clean pairs; `train` and its `train_captions` (the
  // captions left for training; all when empty) give the non-correspondences. Both data sets must outlive this.
  MetaSet(const data::PrecompDataset& source, std::vector<int64_t> clean, const data::PrecompDataset& train,
          std::vector<int64_t> train_captions = {});

  int64_t num_clean() const { return static_cast<int64_t>(clean_.size()); }
  int64_t size() const { return 2 * num_clean(); }
  // A fresh draw of the non-correspondences from `gen` (an Error after 10,000 draws that all hit a clean pair:
  // too few training images).
  void draw_non_correspondences(Generator& gen);
  // A given draw (the golden-step test replays the official code's): N training captions and N image rows, no
  // caption with its own image.
  void set_non_correspondences(std::vector<int64_t> captions, std::vector<int64_t> images);
  const std::vector<int64_t>& noise_captions() const { return noise_captions_; }
  const std::vector<int64_t>& noise_images() const { return noise_images_; }
  double label(int64_t item) const { return item < num_clean() ? 1.0 : 0.0; }
  // The items in `items`' order.
  MetaBatch batch(const std::vector<int64_t>& items, DType dtype, Device device) const;
  // One shuffled pass over the 2N items from `gen`, cut into batches of `batch_size` (the last one partial).
  std::vector<std::vector<int64_t>> pass(Generator& gen, int64_t batch_size) const;

 private:
  const data::PrecompDataset& source_;
  const data::PrecompDataset& train_;
  std::vector<int64_t> clean_, train_captions_, train_images_;
  std::vector<int64_t> noise_captions_, noise_images_;
};

}  // namespace rematch::train
