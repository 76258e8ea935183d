// The losses of mrl (train/methods/mrl/mrl_losses.h) and dscmr (train/methods/dscmr/dscmr_losses.h) and DSCMR's
// network (models/dscmr_model.h): float64 gradient checks against central differences, closed forms at inputs
// where the official expressions reduce to a number, and bad shapes named. (Against the official code itself:
// tests/train/mrl_golden_step_test.cpp, dscmr_golden_step_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>

#include "models/dscmr_model.h"
#include "test_util.h"
#include "train/methods/dscmr/dscmr_losses.h"
#include "train/methods/mrl/mrl_losses.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train {
namespace {

Tensor unit_rows(const Tensor& x) { return l2_normalize(x, 1, 0); }

TEST(MrlLosses, GradientsMatchCentralDifferences) {
  Generator gen(3);
  const Tensor logits = randn({5, 4}, DType::Float64, Device::cpu(), &gen);
  const Tensor q = uotrcl::one_hot_labels({0, 3, 1, 4, 2}, 4, DType::Float64);  // label 4 = K: a zero row
  EXPECT_GRADCHECK([&](const TensorList& in) { return mrl::mean_clustering_error(in[0], q, 0.7); }, {logits});
  const Tensor zv = randn({4, 3}, DType::Float64, Device::cpu(), &gen);
  const Tensor zt = randn({4, 3}, DType::Float64, Device::cpu(), &gen);
  EXPECT_GRADCHECK(
      [](const TensorList& in) { return mrl::multimodal_contrastive_loss(unit_rows(in[0]), unit_rows(in[1]), 0.5); },
      {zv, zt});
}

TEST(MrlLosses, ClosedForms) {
  // Equal logits: pred = 1/K, p = (K − 1)/K for every sample with a label, 1 for the zero row (label K).
  const Tensor q = uotrcl::one_hot_labels({0, 2, 3}, 3, DType::Float64);
  const double mce = mrl::mean_clustering_error(zeros({3, 3}, DType::Float64), q, 1.0).item<double>();
  EXPECT_NEAR(mce, (2 * std::log(2.0 / 3.0) + 0.0) / 3, 1e-15);
  // One pair: the only off-diagonal entry of each row is the partner, so both halves are log 1 = 0.
  const Tensor z = from_vector(std::vector<double>{0.6, 0.8}, {1, 2});
  const Tensor w = from_vector(std::vector<double>{1.0, 0.0}, {1, 2});
  EXPECT_NEAR(mrl::multimodal_contrastive_loss(z, w, 0.3).item<double>(), 0.0, 1e-15);
  // Two pairs, orthonormal views: S[r, s] = e^{cos/τ}; with z_v = (e1, e2), z_t = (e1, e2) each row r holds its
  // partner e^{1/τ} and two zeros-cosine entries e^0: L_c = 2·(−log(e^{1/τ} / (e^{1/τ} + 2))).
  const Tensor e = from_vector(std::vector<double>{1, 0, 0, 1}, {2, 2});
  const double tau = 0.5, partner = std::exp(1 / tau);
  EXPECT_NEAR(mrl::multimodal_contrastive_loss(e, e, tau).item<double>(), -2 * std::log(partner / (partner + 2)),
              1e-14);
}

TEST(MrlLosses, BadInputIsNamed) {
  const Tensor a = zeros({3, 4}, DType::Float64), b = zeros({2, 4}, DType::Float64);
  EXPECT_THROWS_WITH(mrl::mean_clustering_error(a, b, 1.0), "mean_clustering_error", "[B, K]");
  EXPECT_THROWS_WITH(mrl::mean_clustering_error(a, a, 0.0), "tau must be positive");
  EXPECT_THROWS_WITH(mrl::multimodal_contrastive_loss(a, b, 1.0), "multimodal_contrastive_loss", "[B, L]");
}

TEST(DscmrLosses, GradientsMatchCentralDifferences) {
  Generator gen(5);
  const Tensor u = randn({4, 3}, DType::Float64, Device::cpu(), &gen);
  const Tensor v = randn({4, 3}, DType::Float64, Device::cpu(), &gen);
  const Tensor pu = randn({4, 3}, DType::Float64, Device::cpu(), &gen);
  const Tensor pv = randn({4, 3}, DType::Float64, Device::cpu(), &gen);
  const Tensor yv = uotrcl::one_hot_labels({0, 1, 1, 2}, 3, DType::Float64);
  const Tensor yt = uotrcl::one_hot_labels({0, 2, 1, 2}, 3, DType::Float64);
  EXPECT_GRADCHECK([&](const TensorList& in) { return dscmr::label_space_loss(in[0], in[1], yv, yt); }, {pu, pv});
  EXPECT_GRADCHECK([&](const TensorList& in) { return dscmr::common_space_loss(in[0], in[1], yv, yt); }, {u, v});
  EXPECT_GRADCHECK([](const TensorList& in) { return dscmr::invariance_loss(in[0], in[1]); }, {u, v});
}

TEST(DscmrLosses, ClosedForms) {
  const Tensor y = uotrcl::one_hot_labels({0, 1}, 2, DType::Float64);
  // Predictions equal to the labels: term1 = 0; shifted by (3, 4): every row is 5 away.
  EXPECT_NEAR(dscmr::label_space_loss(y, y, y, y).item<double>(), 0.0, 1e-15);
  const Tensor shifted = add(y, from_vector(std::vector<double>{3, 4}, {1, 2}));
  EXPECT_NEAR(dscmr::label_space_loss(shifted, y, y, y).item<double>(), 5.0, 1e-14);
  // Identical views: term3 = 0. Orthonormal u = v = I with labels 0, 1: Θ = I/2, S = I, each of the three
  // blocks is mean over 4 entries of log(1 + e^Θ) − SΘ = [2(log(1 + e^{1/2}) − 1/2) + 2 log 2] / 4.
  const Tensor e = from_vector(std::vector<double>{1, 0, 0, 1}, {2, 2});
  EXPECT_NEAR(dscmr::invariance_loss(e, e).item<double>(), 0.0, 1e-15);
  const double block = (2 * (std::log(1 + std::exp(0.5)) - 0.5) + 2 * std::log(2.0)) / 4;
  EXPECT_NEAR(dscmr::common_space_loss(e, e, y, y).item<double>(), 3 * block, 1e-14);
}

TEST(DscmrModel, GradientsReachEveryParameterAndTheViewsShareTheCommonLayers) {
  models::DscmrConfig c;
  c.img_dim = 5;
  c.txt_dim = 4;
  c.hidden_dim = 6;
  c.common_dim = 3;
  c.num_classes = 2;
  Generator gen(1);
  models::DscmrModel m(c, DType::Float64, &gen);
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"img_net.denseL1.weight", "img_net.denseL1.bias",
                                             "text_net.denseL1.weight", "text_net.denseL1.bias", "linearLayer.weight",
                                             "linearLayer.bias", "linearLayer2.weight", "linearLayer2.bias"}));
  const Tensor x = randn({3, 5}, DType::Float64, Device::cpu(), &gen);
  const Tensor t = randn({3, 4}, DType::Float64, Device::cpu(), &gen);
  const TensorList params = m.parameters();
  // The whole forward as a function of every parameter (IDCM_NN.forward), checked by central differences.
  EXPECT_GRADCHECK(
      [&](const TensorList& in) {
        const Tensor u = nn::linear(relu(nn::linear(x, in[0], in[1])), in[4], in[5]);
        const Tensor v = nn::linear(relu(nn::linear(t, in[2], in[3])), in[4], in[5]);
        return add(sum(square(nn::linear(u, in[6], in[7]))), sum(mul(u, v)));
      },
      params);
  // The module computes the same thing.
  const Tensor u = m.encode_images(x), v = m.encode_texts(t);
  const Tensor want_u = nn::linear(relu(nn::linear(x, params[0], params[1])), params[4], params[5]);
  EXPECT_TRUE(test::all_close(u, want_u, 0, 1e-15));
  EXPECT_EQ(m.classify(v).sizes(), (Shape{3, 2}));
  EXPECT_THROWS_WITH(models::DscmrModel(models::DscmrConfig{}, DType::Float64), "num_classes");
}

}  // namespace
}  // namespace rematch::train
