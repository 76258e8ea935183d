// UOT-RCL label correction: the confident set on a hand-made case, the blocked k-NN search against brute force,
// the consistency ratios and neighbour votes against loops, the clamps of C_S, the partial OT
// (docs/methods/uotrcl.md §4.6: Σ T → s as ε → 0, column sums ≤ 1/K), the target moving average and the mass
// schedule.
#include "train/methods/uotrcl/label_correction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "test_util.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train::uotrcl {
namespace {

using test::all_close;
using test::random_tensor;

std::vector<double> row(const std::vector<double>& v, int64_t cols, int64_t i) {
  return {v.begin() + i * cols, v.begin() + (i + 1) * cols};
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t k = 0; k < a.size(); ++k) ab += a[k] * b[k], aa += a[k] * a[k], bb += b[k] * b[k];
  return ab / std::sqrt(aa * bb);
}

TEST(UotrclLabelCorrection, ConfidentSetTakesTheSmallestJsdPerPredictedClass) {
  // Six pairs, three classes. Class 0 is predicted for pairs 0, 1, 2 (pair 1 agrees best across modalities,
  // then 2, then 0); class 1 for pair 3 only; class 2 for pairs 4, 5 (5 agrees exactly).
  const Tensor p_v = from_vector<double>({0.6, 0.3, 0.1,  0.8, 0.1, 0.1,  0.7, 0.2, 0.1,
                                          0.1, 0.8, 0.1,  0.2, 0.1, 0.7,  0.1, 0.1, 0.8}, {6, 3});
  const Tensor p_t = from_vector<double>({0.9, 0.05, 0.05, 0.8, 0.1, 0.1, 0.6, 0.3, 0.1,
                                          0.3, 0.6, 0.1,   0.1, 0.3, 0.6, 0.1, 0.1, 0.8}, {6, 3});
  EXPECT_EQ(confident_set(p_v, p_t, 2), (std::vector<int64_t>{1, 2, 3, 5, 4}));
  EXPECT_EQ(confident_set(p_v, p_t, 1), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(confident_set(p_v, p_t, 5).size(), 6u);
  EXPECT_THROWS_WITH(confident_set(p_v, p_t, 0), "per_class");
}

TEST(UotrclLabelCorrection, NearestNeighboursMatchBruteForceAcrossBlocks) {
  const int64_t n = 37, d = 5, k = 6;
  const Tensor z = random_tensor({n, d}, DType::Float64, 31);
  const auto zv = z.to_vector<double>();
  for (int64_t block : {int64_t{1} << 24, n * 4, n}) {  // one block, blocks of 4 rows, blocks of 1 row
    const Neighbours nb = nearest_neighbours(z, k, block);
    ASSERT_EQ(nb.index.sizes(), (Shape{n, k}));
    const auto idx = nb.index.to_vector<int64_t>();
    const auto sim = nb.similarity.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      std::vector<std::pair<double, int64_t>> all;
      for (int64_t j = 0; j < n; ++j)
        if (j != i) all.push_back({-cosine(row(zv, d, i), row(zv, d, j)), j});
      std::sort(all.begin(), all.end());
      for (int64_t r = 0; r < k; ++r) {
        EXPECT_EQ(idx[i * k + r], all[r].second) << "row " << i << " rank " << r << " block " << block;
        EXPECT_NEAR(sim[i * k + r], -all[r].first, 1e-7);  // l2_normalize's eps 1e-8 on the norm
      }
    }
  }
  EXPECT_THROWS_WITH(nearest_neighbours(z, n, 1 << 20), "1..N-1");
}

