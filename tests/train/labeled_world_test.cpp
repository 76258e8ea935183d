// The synthetic labelled world: deterministic, balanced, learnable in each modality and across them, and
// written in the .npy layout of train/data/labeled_dataset.h.
#include "train/synth/labeled_world.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "test_util.h"
#include "train/data/labeled_dataset.h"
#include "train/eval/map_metric.h"

namespace rematch::synth {
namespace {

// Squared distances of every row of x [N, d] to the class centroids of (cx, cy) [M, d], [M] -> [N, K].
std::vector<std::vector<double>> centroid_distances(const Tensor& x, const Tensor& cx, const Tensor& cy, int64_t K) {
  const int64_t d = x.size(1);
  std::vector<std::vector<double>> centroid(K, std::vector<double>(d, 0));
  std::vector<double> count(K, 0);
  const auto cxv = kernels::cast(cx, DType::Float64).to_vector<double>();
  const auto cyv = cy.to_vector<int64_t>();
  for (size_t i = 0; i < cyv.size(); ++i) {
    count[cyv[i]] += 1;
    for (int64_t k = 0; k < d; ++k) centroid[cyv[i]][k] += cxv[i * d + k];
  }
  for (int64_t c = 0; c < K; ++c)
    for (auto& v : centroid[c]) v /= std::max(count[c], 1.0);
  const auto xv = kernels::cast(x, DType::Float64).to_vector<double>();
  std::vector<std::vector<double>> out(x.size(0), std::vector<double>(K, 0));
  for (int64_t i = 0; i < x.size(0); ++i)
    for (int64_t c = 0; c < K; ++c)
      for (int64_t k = 0; k < d; ++k) out[i][c] += std::pow(xv[i * d + k] - centroid[c][k], 2);
  return out;
}

double nearest_centroid_accuracy(const Tensor& train_x, const Tensor& train_y, const Tensor& x, const Tensor& y,
                                 int64_t K) {
  const auto dist = centroid_distances(x, train_x, train_y, K);
  const auto yv = y.to_vector<int64_t>();
  double hits = 0;
  for (size_t i = 0; i < yv.size(); ++i)
    hits += std::min_element(dist[i].begin(), dist[i].end()) - dist[i].begin() == yv[i];
  return hits / static_cast<double>(yv.size());
}

TEST(LabeledWorld, DeterministicShapesAndBalancedLabels) {
  LabeledWorldConfig cfg;
  const LabeledWorld a = make_labeled_world(cfg), b = make_labeled_world(cfg);
  cfg.seed = 5;
  const LabeledWorld c = make_labeled_world(cfg);
  const std::vector<std::pair<std::string, int64_t>> sizes = {{"train", 2000}, {"valid", 200}, {"test", 500}};
  for (const auto& [name, n] : sizes) {
    const LabeledSplit& s = a.split(name);
    EXPECT_EQ(s.images.sizes(), (Shape{n, 128}));
    EXPECT_EQ(s.texts.sizes(), (Shape{n, 64}));
    EXPECT_EQ(s.labels.sizes(), (Shape{n}));
    EXPECT_EQ(s.images.dtype(), DType::Float32);
    EXPECT_EQ(s.labels.dtype(), DType::Int64);
    EXPECT_TRUE(test::all_close(s.images, b.split(name).images, 0, 0));
    EXPECT_TRUE(test::all_close(s.texts, b.split(name).texts, 0, 0));
    EXPECT_EQ(s.labels.to_vector<int64_t>(), b.split(name).labels.to_vector<int64_t>());
    EXPECT_NE(s.labels.to_vector<int64_t>(), c.split(name).labels.to_vector<int64_t>());
    std::vector<int64_t> count(10, 0);
    for (int64_t y : s.labels.to_vector<int64_t>()) {
      ASSERT_TRUE(y >= 0 && y < 10);
      ++count[y];
    }
    for (int64_t k : count) EXPECT_EQ(k, n / 10);  // every size above is a multiple of 10
  }
}

TEST(LabeledWorld, LearnableInEachModalityAndAcrossThem) {
  const LabeledWorld w = make_labeled_world({});
  const LabeledSplit &train = w.split("train"), &test = w.split("test");
  const double img_acc = nearest_centroid_accuracy(train.images, train.labels, test.images, test.labels, 10);
  const double txt_acc = nearest_centroid_accuracy(train.texts, train.labels, test.texts, test.labels, 10);
  EXPECT_GT(img_acc, 0.8);
  EXPECT_GT(txt_acc, 0.8);
  // Not trivially separable either: a clean nearest-centroid rule still makes mistakes.
  EXPECT_LT(std::min(img_acc, txt_acc), 0.995);
  // Centroids of shuffled labels carry no class information: chance is 0.1.
  const Tensor shuffled = kernels::index_select(train.labels, 0, randperm(2000));
  EXPECT_LT(nearest_centroid_accuracy(train.images, shuffled, test.images, test.labels, 10), 0.25);

  // Across modalities: map each modality to its vector of negative centroid distances (a common
  // class space) and rank with MRL's mAP.
  auto class_space = [&](const Tensor& x, const Tensor& tx) {
    const auto dist = centroid_distances(x, tx, train.labels, 10);
    std::vector<double> flat;
    for (const auto& row : dist) {
      const double lo = *std::min_element(row.begin(), row.end());
      for (double v : row) flat.push_back(std::exp(-(v - lo) / 10.0));
    }
    return from_vector(flat, {x.size(0), 10});
  };
  const auto m = eval::cross_modal_map(class_space(test.images, train.images), test.labels,
                                       class_space(test.texts, train.texts), test.labels);
  EXPECT_GT(m.average(), 0.7);
}

TEST(LabeledWorld, WritesTheLabeledNpyLayout) {
  LabeledWorldConfig cfg;
  cfg.train_samples = 30, cfg.valid_samples = 10, cfg.test_samples = 20;
  const LabeledWorld w = make_labeled_world(cfg);
  const auto out = std::filesystem::temp_directory_path() / ("rematch_labeled_world_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  const std::string dir = write_labeled_world(w, out.string());
  EXPECT_EQ(dir, (out / "synth_labeled").string());
  for (const auto& s : w.splits) {
    EXPECT_TRUE(test::all_close(load_npy(labeled_file(dir, s.name, "imgs")), s.images, 0, 0));
    EXPECT_TRUE(test::all_close(load_npy(labeled_file(dir, s.name, "texts")), s.texts, 0, 0));
    EXPECT_EQ(load_npy(labeled_file(dir, s.name, "labels")).to_vector<int64_t>(), s.labels.to_vector<int64_t>());
  }
  EXPECT_TRUE(std::filesystem::exists(out / "synth_labeled" / "valid_texts.npy"));
  std::filesystem::remove_all(out);
}

// Round trip through the real loader (train/data/labeled_dataset.h): what synth writes is what UOT-RCL reads.
TEST(LabeledWorld, LoadsWithTheLabeledLoader) {
  LabeledWorldConfig cfg;
  cfg.classes = 4, cfg.train_samples = 24, cfg.valid_samples = 8, cfg.test_samples = 12;
  cfg.img_dim = 10, cfg.txt_dim = 6;
  const LabeledWorld w = make_labeled_world(cfg);
  const auto out = std::filesystem::temp_directory_path() / ("rematch_labeled_loader_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  const data::LabeledDataset d = data::load_labeled(write_labeled_world(w, out.string()), /*valid_len=*/0);
  EXPECT_EQ(d.num_classes, 4);
  const std::vector<std::pair<const data::LabeledSplit*, std::string>> splits = {
      {&d.train, "train"}, {&d.valid, "valid"}, {&d.test, "test"}};
  for (const auto& [loaded, name] : splits) {
    const LabeledSplit& s = w.split(name);
    EXPECT_TRUE(test::all_close(loaded->images, s.images, 0, 0)) << name;
    EXPECT_TRUE(test::all_close(loaded->texts, s.texts, 0, 0)) << name;
    EXPECT_EQ(loaded->image_labels, s.labels.to_vector<int64_t>()) << name;
    EXPECT_EQ(loaded->text_labels, s.labels.to_vector<int64_t>()) << name;
  }
  std::filesystem::remove_all(out);
}

TEST(LabeledWorld, RejectsBadConfigs) {
  LabeledWorldConfig c;
  c.classes = 1;
  EXPECT_THROWS_WITH(make_labeled_world(c), "classes");
  c = {};
  c.txt_dim = 0;
  EXPECT_THROWS_WITH(make_labeled_world(c), "txt_dim");
  c = {};
  c.name = "a/b";
  EXPECT_THROWS_WITH(make_labeled_world(c), "plain folder name");
}

}  // namespace
}  // namespace rematch::synth
