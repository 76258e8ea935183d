// The synthetic image–caption world: deterministic, well-formed, learnable (oracles reach high recall, random
// scores sit at chance), and built so that word–region alignment matters (twins).
#include "train/synth/pairs_world.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/eval/retrieval_metrics.h"
#include "test_util.h"

namespace rematch::synth {
namespace {

PairsWorldConfig small_config() {
  PairsWorldConfig c;
  c.train_images = 300;
  c.dev_images = 50;
  c.test_images = 200;
  return c;
}

// The concepts a caption names: object words with the attribute word right before them (or -1).
struct Mention {
  int64_t object;
  int64_t attribute;
};
std::vector<Mention> mentions(const std::string& caption, const PairsWorldConfig& c) {
  std::map<std::string, int64_t> objects, attributes;
  for (int64_t o = 0; o < c.concepts; ++o) objects[object_word(o)] = o;
  for (int64_t a = 0; a < c.attributes; ++a) attributes[attribute_word(a)] = a;
  const auto tokens = caption_tokens(caption);
  std::vector<Mention> out;
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (!objects.count(tokens[t])) continue;
    const bool bound = t > 0 && attributes.count(tokens[t - 1]);
    out.push_back({objects[tokens[t]], bound ? attributes[tokens[t - 1]] : -1});
  }
  return out;
}

TEST(PairsWorld, SameSeedSameWorldOtherSeedOtherWorld) {
  const PairsWorld a = make_pairs_world(small_config());
  const PairsWorld b = make_pairs_world(small_config());
  PairsWorldConfig other = small_config();
  other.seed = 1;
  const PairsWorld c = make_pairs_world(other);
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_TRUE(test::all_close(a.splits[s].images, b.splits[s].images, 0, 0));
    EXPECT_EQ(a.splits[s].captions, b.splits[s].captions);
    EXPECT_NE(a.splits[s].captions, c.splits[s].captions);
  }
  EXPECT_FALSE(test::all_close(a.splits[0].images, c.splits[0].images, 0.1, 0));
  // Each split has its own counter range: a bigger training set leaves dev and test alone.
  PairsWorldConfig bigger = small_config();
  bigger.train_images = 400;
  const PairsWorld d = make_pairs_world(bigger);
  EXPECT_EQ(d.split("test").captions, a.split("test").captions);
  EXPECT_TRUE(test::all_close(d.split("test").images, a.split("test").images, 0, 0));
}

TEST(PairsWorld, ShapesAndVocabulary) {
  const PairsWorldConfig cfg = small_config();
  const PairsWorld w = make_pairs_world(cfg);
  ASSERT_EQ(w.splits.size(), 3u);
  const std::vector<std::pair<std::string, int64_t>> sizes = {{"train", 300}, {"dev", 50}, {"test", 200}};
  for (const auto& [name, n] : sizes) {
    const PairsSplit& s = w.split(name);
    EXPECT_EQ(s.images.sizes(), (Shape{n, cfg.regions, cfg.feature_dim}));
    EXPECT_EQ(s.images.dtype(), DType::Float32);
    EXPECT_EQ(static_cast<int64_t>(s.captions.size()), n * kCaptionsPerImage);
    EXPECT_EQ(static_cast<int64_t>(s.scenes.size()), n);
  }
  ASSERT_GE(w.vocabulary.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(w.vocabulary.begin(), w.vocabulary.begin() + 4),
            (std::vector<std::string>{"<pad>", "<start>", "<end>", "<unk>"}));
  const std::set<std::string> vocab(w.vocabulary.begin(), w.vocabulary.end());
  EXPECT_EQ(vocab.size(), w.vocabulary.size()) << "duplicate words";
  for (const auto& s : w.splits)
    for (const auto& caption : s.captions) {
      EXPECT_TRUE(std::isupper(static_cast<unsigned char>(caption[0]))) << caption;
      EXPECT_EQ(caption.back(), '.') << caption;
      for (const auto& tok : caption_tokens(caption)) EXPECT_TRUE(vocab.count(tok)) << tok << " in " << caption;
    }
}

