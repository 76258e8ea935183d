// Hessian-vector products against PyTorch's double backward (tests/reference/hvp_reference.py, fixtures in
// tests/fixtures/hvp/): for the VSE++ hardest-negative triplet loss on SGR's and SAF's train-mode similarity
// matrix, and for L2RM's cost-function loss Σ π ⊙ f_c(S) on SGR's eval-mode matrix, with the weights and batch
// of tests/fixtures/sgraf, g = grad(loss, θ, create_graph) and Hv = grad(Σ_k <g_k, v_k>, θ) over every
// parameter θ (the cost net's too), compared entry by entry in float64. This goes through every op of the
// similarity network twice: attention, graph reasoning, BatchNorm with batch and with running statistics,
// l1/l2 normalisation, the masked softmaxes, the Bi-GRU (its fused backward's derivative) and the embedding.
//
// Tolerance: |ours − torch| ≤ 1e-10 per entry of Hv (whose largest entries are 14 to 65 here; observed ≤ 6e-12),
// and 1e-12 relative (plus 1e-12 of the largest Hv entry) for the first-order gradient. The two sides sum in
// different orders (the reference loops over captions, ours is batched), which is all the difference there is.
#include <cmath>
#include <cstdio>

#include "model_test_util.h"
#include "models/cost_net.h"
#include "models/sgraf_model.h"
#include "sgraf_fixture.h"
#include "nn/functional.h"

namespace rematch::models {
namespace {

const std::string kSgraf = std::string(REMATCH_FIXTURES) + "/sgraf/";
const std::string kHvp = std::string(REMATCH_FIXTURES) + "/hvp/";

Tensor load(const std::string& path) { return load_npy(path + ".npy"); }

struct Net {
  std::unique_ptr<SgrafModel> model;
  Tensor images, captions, lengths;
};

Net fixture_net(SimilarityModule module) {
  const std::string dir = kSgraf + (module == SimilarityModule::SGR ? "sgr/" : "saf/");
  Net net;
  net.model = std::make_unique<SgrafModel>(sgraf_fixture_config(module), DType::Float64);
  nn::StateDict state;
  for (const auto& [name, t] : net.model->state_dict()) state.emplace_back(name, load(dir + name));
  net.model->load_state_dict(state);
  net.images = load(dir + "images");
  net.captions = load(dir + "captions");
  net.lengths = load(dir + "lengths");
  return net;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.to_vector<double>()) m = std::max(m, std::fabs(v));
  return m;
}

// The loss's gradient and Hessian-vector product over `params` against the fixture folder `c`.
void check_hvp(const std::string& c, const Tensor& loss, const nn::NamedTensors& params) {
  const std::string dir = kHvp + c + "/";
  EXPECT_NEAR(loss.item<double>(), load(dir + "loss").item<double>(), 1e-12) << c;
  TensorList theta, v;
  for (const auto& [name, p] : params) {
    theta.push_back(p);
    v.push_back(load(dir + "v." + name));
  }
  GradOptions opt;
  opt.create_graph = true;
  const TensorList g = grad({loss}, theta, {}, opt);
  Tensor inner;
  for (size_t k = 0; k < g.size(); ++k) {
    const Tensor term = sum(mul(g[k], v[k]));
    inner = inner.defined() ? add(inner, term) : term;
  }
  // A parameter whose gradient has no graph (the cost net's bias: ReLU's derivative is a constant mask) gets
  // no second derivative here, where torch's threshold_backward records a zero one.
  GradOptions unused_ok;
  unused_ok.allow_unused = true;
  TensorList hv = grad({inner}, theta, {}, unused_ok);
  for (size_t k = 0; k < hv.size(); ++k)
    if (!hv[k].defined()) hv[k] = zeros(theta[k].sizes(), DType::Float64);
  double scale = 0, worst = 0;
  for (const auto& [name, p] : params) scale = std::max(scale, max_abs(load(dir + "hvp." + name)));
  for (size_t k = 0; k < params.size(); ++k) {
    const std::string& name = params[k].first;
    EXPECT_TRUE(test::all_close(g[k], load(dir + "grad." + name), 1e-12 * scale, 1e-12)) << c << " grad." << name;
    const Tensor want = load(dir + "hvp." + name);
    EXPECT_TRUE(test::all_close(hv[k], want, 1e-10, 0)) << c << " hvp." << name;
    worst = std::max(worst, max_abs(kernels::binary(kernels::BinaryOp::Sub, hv[k], want)));
  }
  std::printf("[ hvp ] %s: %zu parameters, largest |Hv| %.4g, largest |ours - torch| %.3g (%.3g of it)\n",
              c.c_str(), params.size(), scale, worst, worst / scale);
}

TEST(HvpGolden, SgrTripletLossEqualsTorchDoubleBackward) {
  Net net = fixture_net(SimilarityModule::SGR);
  net.model->train();
  const Tensor loss = nn::hardest_negative_triplet((*net.model)(net.images, net.captions, net.lengths), 0.2, true);
  check_hvp("sgr_triplet", loss, net.model->named_parameters());
}

TEST(HvpGolden, SafTripletLossEqualsTorchDoubleBackward) {
  Net net = fixture_net(SimilarityModule::SAF);
  net.model->train();
  const Tensor loss = nn::hardest_negative_triplet((*net.model)(net.images, net.captions, net.lengths), 0.2, true);
  check_hvp("saf_triplet", loss, net.model->named_parameters());
}

TEST(HvpGolden, L2rmCostLossEqualsTorchDoubleBackward) {
  Net net = fixture_net(SimilarityModule::SGR);
  net.model->eval();
  CostNet cost(5, DType::Float64);
  nn::StateDict state;
  for (const auto& [name, t] : cost.state_dict()) state.emplace_back(name, load(kHvp + "l2rm_cost/" + name));
  cost.load_state_dict(state);
  const Tensor s = (*net.model)(net.images, net.captions, net.lengths);
  const Tensor loss = sum(mul(load(kHvp + "l2rm_cost/plan"), cost.forward(s)));
  nn::NamedTensors params = net.model->named_parameters();
  for (const auto& [name, p] : cost.named_parameters()) params.emplace_back(name, p);
  check_hvp("l2rm_cost", loss, params);
}

}  // namespace
}  // namespace rematch::models