TEST(UotrclLabelCorrection, ConsistencyRatiosAndVotesMatchLoops) {
  const int64_t n = 12, d = 4, K = 3, k = 3;
  const Tensor zv = random_tensor({n, d}, DType::Float64, 32), zt = random_tensor({n, d}, DType::Float64, 33);
  const Tensor y = softmax(random_tensor({n, K}, DType::Float64, 34), 1);
  const std::vector<int64_t> G = {2, 7, 9};
  const auto [c_v, c_t, clamped] = consistency_ratios(zv, zt, G);
  const auto a = zv.to_vector<double>(), b = zt.to_vector<double>(), yv = y.to_vector<double>();
  const auto cv = c_v.to_vector<double>(), ct = c_t.to_vector<double>();
  int64_t want_clamped = 0;
  for (int64_t i = 0; i < n; ++i) {
    // Eq. (7): the closest confident pair in one space; its cosine there over the cosine in the other space.
    int64_t gv = G[0], gt = G[0];
    for (int64_t g : G) {
      if (cosine(row(a, d, i), row(a, d, g)) > cosine(row(a, d, i), row(a, d, gv))) gv = g;
      if (cosine(row(b, d, i), row(b, d, g)) > cosine(row(b, d, i), row(b, d, gt))) gt = g;
    }
    const double den_v = cosine(row(b, d, i), row(b, d, gv)), den_t = cosine(row(a, d, i), row(a, d, gt));
    const double want_v = cosine(row(a, d, i), row(a, d, gv)) / std::max(den_v, 1e-6);
    const double want_t = cosine(row(b, d, i), row(b, d, gt)) / std::max(den_t, 1e-6);
    want_clamped += den_v < 1e-6 || den_t < 1e-6;
    // Relative 1e-6: l2_normalize's eps (1e-8 on the norm), magnified where a denominator is clamped.
    EXPECT_NEAR(cv[i], want_v, 1e-6 * std::max(1.0, std::abs(want_v))) << i;
    EXPECT_NEAR(ct[i], want_t, 1e-6 * std::max(1.0, std::abs(want_t))) << i;
  }
  EXPECT_EQ(clamped, want_clamped);
  EXPECT_GT(clamped, 0);  // random embeddings: some pairs disagree in sign across the two spaces
  const Neighbours nb = nearest_neighbours(zv, k);
  const auto votes = neighbour_votes(nb, y).to_vector<double>();
  const auto idx = nb.index.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < K; ++c) {
      double want = 0;
      for (int64_t r = 0; r < k; ++r) {
        const int64_t j = idx[i * k + r];
        want += cosine(row(a, d, i), row(a, d, j)) * yv[j * K + c];
      }
      EXPECT_NEAR(votes[i * K + c], want / k, 1e-7);
    }
}

TEST(UotrclLabelCorrection, ConsistentCostClampsTheBracket) {
  const Tensor c_v = from_vector<double>({1.0, -2.0}), c_t = from_vector<double>({0.5, 0.0});
  const Tensor votes_v = from_vector<double>({0.4, 0.2, 0.3, 0.1}, {2, 2});
  const Tensor votes_t = from_vector<double>({0.2, 0.0, 0.9, 0.9}, {2, 2});
  // Row 0: −log(0.4 + 0.1), −log(0.2); row 1: the bracket is −0.6 and −0.2, clamped to 1e-8.
  EXPECT_TRUE(test::values_equal(consistent_cost(c_v, votes_v, c_t, votes_t),
                                 {-std::log(0.5), -std::log(0.2), -std::log(1e-8), -std::log(1e-8)}, 1e-12));
}