TEST(PairsWorld, CaptionsNameTheirOwnImagesBindingsAndTwinsSwapAttributes) {
  const PairsWorldConfig cfg = small_config();
  const PairsWorld w = make_pairs_world(cfg);
  int64_t twins = 0, bindings = 0;
  for (const auto& s : w.splits)
    for (size_t i = 0; i < s.scenes.size(); ++i) {
      const Scene& scene = s.scenes[i];
      ASSERT_GE(scene.objects.size(), 2u);
      ASSERT_LE(scene.objects.size(), 5u);
      for (int64_t j = 0; j < kCaptionsPerImage; ++j) {
        const std::string& caption = s.captions[i * kCaptionsPerImage + j];
        const auto named = mentions(caption, cfg);
        EXPECT_FALSE(named.empty()) << caption;
        for (const auto& m : named) {
          bool found = false;
          for (const auto& o : scene.objects)
            found |= o.object == m.object && (m.attribute < 0 || o.attribute == m.attribute);
          EXPECT_TRUE(found) << "'" << caption << "' names something image " << i << " does not hold";
          bindings += m.attribute >= 0;
        }
      }
      if (scene.twin_of >= 0) {
        ++twins;
        const Scene& a = s.scenes[scene.twin_of];
        ASSERT_EQ(a.objects.size(), scene.objects.size());
        for (size_t k = 0; k < a.objects.size(); ++k) {
          EXPECT_EQ(a.objects[k].object, scene.objects[k].object);
          EXPECT_NE(a.objects[k].attribute, scene.objects[k].attribute);
        }
      }
    }
  // twin_fraction 0.3 of 550 images in pairs: ~82 twins expected.
  EXPECT_GT(twins, 50);
  EXPECT_LT(twins, 120);
  EXPECT_GT(bindings, 1500);  // most captions bind at least one attribute to its object
}

// Cosine of a region feature with a concept prototype row combination.
double best_region_cosine(const float* regions, int64_t R, int64_t D, const std::vector<double>& query) {
  double best = -2, qn = 0;
  for (double v : query) qn += v * v;
  for (int64_t r = 0; r < R; ++r) {
    double dot = 0, rn = 0;
    for (int64_t d = 0; d < D; ++d) {
      dot += regions[r * D + d] * query[d];
      rn += double(regions[r * D + d]) * regions[r * D + d];
    }
    best = std::max(best, dot / std::sqrt(qn * rn));
  }
  return best;
}

TEST(PairsWorld, OraclesReachHighRecallRandomScoresSitAtChance) {
  const PairsWorldConfig cfg = small_config();
  const PairsWorld w = make_pairs_world(cfg);
  const PairsSplit& test = w.split("test");
  const int64_t n = test.images.size(0), m = n * kCaptionsPerImage, R = cfg.regions, D = cfg.feature_dim;
  const float* proto = w.prototypes.data<float>();
  Tensor bag = zeros({n, m}, DType::Float64), aligned = zeros({n, m}, DType::Float64);
  for (int64_t j = 0; j < m; ++j) {
    const auto named = mentions(test.captions[j], cfg);
    for (int64_t i = 0; i < n; ++i) {
      // Bag of concepts from the ground truth: +1 per named concept the image holds, -1 per one it lacks.
      std::set<int64_t> objs, attrs;
      for (const auto& o : test.scenes[i].objects) objs.insert(o.object), attrs.insert(o.attribute);
      double b = 0, a = 0;
      for (const auto& mt : named) {
        b += objs.count(mt.object) ? 1 : -1;
        if (mt.attribute >= 0) b += attrs.count(mt.attribute) ? 1 : -1;
        // Feature alignment: the best region for the phrase's prototype(s) — what a model has to learn.
        std::vector<double> q(D);
        for (int64_t d = 0; d < D; ++d)
          q[d] = proto[mt.object * D + d] + (mt.attribute >= 0 ? proto[(cfg.concepts + mt.attribute) * D + d] : 0);
        a += best_region_cosine(test.images.data<float>() + i * R * D, R, D, q);
      }
      bag.data<double>()[i * m + j] = b;
      aligned.data<double>()[i * m + j] = a;
    }
  }
  const auto bag_metrics = eval::retrieval_metrics(bag, kCaptionsPerImage);
  const auto aligned_metrics = eval::retrieval_metrics(aligned, kCaptionsPerImage);
  const auto random_metrics =
      eval::retrieval_metrics(test::random_tensor({n, m}, DType::Float64, 3), kCaptionsPerImage);
  EXPECT_GT(bag_metrics.i2t_r1, 80);
  EXPECT_GT(bag_metrics.t2i_r1, 50);  // twins and short captions tie on bags of words
  EXPECT_GT(aligned_metrics.i2t_r1, 90);
  EXPECT_GT(aligned_metrics.t2i_r1, 65);
  EXPECT_GT(aligned_metrics.rsum(), bag_metrics.rsum());  // alignment resolves what bags cannot
  // Chance: R@1 = 1/n = 0.5 %, R@10 = 5 % in both directions.
  EXPECT_LT(random_metrics.i2t_r1, 3);
  EXPECT_LT(random_metrics.t2i_r1, 2);
  EXPECT_LT(random_metrics.t2i_r10, 10);

  // On twin pairs, a caption that binds an attribute scores higher on its own image than on the twin
  // under feature alignment, while the bag of concepts cannot tell them apart.
  int64_t decided = 0, correct = 0, bag_ties = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = test.scenes[i].twin_of;
    if (t < 0) continue;
    for (int64_t j = i * kCaptionsPerImage; j < (i + 1) * kCaptionsPerImage; ++j) {
      bool binds = false;
      for (const auto& mt : mentions(test.captions[j], cfg)) binds |= mt.attribute >= 0;
      if (!binds) continue;
      ++decided;
      correct += aligned.data<double>()[i * m + j] > aligned.data<double>()[t * m + j];
      bag_ties += bag.data<double>()[i * m + j] == bag.data<double>()[t * m + j];
    }
  }
  ASSERT_GT(decided, 50);
  EXPECT_GT(correct, 0.95 * decided);
  EXPECT_EQ(bag_ties, decided);
}

