// Mini-batches of a precomp data set: region features, padded caption ids and their lengths, for a seeded
// shuffle of the captions. The order of an epoch depends only on (seed, epoch), so a resumed run sees exactly the
// batches the interrupted one would have.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"
#include "train/data/precomp_dataset.h"

namespace rematch::data {

struct Batch {
  Tensor regions;        // [B, R, D] float32: the image each caption is paired with
  Tensor captions;       // [B, L] int64: <start> ... <end>, then <pad> (0) up to the longest caption
  Tensor lengths;        // [B] int64: tokens of each caption, markers included
  Tensor caption_index;  // [B] int64: caption indices into the data set
  Tensor image_index;    // [B] int64: the image row used for each caption (noisy when the pairing is)
  int64_t size() const { return lengths.defined() ? lengths.size(0) : 0; }
};

struct BatcherOptions {
  int64_t batch_size = 128;
  bool shuffle = true;
  bool drop_last = false;
  // Length bucketing: when > 0, every run of bucket_pool·batch_size shuffled captions is sorted by length before
  // it is cut into batches (less padding), and the batches are then shuffled. 0 = off.
  int64_t bucket_pool = 0;
  // Order each batch by decreasing caption length, as the repositories' collate_fn does: the order of captions
  // inside a batch matters for SAF's per-caption sequential BatchNorm updates.
  bool sort_within_batch = true;
  uint64_t seed = 0;
};

class Batcher {
 public:
  // caption_to_row[j]: the image row caption j is paired with (empty = the clean j / im_div); `captions`: the
  // captions to draw batches from (empty = all). Rows and captions out of range are an Error. `data` is held by
  // reference and must outlive the Batcher.
  Batcher(const PrecompDataset& data, const BatcherOptions& options, std::vector<int64_t> caption_to_row = {},
          std::vector<int64_t> captions = {});

  int64_t num_batches() const;
  // The caption indices of every batch of `epoch`, in order.
  std::vector<std::vector<int64_t>> epoch_plan(int64_t epoch) const;
  // The tensors of one batch of caption indices.
  Batch make_batch(std::vector<int64_t> captions) const;

 private:
  const PrecompDataset& data_;
  BatcherOptions options_;
  std::vector<int64_t> caption_to_row_;
  std::vector<int64_t> captions_;
};

}  // namespace rematch::data