TEST(UotrclLabelCorrection, PartialOtMassTendsToSAndColumnsStayBelowOneOverK) {
  // docs/methods/uotrcl.md §4.6: Σ_{i,k} T_ik → s as ε → 0; real columns carry at most 1/K, real rows at most 1/N.
  const int64_t n = 40, K = 4;
  const Tensor C = random_tensor({n, K}, DType::Float64, 35, 0, 3);
  const double s = 0.3;
  double previous_excess = 1;
  for (double eps : {0.5, 0.1, 0.05, 0.02}) {
    LabelCorrectionOptions o;
    o.epsilon = eps;
    o.relative = false;
    o.max_iter = 100000;
    o.tol = 1e-10;
    const LabelCorrection lc = correct_labels(C, s, o);
    ASSERT_TRUE(lc.converged) << "eps " << eps;
    const Tensor T = div(lc.corrected, static_cast<double>(n));
    const double excess = lc.mass - s;
    EXPECT_NEAR(sum(T).item<double>(), lc.mass, 1e-12);
    EXPECT_GE(excess, -1e-9) << "eps " << eps;  // the zero-cost corner adds Eq. (13)'s slack, never removes mass
    EXPECT_LT(excess, previous_excess) << "eps " << eps;
    previous_excess = excess;
    for (double col : sum(T, {0}).to_vector<double>()) EXPECT_LE(col, 1.0 / K + 1e-9);
    for (double r : sum(lc.corrected, {1}).to_vector<double>()) EXPECT_LE(r, 1.0 + 1e-9);
    std::cout << "[ label OT ] eps " << eps << ": transported mass " << lc.mass << " (s = " << s << ")\n";
  }
  EXPECT_LT(previous_excess, 1e-4);
  // A priced corner removes the slack at the same ε.
  LabelCorrectionOptions priced;
  priced.epsilon = 0.02;
  priced.relative = false;
  priced.max_iter = 100000;
  priced.tol = 1e-11;
  priced.corner = 1.0;
  EXPECT_NEAR(correct_labels(C, s, priced).mass, s, 1e-6);
}

TEST(UotrclLabelCorrection, PartialOtPrefersLowCostRowsAndClasses) {
  // Two cheap rows per class: at small ε and s = 1/2 the plan takes exactly them, each to its own class.
  const int64_t n = 8, K = 2;
  std::vector<double> c(n * K, 2.0);
  for (int64_t i : {0, 3}) c[i * K + 0] = 0.1;
  for (int64_t i : {5, 6}) c[i * K + 1] = 0.1;
  LabelCorrectionOptions o;
  o.epsilon = 0.01;
  o.relative = false;
  o.max_iter = 100000;
  o.tol = 1e-12;
  o.corner = 0.5;
  const auto Y = correct_labels(from_vector(c, {n, K}), 0.5, o).corrected.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    const bool cheap0 = i == 0 || i == 3, cheap1 = i == 5 || i == 6;
    EXPECT_NEAR(Y[i * K + 0], cheap0 ? 1.0 : 0.0, 1e-4) << i;
    EXPECT_NEAR(Y[i * K + 1], cheap1 ? 1.0 : 0.0, 1e-4) << i;
  }
}

TEST(UotrclLabelCorrection, ShiftingTheCostEqualsPricingTheCorner) {
  // C + c with a zero corner and C with corner c give one plan (row/column shifts of the potentials), which is
  // why correct_labels may shift a C_S with negative entries up to 0.
  const Tensor C = random_tensor({10, 3}, DType::Float64, 36, 0, 2);
  ot::SinkhornOptions o;
  o.epsilon = 0.1;
  o.max_iter = 100000;
  o.tol = 1e-12;
  ot::DummyOptions zero;
  zero.costs = ot::DummyCost::Zero;
  ot::DummyOptions priced = zero;
  priced.corner = 0.7;
  const Tensor a = full({10}, 0.1, DType::Float64), b = full({3}, 1.0 / 3, DType::Float64);
  EXPECT_TRUE(all_close(ot::partial_sinkhorn(add(C, 0.7), a, b, 0.4, o, zero).plan,
                        ot::partial_sinkhorn(C, a, b, 0.4, o, priced).plan, 1e-10, 1e-7));
  // correct_labels on C − 0.7 (negative entries) therefore solves C with the corner priced at 0.7 − min(C).
  LabelCorrectionOptions lo;
  lo.epsilon = 0.1;
  lo.relative = false;
  lo.max_iter = 100000;
  lo.tol = 1e-12;
  const LabelCorrection lc = correct_labels(sub(C, 0.7), 0.4, lo);
  const double min_c = amin(C).item<double>();
  EXPECT_NEAR(lc.cost_shift, min_c - 0.7, 1e-15);
  ot::DummyOptions shifted = zero;
  shifted.corner = 0.0;
  EXPECT_TRUE(all_close(div(lc.corrected, 10.0), ot::partial_sinkhorn(sub(C, min_c), a, b, 0.4, o, shifted).plan,
                        1e-10, 1e-7));
}

