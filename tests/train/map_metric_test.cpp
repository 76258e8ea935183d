// mAP@all in MRL's form (docs/methods/uotrcl.md §4.4) against hand-computed values.
#include "train/eval/map_metric.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace rematch::eval {
namespace {

Tensor feats(const std::vector<double>& v, int64_t rows) {
  return from_vector(v, {rows, static_cast<int64_t>(v.size()) / rows});
}
Tensor labels(const std::vector<int64_t>& v) { return from_vector(v); }

// Database x0 = (1, 0.1) label 0, x1 = (0, 1) label 1, x2 = (1, -0.5) label 0, x3 = (-1, 0) label 1.
const std::vector<double> kDatabase = {1, 0.1, 0, 1, 1, -0.5, -1, 0};

TEST(MapMetric, HandComputedAveragePrecision) {
  // q0 = (1, 0), label 0: cosines x0 1/sqrt(1.01) = .995, x1 0, x2 1/sqrt(1.25) = .894, x3 -1.
  //   order x0 (rel) x2 (rel) x1 x3 -> AP = (1/1 + 2/2) / 2 = 1.
  // q1 = (0, 1), label 0: cosines x0 .1/sqrt(1.01) = .0995, x1 1, x2 -.5/sqrt(1.25) = -.447, x3 0.
  //   order x1 x0 (rel) x3 x2 (rel) -> AP = (1/2 + 2/4) / 2 = 0.5.
  // mAP@all = (1 + 0.5) / 2 = 0.75.
  const Tensor q = feats({1, 0, 0, 1}, 2), db = feats(kDatabase, 4);
  EXPECT_NEAR(map_at_k(q, labels({0, 0}), db, labels({0, 1, 0, 1})), 0.75, 1e-12);
  // k = 1: q0's top item x0 is relevant -> 1; q1's top item x1 is not -> 0. mAP@1 = 0.5.
  EXPECT_NEAR(map_at_k(q, labels({0, 0}), db, labels({0, 1, 0, 1}), 1), 0.5, 1e-12);
  // A query whose label is nowhere in the database has AP 0: (1 + 0) / 2.
  EXPECT_NEAR(map_at_k(q, labels({0, 7}), db, labels({0, 1, 0, 1})), 0.5, 1e-12);
  // Cosine ranking ignores scale, and int32 labels or float32 features change nothing.
  const Tensor scaled = kernels::cast(kernels::scalar_op(kernels::ScalarOp::Mul, db, 3.5), DType::Float32);
  EXPECT_NEAR(map_at_k(q, labels({0, 0}), scaled, kernels::cast(labels({0, 1, 0, 1}), DType::Int32)), 0.75, 1e-12);
}

TEST(MapMetric, EqualDistancesKeepDatabaseOrder) {
  // q = (1, 0), label 0; database y0 = (0, 1) label 1, y1 = (0, 2) label 0, y2 = (1, 0) label 1.
  // Distances 1, 1, 0: a stable argsort gives y2, y0, y1, so the one relevant item is third: AP = 1/3.
  // (The other tie order would give 1/2.)
  EXPECT_NEAR(map_at_k(feats({1, 0}, 1), labels({0}), feats({0, 1, 0, 2, 1, 0}, 3), labels({1, 0, 1})), 1.0 / 3,
              1e-12);
}

TEST(MapMetric, CrossModalBothDirections) {
  // Images = the four database vectors, texts = one-hot of the label: every text query (1,0) / (0,1)
  // against the images:
  //   text label 0 = (1, 0): image order x0 (.995, rel) x2 (.894, rel) x1 x3 -> AP 1 (twice, texts 0 and 2);
  //   text label 1 = (0, 1): cosines x0 .0995, x1 1 (rel), x2 -.447, x3 0 (rel): order x1 x0 x3 x2
  //     -> AP (1/1 + 2/3) / 2 = 5/6 (twice).  txt2img = (1 + 5/6 + 1 + 5/6) / 4 = 11/12.
  //   image queries against the texts (two copies of each one-hot): x0 -> (1,0),(1,0) first: AP 1;
  //     x1 = (0,1) -> its label-1 texts first: 1; x2 = (1,-.5) -> label-0 texts (cos .894) first: 1;
  //     x3 = (-1,0) -> cosines with (1,0) -1, with (0,1) 0: label-1 texts first: 1. img2txt = 1.
  const Tensor img = feats(kDatabase, 4), txt = feats({1, 0, 0, 1, 1, 0, 0, 1}, 4);
  const CrossModalMap m = cross_modal_map(img, labels({0, 1, 0, 1}), txt, labels({0, 1, 0, 1}));
  EXPECT_NEAR(m.img2txt, 1.0, 1e-12);
  EXPECT_NEAR(m.txt2img, 11.0 / 12, 1e-12);
  EXPECT_NEAR(m.average(), (1.0 + 11.0 / 12) / 2, 1e-12);
}

TEST(MapMetric, RejectsBadInput) {
  const Tensor db = feats(kDatabase, 4);
  EXPECT_THROWS_WITH(map_at_k(feats({0, 0}, 1), labels({0}), db, labels({0, 1, 0, 1})), "queries row 0",
                     "non-zero");
  EXPECT_THROWS_WITH(map_at_k(feats({1, 0, 0}, 1), labels({0}), db, labels({0, 1, 0, 1})),
                     "different feature sizes");
  EXPECT_THROWS_WITH(map_at_k(feats({1, 0}, 1), labels({0}), db, labels({0, 1})), "database labels");
  EXPECT_THROWS_WITH(map_at_k(feats({1, 0}, 1), labels({0}), db, labels({0, 1, 0, 1}), -1), "k must be");
}

}  // namespace
}  // namespace rematch::eval
