// train/mixture/two_means.h: k-means++ seeding (its draw probabilities over many seeds), nearest-centre
// assignment with ties, Lloyd updates (one, as pomegranate's initialisation runs, and to convergence), and
// the sample checks the mixtures share.
#include "train/mixture/two_means.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "test_util.h"

namespace rematch::mixture {
namespace {

// x = {0, 1, 3}: the first centre is uniform; after first = 0 the second is 1 with P = 1/10 and 3 with
// P = 9/10 (squared distances 1 and 9), after 1: 0 with 1/5, 3 with 4/5; after 3: 0 with 9/13, 1 with 4/13.
TEST(TwoMeans, KmeansPlusPlusDrawProbabilities) {
  const std::vector<double> x = {0, 1, 3};
  std::map<std::pair<double, double>, int> counts;
  const int draws = 6000;
  for (int seed = 0; seed < draws; ++seed) {
    Generator gen(static_cast<uint64_t>(seed));
    const std::array<double, 2> c = kmeans_plus_plus(x, gen);
    ASSERT_NE(c[0], c[1]);
    ++counts[{c[0], c[1]}];
    EXPECT_EQ(gen.offset(), 2u);  // two uniforms per draw
  }
  const std::map<std::pair<double, double>, double> expected = {
      {{0, 1}, 1.0 / 30}, {{0, 3}, 9.0 / 30}, {{1, 0}, 1.0 / 15}, {{1, 3}, 4.0 / 15},
      {{3, 0}, 9.0 / 39}, {{3, 1}, 4.0 / 39}};
  for (const auto& [pair, p] : expected) {
    // Binomial standard error sqrt(p(1−p)/n) ≤ 0.0065; 4 of them.
    EXPECT_NEAR(counts[pair] / static_cast<double>(draws), p, 0.026) << pair.first << " -> " << pair.second;
  }
}

TEST(TwoMeans, AssignmentAndLloyd) {
  const std::vector<double> x = {0.0, 0.1, 0.2, 5.0, 5.1};
  // A sample exactly between the centres goes to centre 0.
  EXPECT_EQ(assign_to_centres({1.0}, {0.0, 2.0}), (std::vector<int>{0}));
  EXPECT_EQ(assign_to_centres({1.0}, {2.0, 0.0}), (std::vector<int>{0}));
  // One update (pomegranate's initialisation): assign {0 | 0.1 0.2 5 5.1}, centres 0 and 2.6, assign again.
  std::array<double, 2> one{0.0, 0.1};
  EXPECT_EQ(lloyd(x, one, 1), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(one[0], 0.0);
  EXPECT_NEAR(one[1], 2.6, 1e-15);
  // To convergence: the centres become the two cluster means.
  std::array<double, 2> centres{0.0, 0.1};
  EXPECT_EQ(lloyd(x, centres, 300), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_NEAR(centres[0], 0.1, 1e-15);
  EXPECT_NEAR(centres[1], 5.05, 1e-15);
  // A centre that attracts no sample stays where it is.
  std::array<double, 2> far{0.1, 100};
  EXPECT_EQ(lloyd({0.0, 0.2}, far, 5), (std::vector<int>{0, 0}));
  EXPECT_EQ(far[1], 100);
}

TEST(TwoMeans, SampleChecks) {
  EXPECT_TRUE(all_equal({2, 2, 2}));
  EXPECT_FALSE(all_equal({2, 2, 2.0000001}));
  EXPECT_NO_THROW(check_samples("op", {1, 2}));
  EXPECT_THROWS_WITH(check_samples("op", {}), "op", "at least 2", "got 0");
  EXPECT_THROWS_WITH(check_samples("op", {1, -INFINITY}), "op", "sample 1 of 2", "-inf");
  Generator gen(0);
  EXPECT_THROWS_WITH(kmeans_plus_plus({1, 1}, gen), "kmeans_plus_plus", "distinct");
}

}  // namespace
}  // namespace rematch::mixture