TEST(UotrclLabelCorrection, RelativeEpsilonScalesWithTheMeanCost) {
  const Tensor C = random_tensor({20, 3}, DType::Float64, 37, 0.5, 4);
  LabelCorrectionOptions o;
  o.epsilon = 0.1;
  o.relative = true;
  const LabelCorrection lc = correct_labels(C, 0.5, o);
  EXPECT_NEAR(lc.epsilon, 0.1 * mean(C).item<double>(), 1e-12);
  EXPECT_EQ(lc.cost_shift, 0);
  EXPECT_THROWS_WITH(correct_labels(C, 0, o), "transported mass");
  EXPECT_THROWS_WITH(correct_labels(C, 1.5, o), "transported mass");
}

TEST(UotrclLabelCorrection, CrossModalCostPutsTheLowestCostOnTheNeighboursClass) {
  // Two well-separated clusters in both spaces with clean targets: each sample's cheapest class is its
  // cluster's.
  const int64_t n = 20, K = 2;
  std::vector<double> zv, zt, y;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % 2;
    zv.insert(zv.end(), {c == 0 ? 1.0 : 0.01 * i, c == 0 ? 0.01 * i : 1.0});
    zt.insert(zt.end(), {c == 0 ? 1.0 : -0.005 * i, c == 0 ? -0.01 * i : 1.0});
    y.insert(y.end(), {c == 0 ? 1.0 : 0.0, c == 0 ? 0.0 : 1.0});
  }
  const Tensor Y = from_vector(y, {n, K});
  const Tensor p = add(mul(Y, 0.8), 0.1);
  const ConsistentCost cc =
      cross_modal_consistent_cost(from_vector(zv, {n, 2}), from_vector(zt, {n, 2}), p, p, Y, 3, 4);
  EXPECT_EQ(cc.confident.size(), 6u);
  const auto cost = cc.cost.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) EXPECT_LT(cost[i * K + i % 2], cost[i * K + 1 - i % 2]) << i;
}

TEST(UotrclLabelCorrection, TargetUpdateIsTheMovingAverageOfEq9) {
  // Prototypes e0, e1; the pair's summed embedding points at class 1.
  const Tensor targets = from_vector<double>({1, 0, 0.5, 0.5}, {2, 2});
  const Tensor zv = from_vector<double>({0.2, 0.9, 0.9, 0.1}, {2, 2});
  const Tensor zt = from_vector<double>({0.1, 0.3, 0.8, 0.0}, {2, 2});
  const Tensor protos = eye(2, 2, DType::Float64);
  EXPECT_TRUE(test::values_equal(update_targets(targets, zv, zt, protos, 0.9),
                                 {0.9, 0.1, 0.45 + 0.1, 0.45}, 1e-15));
  EXPECT_TRUE(test::values_equal(update_targets(targets, zv, zt, protos, 1.0), {1, 0, 0.5, 0.5}));
}

TEST(UotrclLabelCorrection, MassScheduleIsLinearOverTheMainEpochs) {
  EXPECT_DOUBLE_EQ(transported_mass(2, 2, 100, 0.2, 0.8), 0.2);
  EXPECT_DOUBLE_EQ(transported_mass(99, 2, 100, 0.2, 0.8), 0.8);
  EXPECT_NEAR(transported_mass(50, 2, 100, 0.2, 0.8), 0.2 + 0.6 * 48 / 97, 1e-15);
  EXPECT_DOUBLE_EQ(transported_mass(3, 3, 4, 0.2, 0.8), 0.2);
  EXPECT_THROWS_WITH(transported_mass(1, 2, 100, 0.2, 0.8), "not a main epoch");
}

}  // namespace
}  // namespace rematch::train::uotrcl
