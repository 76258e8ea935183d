#include "train/data/batcher.h"

#include <algorithm>

namespace rematch::data {

namespace {

// Each epoch draws from its own stretch of the seed's Philox stream: 2^40 counters apart, far more than the
// few permutations of an epoch use, so epochs never share random numbers and any epoch can be replayed alone.
constexpr int kEpochOffsetBits = 40;

}  // namespace

Batcher::Batcher(const PrecompDataset& data, const BatcherOptions& options, std::vector<int64_t> caption_to_row,
                 std::vector<int64_t> captions)
    : data_(data), options_(options), caption_to_row_(std::move(caption_to_row)), captions_(std::move(captions)) {
  REMATCH_CHECK(options_.batch_size > 0 && options_.bucket_pool >= 0, "Batcher: batch_size must be positive and ",
                "bucket_pool non-negative, got ", options_.batch_size, " and ", options_.bucket_pool);
  const int64_t n_cap = data_.num_captions();
  if (caption_to_row_.empty()) {
    caption_to_row_.resize(static_cast<size_t>(n_cap));
    for (int64_t j = 0; j < n_cap; ++j) caption_to_row_[j] = data_.image_index(j);
  }
  REMATCH_CHECK(static_cast<int64_t>(caption_to_row_.size()) == n_cap, "Batcher: caption_to_row has ",
                caption_to_row_.size(), " entries for ", n_cap, " captions of '", data_.captions_path(), "'");
  const int64_t rows = data_.features().size(0);
  for (size_t j = 0; j < caption_to_row_.size(); ++j)
    REMATCH_CHECK(caption_to_row_[j] >= 0 && caption_to_row_[j] < rows, "Batcher: caption ", j,
                  " is paired with image row ", caption_to_row_[j], ", outside [0, ", rows, ") of '",
                  data_.images_path(), "'");
  if (captions_.empty()) {
    captions_.resize(static_cast<size_t>(n_cap));
    for (int64_t j = 0; j < n_cap; ++j) captions_[j] = j;
  }
  for (int64_t j : captions_)
    REMATCH_CHECK(j >= 0 && j < n_cap, "Batcher: caption index ", j, " is outside [0, ", n_cap, ")");
}

int64_t Batcher::num_batches() const {
  const int64_t n = static_cast<int64_t>(captions_.size()), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<std::vector<int64_t>> Batcher::epoch_plan(int64_t epoch) const {
  REMATCH_CHECK(epoch >= 0, "Batcher: epoch must be non-negative, got ", epoch);
  Generator gen(options_.seed);
  gen.set_state({options_.seed, static_cast<uint64_t>(epoch) << kEpochOffsetBits});
  const int64_t n = static_cast<int64_t>(captions_.size()), b = options_.batch_size;
  std::vector<int64_t> order = captions_;
  if (options_.shuffle) {
    const std::vector<int64_t> perm = randperm(n, Device::cpu(), &gen).to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) order[i] = captions_[perm[i]];
  }
  if (options_.drop_last) order.resize(static_cast<size_t>(n / b * b));
  if (options_.bucket_pool > 0) {
    const int64_t pool = options_.bucket_pool * b;
    for (size_t start = 0; start < order.size(); start += static_cast<size_t>(pool)) {
      const auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
      const auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + pool));
      std::stable_sort(first, last, [&](int64_t x, int64_t y) {
        return data_.caption_length(x) > data_.caption_length(y);
      });
    }
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(b))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + b)));
  if (options_.shuffle && options_.bucket_pool > 0) {
    // Sorted pools would otherwise hand out long captions first and short ones last in every pool.
    const std::vector<int64_t> perm =
        randperm(static_cast<int64_t>(batches.size()), Device::cpu(), &gen).to_vector<int64_t>();
    std::vector<std::vector<int64_t>> shuffled;
    shuffled.reserve(batches.size());
    for (int64_t p : perm) shuffled.push_back(std::move(batches[p]));
    batches = std::move(shuffled);
  }
  return batches;
}

Batch Batcher::make_batch(std::vector<int64_t> captions) const {
  REMATCH_CHECK(!captions.empty(), "Batcher: a batch needs at least one caption");
  const int64_t n_cap = data_.num_captions();
  for (int64_t j : captions)
    REMATCH_CHECK(j >= 0 && j < n_cap, "Batcher: caption index ", j, " is outside [0, ", n_cap, ")");
  if (options_.sort_within_batch)
    std::stable_sort(captions.begin(), captions.end(),
                     [&](int64_t x, int64_t y) { return data_.caption_length(x) > data_.caption_length(y); });
  const int64_t batch = static_cast<int64_t>(captions.size());
  std::vector<int64_t> rows(captions.size()), lengths(captions.size());
  int64_t max_len = 0;
  for (int64_t i = 0; i < batch; ++i) {
    rows[i] = caption_to_row_[captions[i]];
    lengths[i] = data_.caption_length(captions[i]);
    max_len = std::max(max_len, lengths[i]);
  }
  Batch out;
  out.regions = data_.images(rows);
  out.captions = zeros({batch, max_len}, DType::Int64);  // 0 is <pad>
  int64_t* ids = out.captions.data<int64_t>();
  for (int64_t i = 0; i < batch; ++i) std::copy_n(data_.caption_ids(captions[i]), lengths[i], ids + i * max_len);
  out.lengths = from_vector(lengths);
  out.caption_index = from_vector(captions);
  out.image_index = from_vector(rows);
  return out;
}

}  // namespace rematch::data
