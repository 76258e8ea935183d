#include "train/synth/pairs_world.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tensor/file_io.h"
#include "train/data/vocab.h"
#include "train/synth/scene_pictures.h"

namespace rematch::synth {
namespace {

// Philox counter range of split s starts at (s + 1) · 2^40; the prototypes use the range from 0. A split
// would need 2^40 draws to reach the next range.
constexpr uint64_t kSplitCounterStride = uint64_t{1} << 40;

// A region slot: an instance (object row, attribute row of the prototype table) or background (row, -1).
struct Slot {
  int64_t first = 0;
  int64_t second = -1;
};

Scene random_scene(const PairsWorldConfig& c, RandomStream& rs) {
  const int64_t k = std::min({2 + rs.below(4), c.regions, c.concepts});
  const std::vector<int64_t> objects = rs.distinct(k, c.concepts);
  std::vector<int64_t> attrs;
  if (c.attributes >= k) {
    attrs = rs.distinct(k, c.attributes);
  } else {
    for (int64_t i = 0; i < k; ++i) attrs.push_back(rs.below(c.attributes));
  }
  Scene s;
  for (int64_t i = 0; i < k; ++i) s.objects.push_back({objects[i], attrs[i]});
  return s;
}

// The same objects with the attributes rotated along a random cycle, so (with distinct attributes) every
// instance changes attribute and the bag of concepts stays the same.
Scene twin_scene(const Scene& a, int64_t index_of_a, RandomStream& rs) {
  const int64_t k = static_cast<int64_t>(a.objects.size());
  std::vector<int64_t> order = rs.distinct(k, k);
  Scene b = a;
  for (int64_t j = 0; j < k; ++j) b.objects[order[j]].attribute = a.objects[order[(j + 1) % k]].attribute;
  b.twin_of = index_of_a;
  return b;
}

std::vector<Slot> region_slots(const PairsWorldConfig& c, const Scene& s, RandomStream& rs) {
  std::vector<Slot> slots;
  for (const auto& o : s.objects) slots.push_back({o.object, c.concepts + o.attribute});
  // A large object often shows up in two detector boxes; the second box of an instance repeats its binding.
  for (const auto& o : s.objects)
    if (static_cast<int64_t>(slots.size()) < c.regions && rs.bernoulli(0.5))
      slots.push_back({o.object, c.concepts + o.attribute});
  while (static_cast<int64_t>(slots.size()) < c.regions)
    slots.push_back({c.concepts + c.attributes + rs.below(kBackgroundConcepts), -1});
  rs.shuffle(slots);
  return slots;
}

PairsSplit make_split(const PairsWorldConfig& c, const Tensor& prototypes, const std::string& name, int64_t n,
                      int split_index) {
  Generator gen(c.seed);
  gen.set_state({c.seed, (static_cast<uint64_t>(split_index) + 1) * kSplitCounterStride});
  RandomStream rs(gen);
  PairsSplit split;
  split.name = name;
  // A twin pair starts with probability q, so the share of images in pairs is 2q / (1 + q) = twin_fraction.
  const double q = c.twin_fraction / (2.0 - c.twin_fraction);
  while (static_cast<int64_t>(split.scenes.size()) < n) {
    split.scenes.push_back(random_scene(c, rs));
    const int64_t i = static_cast<int64_t>(split.scenes.size()) - 1;
    if (i + 1 < n && rs.bernoulli(q)) split.scenes.push_back(twin_scene(split.scenes[i], i, rs));
  }
  for (const auto& s : split.scenes)
    for (int64_t j = 0; j < kCaptionsPerImage; ++j) split.captions.push_back(make_caption(s.objects, rs));

  const int64_t R = c.regions, D = c.feature_dim;
  split.images = randn({n, R, D}, DType::Float32, Device::cpu(), &gen);
  float* x = split.images.data<float>();
  const float* p = prototypes.data<float>();
  const float sigma = static_cast<float>(c.feature_noise);
  const float inv_sqrt2 = static_cast<float>(1.0 / std::sqrt(2.0));
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<Slot> slots = region_slots(c, split.scenes[i], rs);
    for (int64_t r = 0; r < R; ++r) {
      float* f = x + (i * R + r) * D;
      const float* a = p + slots[r].first * D;
      if (slots[r].second < 0) {
        for (int64_t d = 0; d < D; ++d) f[d] = a[d] + sigma * f[d];
      } else {
        const float* b = p + slots[r].second * D;
        for (int64_t d = 0; d < D; ++d) f[d] = (a[d] + b[d]) * inv_sqrt2 + sigma * f[d];
      }
    }
  }
  return split;
}

}  // namespace

