// UOT-RCL's label correction and relation alignment against an independent NumPy + POT transcription
// (tests/reference/uotrcl_reference.py, fixtures in tests/fixtures/uotrcl/): confident set, 𝒦-NN, consistency
// ratios, neighbour votes, C_S, the (N+1)×(K+1) partial OT, relation vectors, C^R, the relation plan, L_PLC and
// L_BHG on one float64 case.
#include <gtest/gtest.h>

#include "tensor/npy.h"
#include "test_util.h"
#include "train/methods/uotrcl/label_correction.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train::uotrcl {
namespace {

using test::all_close;

Tensor fixture(const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/uotrcl/case." + name + ".npy");
}

std::vector<int64_t> as_indices(const Tensor& t) {
  std::vector<int64_t> out;
  for (double v : t.to_vector<double>()) out.push_back(static_cast<int64_t>(v));
  return out;
}

TEST(UotrclReference, LabelCorrectionMatchesNumpyAndPot) {
  const Tensor z_v = fixture("z_v"), z_t = fixture("z_t"), protos = fixture("prototypes");
  const Tensor targets = fixture("targets");
  const std::vector<double> meta = fixture("meta").to_vector<double>();
  const int64_t per_class = static_cast<int64_t>(meta[0]), knn = static_cast<int64_t>(meta[1]);
  const double s = meta[2], lc_eps = meta[3], tau1 = meta[6];
  const Tensor p_v = softmax(div(matmul(z_v, protos), tau1), 1), p_t = softmax(div(matmul(z_t, protos), tau1), 1);

  const std::vector<int64_t> G = confident_set(p_v, p_t, per_class);
  EXPECT_EQ(G, as_indices(fixture("confident")));
  const Neighbours nv = nearest_neighbours(z_v, knn), nt = nearest_neighbours(z_t, knn);
  EXPECT_EQ(nv.index.to_vector<int64_t>(), as_indices(fixture("knn_v")));
  EXPECT_EQ(nt.index.to_vector<int64_t>(), as_indices(fixture("knn_t")));
  const auto [c_v, c_t, clamped] = consistency_ratios(z_v, z_t, G);
  // Ratios reach ~1e6 where a denominator is clamped to 1e-6; l2_normalize's eps leaves ~1e-8 relative.
  EXPECT_TRUE(all_close(c_v, fixture("c_v"), 1e-9, 1e-6));
  EXPECT_TRUE(all_close(c_t, fixture("c_t"), 1e-9, 1e-6));
  EXPECT_GT(clamped, 0);
  const Tensor votes_v = neighbour_votes(nv, targets), votes_t = neighbour_votes(nt, targets);
  EXPECT_TRUE(all_close(votes_v, fixture("votes_v"), 1e-7, 1e-7));
  EXPECT_TRUE(all_close(votes_t, fixture("votes_t"), 1e-7, 1e-7));
  const Tensor cost = consistent_cost(c_v, votes_v, c_t, votes_t);
  EXPECT_TRUE(all_close(cost, fixture("cost"), 1e-6, 1e-7));
  const ConsistentCost cc = cross_modal_consistent_cost(z_v, z_t, p_v, p_t, targets, per_class, knn);
  EXPECT_EQ(cc.confident, G);
  EXPECT_TRUE(all_close(cc.cost, cost, 0, 0));

  LabelCorrectionOptions o;
  o.epsilon = lc_eps;
  o.relative = false;
  o.max_iter = 200000;
  o.tol = 1e-13;
  const LabelCorrection lc = correct_labels(fixture("cost"), s, o);
  EXPECT_TRUE(lc.converged);
  EXPECT_TRUE(all_close(lc.corrected, fixture("corrected"), 1e-8, 1e-6));
  EXPECT_NEAR(lc.mass, sum(fixture("corrected")).item<double>() / z_v.size(0), 1e-9);
}

TEST(UotrclReference, RelationAlignmentMatchesNumpyAndPot) {
  const Tensor z_v = fixture("z_v"), z_t = fixture("z_t"), protos = fixture("prototypes");
  const std::vector<double> meta = fixture("meta").to_vector<double>();
  const double rel_eps = meta[4], tau1 = meta[6], tau2 = meta[7], tau3 = meta[8];
  const int64_t B = static_cast<int64_t>(meta[5]);
  const Tensor G = from_vector(as_indices(fixture("confident")));
  const Tensor bv = narrow(z_v, 0, 0, B), bt = narrow(z_t, 0, 0, B);
  const Tensor R_v = relation_vectors(bv, index_select(z_v, 0, G), tau2);
  const Tensor R_t = relation_vectors(bt, index_select(z_t, 0, G), tau2);
  EXPECT_TRUE(all_close(R_v, fixture("R_v"), 1e-9, 1e-7));
  EXPECT_TRUE(all_close(R_t, fixture("R_t"), 1e-9, 1e-7));
  const Tensor C = relation_cost(R_v, R_t);
  EXPECT_TRUE(all_close(C, fixture("relation_cost"), 1e-10, 1e-6));
  RelationOtOptions o;
  o.epsilon = rel_eps;
  o.max_iter = 200000;
  o.tol = 1e-14;
  const ot::SinkhornResult r = relation_plan(fixture("relation_cost"), o);
  EXPECT_TRUE(all_close(r.plan, fixture("relation_plan"), 1e-12, 1e-8));

  const Tensor lv = div(matmul(bv, protos), tau1), lt = div(matmul(bt, protos), tau1);
  EXPECT_NEAR(plc_loss(lv, lt, narrow(fixture("corrected"), 0, 0, B)).item<double>(), fixture("plc").item<double>(),
              1e-12);
  EXPECT_NEAR(bhg_loss(bv, bt, fixture("relation_plan"), tau3).item<double>(), fixture("bhg").item<double>(), 1e-12);
}

}  // namespace
}  // namespace rematch::train::uotrcl