TEST(PairsWorld, WritesThePrecompLayout) {
  PairsWorldConfig cfg = small_config();
  cfg.train_images = 20, cfg.dev_images = 4, cfg.test_images = 6;
  const PairsWorld w = make_pairs_world(cfg);
  const auto dir = std::filesystem::temp_directory_path() / ("rematch_pairs_world_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const PairsWorldFiles f = write_pairs_world(w, dir.string());
  EXPECT_EQ(f.data_dir, (dir / "synth_precomp").string());
  EXPECT_EQ(f.vocab_path, (dir / "vocab" / "synth_precomp_vocab.json").string());
  for (const auto& s : w.splits) {
    const Tensor ims = load_npy(f.data_dir + "/" + s.name + "_ims.npy");
    EXPECT_TRUE(test::all_close(ims, s.images, 0, 0));
    std::ifstream is(f.data_dir + "/" + s.name + "_caps.txt");
    std::vector<std::string> lines;
    for (std::string line; std::getline(is, line);) lines.push_back(line);
    EXPECT_EQ(lines, s.captions);
  }
  std::ifstream vs(f.vocab_path);
  const auto vocab = nlohmann::json::parse(vs);
  EXPECT_EQ(vocab["idx"].get<size_t>(), w.vocabulary.size());
  for (size_t i = 0; i < w.vocabulary.size(); ++i) {
    EXPECT_EQ(vocab["idx2word"][std::to_string(i)], w.vocabulary[i]);
    EXPECT_EQ(vocab["word2idx"][w.vocabulary[i]].get<size_t>(), i);
  }
  EXPECT_FALSE(std::filesystem::exists(f.vocab_path + ".tmp"));
  std::filesystem::remove_all(dir);
}

// Round trip through the real loaders (train/data): what synth writes is what training reads.
TEST(PairsWorld, LoadsWithThePrecompLoader) {
  PairsWorldConfig cfg = small_config();
  cfg.train_images = 40, cfg.dev_images = 8, cfg.test_images = 12, cfg.regions = 7, cfg.feature_dim = 16;
  const PairsWorld w = make_pairs_world(cfg);
  const auto dir = std::filesystem::temp_directory_path() / ("rematch_pairs_loader_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const PairsWorldFiles f = write_pairs_world(w, dir.string());
  const data::Vocabulary vocab = data::Vocabulary::load(data::vocabulary_path((dir / "vocab").string(), cfg.data_name));
  EXPECT_EQ(vocab.size(), static_cast<int64_t>(w.vocabulary.size()));
  for (const auto& s : w.splits) {
    const data::PrecompDataset d(dir.string(), cfg.data_name, s.name, vocab);
    const int64_t n = s.images.size(0);
    EXPECT_EQ(d.num_images(), n) << s.name;
    EXPECT_EQ(d.num_captions(), n * kCaptionsPerImage) << s.name;
    EXPECT_EQ(d.im_div(), kCaptionsPerImage) << s.name;
    EXPECT_EQ(d.captions_per_image(), kCaptionsPerImage) << s.name;
    EXPECT_EQ(d.num_regions(), cfg.regions);
    EXPECT_EQ(d.feature_dim(), cfg.feature_dim);
    EXPECT_TRUE(test::all_close(d.features(), s.images, 0, 0));
    for (int64_t j = 0; j < d.num_captions(); ++j) {
      const std::vector<int64_t> ids = d.caption_vector(j);
      ASSERT_EQ(ids.front(), data::Vocabulary::kStart);
      ASSERT_EQ(ids.back(), data::Vocabulary::kEnd);
      for (int64_t id : ids) ASSERT_NE(id, data::Vocabulary::kUnk) << "'" << s.captions[j] << "' has an unknown word";
      // The loader's NLTK tokenisation and the grammar's own token list agree word for word.
      ASSERT_EQ(vocab.decode(ids), caption_tokens(s.captions[j])) << s.captions[j];
      ASSERT_EQ(d.image_index(j), j / kCaptionsPerImage);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(PairsWorld, RejectsBadConfigs) {
  PairsWorldConfig c;
  c.regions = 1;
  EXPECT_THROWS_WITH(make_pairs_world(c), "regions");
  c = {};
  c.concepts = max_object_concepts() + 1;
  EXPECT_THROWS_WITH(make_pairs_world(c), "concepts");
  c = {};
  c.feature_noise = -1;
  EXPECT_THROWS_WITH(make_pairs_world(c), "feature_noise");
  c = {};
  c.test_images = 0;
  EXPECT_THROWS_WITH(make_pairs_world(c), "at least one image");
}

}  // namespace
}  // namespace rematch::synth
