// Retrieval metrics against hand-computed values (docs/backbones.md §7). Ranks are 0-based positions in the
// list sorted by decreasing score; among equal scores the higher index comes first (NumPy argsort reversed).
#include "train/eval/retrieval_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <nlohmann/json.hpp>

#include "tensor/tensor.h"

namespace rematch::eval {
namespace {

Tensor matrix(const std::vector<double>& v, int64_t rows, int64_t cols, DType dtype = DType::Float64) {
  return kernels::cast(from_vector(v, {rows, cols}), dtype);
}

void expect_metrics(const RetrievalMetrics& m, const std::vector<double>& want) {
  const std::vector<double> got = {m.i2t_r1, m.i2t_r5, m.i2t_r10, m.i2t_medr, m.i2t_meanr,
                                   m.t2i_r1, m.t2i_r5, m.t2i_r10, m.t2i_medr, m.t2i_meanr, m.rsum()};
  const char* names[] = {"i2t_r1", "i2t_r5", "i2t_r10", "i2t_medr", "i2t_meanr", "t2i_r1",
                         "t2i_r5", "t2i_r10", "t2i_medr", "t2i_meanr", "rsum"};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-9) << names[k];
}

TEST(RetrievalMetrics, OneCaptionPerImageHandComputed) {
  // Rows images, columns captions, caption j belongs to image j.
  //        c0   c1   c2
  // i0  [ 0.9  0.1  0.5 ]   own 0.9, nothing larger            -> i2t rank 0
  // i1  [ 0.8  0.7  0.2 ]   own 0.7, larger: 0.8                -> rank 1
  // i2  [ 0.3  0.6  0.4 ]   own 0.4, larger: 0.6                -> rank 1
  // t2i: c0 column (0.9 0.8 0.3) own 0.9 -> 0; c1 (0.1 0.7 0.6) own 0.7 -> 0; c2 (0.5 0.2 0.4) own 0.4 -> 1.
  // i2t ranks {0,1,1}: R@1 = 100/3, R@5 = R@10 = 100, medr = floor(1)+1 = 2, meanr = 2/3+1.
  // t2i ranks {0,0,1}: R@1 = 200/3, R@5 = R@10 = 100, medr = floor(0)+1 = 1, meanr = 1/3+1.
  // rSum = 100/3 + 200 + 200/3 + 200 = 500.
  const std::vector<double> s = {0.9, 0.1, 0.5, 0.8, 0.7, 0.2, 0.3, 0.6, 0.4};
  for (DType dt : {DType::Float32, DType::Float64}) {
    const Tensor sims = matrix(s, 3, 3, dt);
    EXPECT_EQ(i2t_ranks(sims, 1), (std::vector<int64_t>{0, 1, 1}));
    EXPECT_EQ(t2i_ranks(sims, 1), (std::vector<int64_t>{0, 0, 1}));
    expect_metrics(retrieval_metrics(sims, 1),
                   {100.0 / 3, 100, 100, 2, 5.0 / 3, 200.0 / 3, 100, 100, 1, 4.0 / 3, 500});
  }
}

TEST(RetrievalMetrics, FiveCaptionsPerImageHandComputed) {
  // 2 images x 10 captions; captions 0-4 belong to image 0, 5-9 to image 1.
  // i0: own (0.2 0.3 0.1 0.25 0.15), others (0.9 0.8 0.35 0.05 0.0): best own 0.3, larger 0.9 0.8 0.35 -> 3.
  // i1: others (0.5 0.99 0.4 0.3 0.2), own (0.6 0.7 0.95 0.1 0.2): best own 0.95, larger 0.99 -> 1.
  // i2t ranks {3,1}: R@1 = 0, R@5 = R@10 = 100, medr = floor(2)+1 = 3, meanr = 2+1 = 3.
  // t2i, column j compares its own image's score with the other one:
  //   c0..c4 (own i0): 0.2<0.5, 0.3<0.99, 0.1<0.4, 0.25<0.3, 0.15<0.2 -> rank 1 each;
  //   c5..c9 (own i1): 0.6<0.9 -> 1, 0.7<0.8 -> 1, 0.95>0.35 -> 0, 0.1>0.05 -> 0, 0.2>0.0 -> 0.
  // t2i ranks {1,1,1,1,1,1,1,0,0,0}: R@1 = 30, R@5 = R@10 = 100, median of sorted (0,0,0,1,...) = (1+1)/2
  //   -> medr 2, meanr = 7/10+1 = 1.7. rSum = 0 + 200 + 30 + 200 = 430.
  const std::vector<double> s = {0.2, 0.3,  0.1, 0.25, 0.15, 0.9, 0.8, 0.35, 0.05, 0.0,
                                 0.5, 0.99, 0.4, 0.3,  0.2,  0.6, 0.7, 0.95, 0.1,  0.2};
  const Tensor sims = matrix(s, 2, 10);
  EXPECT_EQ(i2t_ranks(sims, 5), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t2i_ranks(sims, 5), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 0, 0, 0}));
  expect_metrics(retrieval_metrics(sims, 5), {0, 100, 100, 3, 3, 30, 100, 100, 2, 1.7, 430});
}

