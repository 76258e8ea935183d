#include "train/methods/mscn/meta_set.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "autograd/autograd.h"
#include "train/data/vocab.h"

namespace rematch::train {

MetaSet::MetaSet(const data::PrecompDataset& source, std::vector<int64_t> clean, const data::PrecompDataset& train,
                 std::vector<int64_t> train_captions)
    : source_(source), train_(train), clean_(std::move(clean)), train_captions_(std::move(train_captions)) {
  if (clean_.empty()) {
    clean_.resize(static_cast<size_t>(source_.num_captions()));
    std::iota(clean_.begin(), clean_.end(), 0);
  }
  if (train_captions_.empty()) {
    train_captions_.resize(static_cast<size_t>(train_.num_captions()));
    std::iota(train_captions_.begin(), train_captions_.end(), 0);
  }
  for (int64_t j : clean_)
    REMATCH_CHECK(j >= 0 && j < source_.num_captions(), "mscn meta set: caption ", j, " outside ",
                  source_.captions_path(), " (", source_.num_captions(), " captions)");
  std::set<int64_t> rows;
  for (int64_t j : train_captions_) {
    REMATCH_CHECK(j >= 0 && j < train_.num_captions(), "mscn meta set: training caption ", j, " outside ",
                  train_.captions_path());
    rows.insert(train_.image_index(j));
  }
  train_images_.assign(rows.begin(), rows.end());
  REMATCH_CHECK(static_cast<int64_t>(train_captions_.size()) >= num_clean(), "mscn meta set: ", num_clean(),
                " clean meta pairs need as many training captions for their non-correspondences "
                "(`get_add_non_correspondence_idx` draws without replacement); the training split has ",
                train_captions_.size(), ". Use a smaller --meta_size or meta split");
  REMATCH_CHECK(train_images_.size() >= 2, "mscn meta set: the training split has ", train_images_.size(),
                " image(s); a non-correspondence needs an image other than the caption's own");
}

void MetaSet::draw_non_correspondences(Generator& gen) {
  const int64_t n = num_clean();
  // `rand_caption_idx = np.random.choice(add_caption_idx, len(captions), replace=False)`
  const std::vector<int64_t> perm =
      randperm(static_cast<int64_t>(train_captions_.size()), Device::cpu(), &gen).to_vector<int64_t>();
  std::vector<int64_t> captions(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) captions[static_cast<size_t>(i)] = train_captions_[static_cast<size_t>(perm[static_cast<size_t>(i)])];
  // `nocor_rand_t2i_idx = np.random.choice(add_image_idx, len(captions), replace=True)` until no caption's own image
  // is drawn.
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const std::vector<int64_t> pick =
        randint(0, static_cast<int64_t>(train_images_.size()), {n}, DType::Int64, Device::cpu(), &gen).to_vector<int64_t>();
    bool hit = false;
    std::vector<int64_t> images(static_cast<size_t>(n));
    for (int64_t i = 0; i < n && !hit; ++i) {
      images[static_cast<size_t>(i)] = train_images_[static_cast<size_t>(pick[static_cast<size_t>(i)])];
      hit = images[static_cast<size_t>(i)] == train_.image_index(captions[static_cast<size_t>(i)]);
    }
    if (hit) continue;
    noise_captions_ = std::move(captions);
    noise_images_ = std::move(images);
    return;
  }
  REMATCH_FAIL("mscn meta set: 10000 draws of ", n, " non-correspondences over ", train_images_.size(),
               " training images each gave some caption its own image; the training split has too few images for ",
               "this meta set (use a smaller --meta_size or meta split)");
}

void MetaSet::set_non_correspondences(std::vector<int64_t> captions, std::vector<int64_t> images) {
  REMATCH_CHECK(static_cast<int64_t>(captions.size()) == num_clean() && images.size() == captions.size(),
                "mscn meta set: a draw of ", captions.size(), " captions and ", images.size(), " images for ",
                num_clean(), " clean pairs");
  for (size_t i = 0; i < captions.size(); ++i) {
    REMATCH_CHECK(captions[i] >= 0 && captions[i] < train_.num_captions() && images[i] >= 0 &&
                      images[i] < train_.features().size(0),
                  "mscn meta set: drawn pair ", i, " (caption ", captions[i], ", image ", images[i],
                  ") outside the training split");
    REMATCH_CHECK(images[i] != train_.image_index(captions[i]), "mscn meta set: drawn pair ", i, " gives caption ",
                  captions[i], " its own image ", images[i]);
  }
  noise_captions_ = std::move(captions);
  noise_images_ = std::move(images);
}

MetaBatch MetaSet::batch(const std::vector<int64_t>& items, DType dtype, Device device) const {
  REMATCH_CHECK(!items.empty(), "mscn meta set: an empty batch");
  REMATCH_CHECK(noise_captions_.size() == clean_.size(), "mscn meta set: no non-correspondences drawn yet");
  std::vector<Tensor> regions;
  std::vector<std::vector<int64_t>> ids;
  std::vector<double> labels;
  int64_t longest = 0;
  for (int64_t item : items) {
    REMATCH_CHECK(item >= 0 && item < size(), "mscn meta set: item ", item, " outside 0..", size() - 1);
    const bool clean = item < num_clean();
    const size_t k = static_cast<size_t>(clean ? item : item - num_clean());
    const data::PrecompDataset& ds = clean ? source_ : train_;
    const int64_t caption = clean ? clean_[k] : noise_captions_[k];
    const int64_t row = clean ? source_.image_index(caption) : noise_images_[k];
    regions.push_back(ds.image(row));
    ids.push_back(ds.caption_vector(caption));
    longest = std::max(longest, static_cast<int64_t>(ids.back().size()));
    labels.push_back(label(item));
  }
  const int64_t b = static_cast<int64_t>(items.size());
  std::vector<int64_t> padded(static_cast<size_t>(b * longest), data::Vocabulary::kPad), lengths;
  for (int64_t i = 0; i < b; ++i) {
    const std::vector<int64_t>& v = ids[static_cast<size_t>(i)];
    std::copy(v.begin(), v.end(), padded.begin() + i * longest);
    lengths.push_back(static_cast<int64_t>(v.size()));
  }
  MetaBatch m;
  NoGradGuard no_grad;
  m.regions = to(to(stack(regions, 0), dtype), device);
  m.captions = to(from_vector(padded, {b, longest}), device);
  m.lengths = from_vector(lengths);
  m.labels = to(to(from_vector(labels, {b}), dtype), device);
  return m;
}

std::vector<std::vector<int64_t>> MetaSet::pass(Generator& gen, int64_t batch_size) const {
  REMATCH_CHECK(batch_size >= 1, "mscn meta set: batch size ", batch_size);
  const std::vector<int64_t> order = randperm(size(), Device::cpu(), &gen).to_vector<int64_t>();
  std::vector<std::vector<int64_t>> batches;
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(batch_size))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + static_cast<size_t>(batch_size))));
  return batches;
}

}  // namespace rematch::train