void validate(const PairsWorldConfig& c) {
  REMATCH_CHECK(!c.data_name.empty() && c.data_name.find('/') == std::string::npos,
                "synth pairs: data_name must be a plain folder name, got '", c.data_name, "'");
  REMATCH_CHECK(c.train_images >= 1 && c.dev_images >= 1 && c.test_images >= 1,
                "synth pairs: every split needs at least one image (train ", c.train_images, ", dev ",
                c.dev_images, ", test ", c.test_images, ")");
  REMATCH_CHECK(c.meta_images >= 0, "synth pairs: meta_images must be >= 0 (0: no meta split), got ", c.meta_images);
  REMATCH_CHECK(c.regions >= 2, "synth pairs: regions must be at least 2 (an image holds 2–5 objects), got ",
                c.regions);
  REMATCH_CHECK(c.feature_dim >= 1, "synth pairs: feature_dim must be positive, got ", c.feature_dim);
  REMATCH_CHECK(c.concepts >= 2 && c.concepts <= max_object_concepts(), "synth pairs: concepts must be in [2, ",
                max_object_concepts(), "] (the grammar's object nouns), got ", c.concepts);
  REMATCH_CHECK(c.attributes >= 2 && c.attributes <= max_attribute_concepts(),
                "synth pairs: attributes must be in [2, ", max_attribute_concepts(), "], got ", c.attributes);
  REMATCH_CHECK(std::isfinite(c.feature_noise) && c.feature_noise >= 0,
                "synth pairs: feature_noise must be a finite number >= 0, got ", c.feature_noise);
  REMATCH_CHECK(c.twin_fraction >= 0 && c.twin_fraction <= 1, "synth pairs: twin_fraction must be in [0, 1], got ",
                c.twin_fraction);
}

const PairsSplit& PairsWorld::split(const std::string& name) const {
  for (const auto& s : splits)
    if (s.name == name) return s;
  REMATCH_FAIL("PairsWorld: no split '", name, "' (have train, dev, test, and meta when meta_images > 0)");
}

PairsWorld make_pairs_world(const PairsWorldConfig& config) {
  validate(config);
  PairsWorld world;
  world.config = config;
  Generator gen(config.seed);
  world.prototypes = randn({config.concepts + config.attributes + kBackgroundConcepts, config.feature_dim},
                           DType::Float32, Device::cpu(), &gen);
  world.splits.push_back(make_split(config, world.prototypes, "train", config.train_images, 0));
  world.splits.push_back(make_split(config, world.prototypes, "dev", config.dev_images, 1));
  world.splits.push_back(make_split(config, world.prototypes, "test", config.test_images, 2));
  if (config.meta_images > 0)
    world.splits.push_back(make_split(config, world.prototypes, "meta", config.meta_images, 3));
  world.vocabulary = pairs_vocabulary(config.concepts, config.attributes);
  return world;
}

PairsWorldFiles write_pairs_world(const PairsWorld& world, const std::string& out_dir) {
  namespace fs = std::filesystem;
  PairsWorldFiles files;
  files.data_dir = (fs::path(out_dir) / world.config.data_name).string();
  const fs::path vocab_dir = fs::path(out_dir) / "vocab";
  files.vocab_path = data::vocabulary_path(vocab_dir.string(), world.config.data_name);
  std::error_code ec;
  fs::create_directories(files.data_dir, ec);
  REMATCH_CHECK(!ec, "cannot create folder ", files.data_dir, ": ", ec.message());
  fs::create_directories(vocab_dir, ec);
  REMATCH_CHECK(!ec, "cannot create folder ", vocab_dir.string(), ": ", ec.message());
  for (const auto& s : world.splits) {
    save_npy((fs::path(files.data_dir) / (s.name + "_ims.npy")).string(), s.images);
    std::string text;
    for (const auto& caption : s.captions) text += caption + "\n";
    io::write_file_atomically((fs::path(files.data_dir) / (s.name + "_caps.txt")).string(), text,
                              "write_pairs_world");
  }
  // The loaders' own writer, so the file is by construction what data::Vocabulary::load reads.
  data::Vocabulary vocab;
  for (size_t i = 0; i < world.vocabulary.size(); ++i) {
    const int64_t id = vocab.add_word(world.vocabulary[i]);
    REMATCH_CHECK(id == static_cast<int64_t>(i), "write_pairs_world: word '", world.vocabulary[i], "' at ", i,
                  " got id ", id, " (a duplicate, or specials out of place)");
  }
  vocab.save(files.vocab_path);
  files.images_dir = write_scene_pictures(world, out_dir);
  return files;
}

}  // namespace rematch::synth