TEST(RetrievalMetrics, RankSummaryWithEvenCount) {
  // ranks 0 3 4 5 9 10 20 2 (8 of them): <1: 1 -> 12.5; <5: 0 3 4 2 -> 50; <10: adds 5 9 -> 75;
  // sorted 0 2 3 4 5 9 10 20, median (4+5)/2 = 4.5 -> medr floor(4.5)+1 = 5; mean 53/8 = 6.625 -> meanr 7.625.
  const RankSummary r = summarize_ranks({0, 3, 4, 5, 9, 10, 20, 2});
  EXPECT_DOUBLE_EQ(r.r1, 12.5);
  EXPECT_DOUBLE_EQ(r.r5, 50);
  EXPECT_DOUBLE_EQ(r.r10, 75);
  EXPECT_DOUBLE_EQ(r.medr, 5);
  EXPECT_DOUBLE_EQ(r.meanr, 7.625);
}

TEST(RetrievalMetrics, TiesPutTheHigherIndexFirstLikeNumpy) {
  // Constant 3x3: np.argsort([.5,.5,.5])[::-1] = [2,1,0], so item j sits at position 2 - j in every row and
  // column: i2t ranks {2,1,0}, t2i ranks {2,1,0}; R@1 = 100/3 (not 100: a constant model learns nothing).
  const Tensor constant = full({3, 3}, 0.5, DType::Float32);
  EXPECT_EQ(i2t_ranks(constant, 1), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(t2i_ranks(constant, 1), (std::vector<int64_t>{2, 1, 0}));
  expect_metrics(retrieval_metrics(constant, 1), {100.0 / 3, 100, 100, 2, 2, 100.0 / 3, 100, 100, 2, 2, 1400.0 / 3});
  // Tie inside an image's own captions: row 0 = (0.5 0.5 | 0.5 0.1), own captions 0 and 1.
  // argsort stable = [3,0,1,2], reversed [2,1,0,3]: own caption 1 at position 1 (caption 0 at 2) -> rank 1.
  const Tensor s = matrix({0.5, 0.5, 0.5, 0.1, 0.0, 0.0, 0.9, 0.9}, 2, 4);
  EXPECT_EQ(i2t_ranks(s, 2)[0], 1);
}

// Position in NumPy's argsort(row)[::-1] with a stable sort, computed the slow obvious way.
int64_t numpy_position(const std::vector<double>& row, int64_t item) {
  std::vector<int64_t> idx(row.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return row[a] < row[b]; });
  std::reverse(idx.begin(), idx.end());
  return std::find(idx.begin(), idx.end(), item) - idx.begin();
}

TEST(RetrievalMetrics, MatchesSortedPositionsOnRandomTiedScores) {
  const int64_t n = 23, c = 5, m = n * c;
  std::vector<double> s(n * m);
  uint32_t state = 12345;
  for (auto& v : s) {  // scores on a coarse grid, so ties are frequent
    state = state * 1664525u + 1013904223u;
    v = static_cast<double>((state >> 16) % 7) / 10.0;
  }
  const Tensor sims = matrix(s, n, m, DType::Float32);
  const auto i2t = i2t_ranks(sims, c);
  const auto t2i = t2i_ranks(sims, c);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> row(s.begin() + i * m, s.begin() + (i + 1) * m);
    int64_t best = m;
    for (int64_t j = c * i; j < c * (i + 1); ++j) best = std::min(best, numpy_position(row, j));
    EXPECT_EQ(i2t[i], best) << "image " << i;
  }
  for (int64_t j = 0; j < m; ++j) {
    std::vector<double> col(n);
    for (int64_t i = 0; i < n; ++i) col[i] = s[i * m + j];
    EXPECT_EQ(t2i[j], numpy_position(col, j / c)) << "caption " << j;
  }
}

