// UOT-RCL loss terms and relation-OT pieces: closed forms at simple points, float64 gradient checks, and the
// relation cost against a direct JSD loop.
#include "train/methods/uotrcl/uotrcl_losses.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace rematch::train::uotrcl {
namespace {

using test::all_close;
using test::random_tensor;

// Direct JSD of two host distributions (natural log, 0·log 0 = 0).
double jsd_direct(const std::vector<double>& p, const std::vector<double>& q) {
  double d = 0;
  for (size_t k = 0; k < p.size(); ++k) {
    const double m = 0.5 * (p[k] + q[k]);
    if (p[k] > 0) d += 0.5 * p[k] * std::log(p[k] / m);
    if (q[k] > 0) d += 0.5 * q[k] * std::log(q[k] / m);
  }
  return d;
}

Tensor random_distributions(const Shape& shape, uint32_t seed) {
  return softmax(random_tensor(shape, DType::Float64, seed, -2, 2), -1);
}

TEST(UotrclLosses, OneHotLabelsGiveZeroRowsForMrlsOutOfRangeLabel) {
  const Tensor t = one_hot_labels({2, 0, 3}, 3, DType::Float64);
  EXPECT_TRUE(test::values_equal(t, {0, 0, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_THROWS_WITH(one_hot_labels({4}, 3), "label 4", "outside 0..3");
  EXPECT_THROWS_WITH(one_hot_labels({-1}, 3), "label -1");
}

TEST(UotrclLosses, WarmupCrossEntropyAtUniformLogitsIsTwoLogKPerLabelledSample) {
  const int64_t B = 4, K = 5;
  const Tensor logits = zeros({B, K}, DType::Float64);
  const Tensor t = one_hot_labels({0, 1, 2, 3}, K, DType::Float64);
  EXPECT_NEAR(warmup_ce_loss(logits, logits, t, t).item<double>(), 2 * std::log(K), 1e-12);
  // A sample without a class (label K) contributes nothing in its modality: (4 + 3)/4 · log K.
  const Tensor t_missing = one_hot_labels({0, 1, 2, 5}, K, DType::Float64);
  EXPECT_NEAR(warmup_ce_loss(logits, logits, t, t_missing).item<double>(), 7.0 / 4.0 * std::log(K), 1e-12);
}

TEST(UotrclLosses, PlcAtUniformLogitsWeighsEachRowByItsMass) {
  const int64_t K = 4;
  const Tensor logits = zeros({2, K}, DType::Float64);
  // Ŷ rows of mass 0.5 and 1 (Ŷ = N·T, rows sum to at most 1): (0.5 + 1)/2 · 2 log K.
  const Tensor corrected = from_vector<double>({0.25, 0.25, 0, 0, 0, 0.5, 0.5, 0}, {2, K});
  EXPECT_NEAR(plc_loss(logits, logits, corrected).item<double>(), 1.5 * std::log(K), 1e-12);
}

TEST(UotrclLosses, PlcMatchesTheDefinitionAtRandomPoints) {
  const Tensor lv = random_tensor({3, 4}, DType::Float64, 1), lt = random_tensor({3, 4}, DType::Float64, 2);
  const Tensor y = mul(random_distributions({3, 4}, 3), 0.7);
  const auto a = log_softmax(lv, 1).to_vector<double>(), b = log_softmax(lt, 1).to_vector<double>();
  const auto yv = y.to_vector<double>();
  double want = 0;
  for (size_t i = 0; i < yv.size(); ++i) want -= yv[i] * (a[i] + b[i]);
  EXPECT_NEAR(plc_loss(lv, lt, y).item<double>(), want / 3, 1e-12);
}

TEST(UotrclLosses, LossesPassGradcheck) {
  const Tensor lv = random_tensor({3, 4}, DType::Float64, 4), lt = random_tensor({3, 4}, DType::Float64, 5);
  const Tensor y = mul(random_distributions({3, 4}, 6), 0.8);
  const Tensor tv = one_hot_labels({0, 3, 4}, 4, DType::Float64), tt = one_hot_labels({1, 3, 2}, 4, DType::Float64);
  EXPECT_GRADCHECK([&](const TensorList& x) { return warmup_ce_loss(x[0], x[1], tv, tt); }, {lv, lt});
  EXPECT_GRADCHECK([](const TensorList& x) { return plc_loss(x[0], x[1], x[2]); }, {lv, lt, y});
}

TEST(UotrclLosses, JsdClosedForms) {
  const Tensor p = from_vector<double>({1, 0, 0.5, 0.5}, {2, 2});
  const Tensor q = from_vector<double>({0, 1, 0.5, 0.5}, {2, 2});
  // Disjoint supports: log 2; identical: 0.
  EXPECT_TRUE(test::values_equal(jsd(p, q), {std::log(2.0), 0.0}, 1e-15));
  const Tensor a = random_distributions({5, 7}, 7), b = random_distributions({5, 7}, 8);
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  const auto got = jsd(a, b).to_vector<double>();
  for (int64_t i = 0; i < 5; ++i) {
    const std::vector<double> pi(av.begin() + i * 7, av.begin() + (i + 1) * 7);
    const std::vector<double> qi(bv.begin() + i * 7, bv.begin() + (i + 1) * 7);
    EXPECT_NEAR(got[i], jsd_direct(pi, qi), 1e-14);
    EXPECT_GE(got[i], 0);
    EXPECT_LE(got[i], std::log(2.0));
  }
  EXPECT_THROWS_WITH(jsd(a, random_distributions({5, 6}, 9)), "jsd");
}

TEST(UotrclLosses, JsdPassesGradcheck) {
  const Tensor p = random_distributions({3, 4}, 10), q = random_distributions({3, 4}, 11);
  EXPECT_GRADCHECK([](const TensorList& x) { return jsd(x[0], x[1]); }, {p, q});
}

TEST(UotrclLosses, RelationVectorsAreSoftmaxOfCosineOverTau) {
  // Eq. (16) with dist = 1 − cos: the closest confident sample gets the largest weight.
  const Tensor z = from_vector<double>({1, 0, 0, 1}, {2, 2});
  const Tensor g = from_vector<double>({1, 0, 0, 2, -1, 0}, {3, 2});
  const double tau = 0.5;
  const Tensor R = relation_vectors(z, g, tau);
  const double e1 = std::exp(1 / tau), e0 = 1, em = std::exp(-1 / tau);
  const double s = e1 + e0 + em, s2 = e0 + e1 + e0;
  // 1e-7: cosine_similarity_matrix divides by ‖x‖ + 1e-8.
  EXPECT_TRUE(test::values_equal(R, {e1 / s, e0 / s, em / s, e0 / s2, e1 / s2, e0 / s2}, 1e-7));
  EXPECT_GRADCHECK([](const TensorList& x) { return relation_vectors(x[0], x[1], 1.0); },
                   {random_tensor({3, 4}, DType::Float64, 12), random_tensor({5, 4}, DType::Float64, 13)});
  EXPECT_THROWS_WITH(relation_vectors(z, zeros({0, 2}, DType::Float64), 1.0), "confident set is empty");
}

TEST(UotrclLosses, RelationCostIsThePairwiseJsd) {
  const Tensor Rv = random_distributions({4, 6}, 14), Rt = random_distributions({3, 6}, 15);
  const Tensor C = relation_cost(Rv, Rt);
  ASSERT_EQ(C.sizes(), (Shape{4, 3}));
  const auto rv = Rv.to_vector<double>(), rt = Rt.to_vector<double>(), c = C.to_vector<double>();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_NEAR(c[i * 3 + j], jsd_direct({rv.begin() + i * 6, rv.begin() + (i + 1) * 6},
                                           {rt.begin() + j * 6, rt.begin() + (j + 1) * 6}),
                  1e-14);
  // The same relation vectors in both modalities: a zero diagonal.
  const auto self = relation_cost(Rv, Rv).to_vector<double>();
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(self[i * 4 + i], 0, 1e-15);
}

TEST(UotrclLosses, RelationPlanHasUniformMarginalsAndNormalisingIsAnEpsilonScale) {
  const Tensor C = relation_cost(random_distributions({6, 5}, 16), random_distributions({6, 5}, 17));
  RelationOtOptions o;
  o.epsilon = 0.1;
  o.max_iter = 2000;
  o.tol = 1e-12;
  const ot::SinkhornResult r = relation_plan(C, o);
  EXPECT_TRUE(r.converged);
  EXPECT_TRUE(all_close(sum(r.plan, {1}), full({6}, 1.0 / 6, DType::Float64), 1e-10, 0));
  EXPECT_TRUE(all_close(sum(r.plan, {0}), full({6}, 1.0 / 6, DType::Float64), 1e-10, 0));
  // C/mean(C) at ε equals C at ε·mean(C).
  RelationOtOptions raw = o;
  raw.normalize_cost = false;
  raw.epsilon = o.epsilon * mean(C).item<double>();
  EXPECT_TRUE(all_close(relation_plan(C, raw).plan, r.plan, 1e-12, 1e-9));
  // All-zero costs: the uniform plan.
  EXPECT_TRUE(all_close(relation_plan(zeros({3, 3}, DType::Float64), o).plan, full({3, 3}, 1.0 / 9, DType::Float64),
                        1e-14, 0));
}

TEST(UotrclLosses, BhgClosedForms) {
  const int64_t B = 4;
  // Identical embeddings: every matching probability is 1/B, so L_BHG = 2 log B whatever the plan.
  const Tensor same = expand(from_vector<double>({0.6, 0.8}, {1, 2}), {B, 2});
  const Tensor plan = random_distributions({B, B}, 18);
  EXPECT_NEAR(bhg_loss(same, same, plan, 1.0).item<double>(), 2 * std::log(B), 1e-12);
  // A diagonal plan: the InfoNCE of the given pairs in both directions.
  const Tensor zv = l2_normalize(random_tensor({B, 3}, DType::Float64, 19), 1);
  const Tensor zt = l2_normalize(random_tensor({B, 3}, DType::Float64, 20), 1);
  const double tau = 0.5;
  const Tensor S = div(matmul(zv, transpose(zt, 0, 1)), tau);
  const auto v2t = log_softmax(S, 1).to_vector<double>(), t2v = log_softmax(transpose(S, 0, 1), 1).to_vector<double>();
  double want = 0;
  for (int64_t i = 0; i < B; ++i) want -= v2t[i * B + i] + t2v[i * B + i];
  EXPECT_NEAR(bhg_loss(zv, zt, div(eye(B, B, DType::Float64), B), tau).item<double>(), want / B, 1e-12);
}

TEST(UotrclLosses, BhgNormalisesRowsForV2tAndColumnsForT2v) {
  const int64_t B = 3;
  const Tensor zv = l2_normalize(random_tensor({B, 4}, DType::Float64, 21), 1);
  const Tensor zt = l2_normalize(random_tensor({B, 4}, DType::Float64, 22), 1);
  const Tensor M = random_distributions({B, B}, 23);
  const Tensor S = matmul(zv, transpose(zt, 0, 1));
  const auto lv = log_softmax(S, 1).to_vector<double>(), lt = log_softmax(transpose(S, 0, 1), 1).to_vector<double>();
  const auto m = M.to_vector<double>();
  double want = 0;
  for (int64_t i = 0; i < B; ++i) {
    double row = 0, col = 0;
    for (int64_t j = 0; j < B; ++j) row += m[i * B + j], col += m[j * B + i];
    for (int64_t j = 0; j < B; ++j) want -= m[i * B + j] / row * lv[i * B + j] + m[j * B + i] / col * lt[i * B + j];
  }
  EXPECT_NEAR(bhg_loss(zv, zt, M, 1.0).item<double>(), want / B, 1e-12);
  EXPECT_GRADCHECK([&](const TensorList& x) { return bhg_loss(x[0], x[1], M, 0.7); }, {zv, zt});
  EXPECT_THROWS_WITH(bhg_loss(zv, zt, zeros({2, 2}, DType::Float64), 1.0), "plan");
}

}  // namespace
}  // namespace rematch::train::uotrcl