TEST(RetrievalMetrics, FiveFoldAveragesPerFoldAndSumsTheAveragedRecalls) {
  // 4 images, 1 caption each, 2 folds of 2 images. The off-fold blocks hold 5.0: they would wreck every
  // rank if the folds were not cut out.
  // fold 0 [[0.2 0.9] [0.1 0.3]]: i2t 0.2<0.9 -> 1, 0.3>0.1 -> 0; t2i col0 0.2>0.1 -> 0, col1 0.3<0.9 -> 1.
  //   i2t: R@1 50, medr floor(0.5)+1 = 1, meanr 1.5; t2i: R@1 50, medr 1, meanr 1.5.
  // fold 1 [[0.9 0.05] [0.3 0.1]]: i2t 0.9>0.05 -> 0, 0.1<0.3 -> 1; t2i col0 0.9>0.3 -> 0, col1 0.1>0.05 -> 0.
  //   i2t: R@1 50, medr 1, meanr 1.5; t2i: R@1 100, medr 1, meanr 1.
  // Mean: i2t 50/100/100, medr 1, meanr 1.5; t2i 75/100/100, medr 1, meanr 1.25.
  // rSum of the averaged R@K = 50+100+100+75+100+100 = 525 (the reference's printed 2*(i2t sum) = 500).
  const std::vector<double> s = {0.2, 0.9, 5.0, 5.0,   //
                                 0.1, 0.3, 5.0, 5.0,   //
                                 5.0, 5.0, 0.9, 0.05,  //
                                 5.0, 5.0, 0.3, 0.1};
  const Tensor sims = matrix(s, 4, 4);
  const auto folds = per_fold_metrics(sims, 1, 2);
  ASSERT_EQ(folds.size(), 2u);
  expect_metrics(folds[0], {50, 100, 100, 1, 1.5, 50, 100, 100, 1, 1.5, 500});
  expect_metrics(folds[1], {50, 100, 100, 1, 1.5, 100, 100, 100, 1, 1, 550});
  expect_metrics(mean_metrics(folds), {50, 100, 100, 1, 1.5, 75, 100, 100, 1, 1.25, 525});
}

TEST(RetrievalMetrics, RejectsBadInput) {
  EXPECT_THROW(retrieval_metrics(zeros({2, 9}), 5), Error);         // 9 != 2 * 5
  EXPECT_THROW(retrieval_metrics(zeros({2, 10}), 0), Error);        // captions_per_image 0
  EXPECT_THROW(retrieval_metrics(zeros({10}), 5), Error);           // not 2-D
  // 4 * (2^62 + 1) wraps around to 4, and 4 * 2^62 to 0: the column counts must not pass (they read out of bounds).
  EXPECT_THROW(retrieval_metrics(zeros({4, 4}), (int64_t{1} << 62) + 1), Error);
  EXPECT_THROW(retrieval_metrics(zeros({4, 0}), int64_t{1} << 62), Error);
  EXPECT_THROW(retrieval_metrics(zeros({2, 2}, DType::Int64), 1), Error);
  EXPECT_THROW(per_fold_metrics(zeros({4, 4}), 1, 3), Error);       // 4 images, 3 folds
  Tensor nan = zeros({2, 2});
  nan.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  try {
    retrieval_metrics(nan, 1);
    ADD_FAILURE() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 NaN or infinite"), std::string::npos) << e.what();
  }
}

TEST(RetrievalMetrics, JsonHasTheDocumentedKeysAndTableTheValues) {
  const RetrievalMetrics m = retrieval_metrics(matrix({0.9, 0.1, 0.5, 0.8, 0.7, 0.2, 0.3, 0.6, 0.4}, 3, 3), 1);
  const auto j = nlohmann::json::parse(metrics_json(m));
  const std::vector<std::string> keys = {"i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10",
                                         "rsum", "i2t_medr", "i2t_meanr", "t2i_medr", "t2i_meanr"};
  EXPECT_EQ(j.size(), keys.size());
  for (const auto& k : keys) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_NEAR(j["rsum"].get<double>(), 500, 1e-9);
  EXPECT_NEAR(j["i2t_meanr"].get<double>(), 5.0 / 3, 1e-12);
  const std::string table = format_metrics_table(m);
  EXPECT_NE(table.find(" 33.33  100.00  100.00     2.0     1.67"), std::string::npos) << table;
  EXPECT_NE(table.find("rSum 500.00"), std::string::npos) << table;
}

}  // namespace
}  // namespace rematch::eval
