// train/losses/retrieval_losses.h: values and gradients w.r.t. S against the official PyTorch code (RCL CCL and
// its infoNCE baseline, L2RM RCE, the four rematch losses, the per-sample split loss; fixtures from
// tests/reference/retrieval_losses_reference.py) in float64 and float32, float64 gradchecks, the closed forms
// of docs/methods/l2rm.md §1.11, rcl.md §2.4 at a uniform batch, the random negative mask, and bad input.
#include "train/losses/retrieval_losses.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace rematch::losses {
namespace {

Tensor fixture(const std::string& case_name, const std::string& name, DType dtype = DType::Float64) {
  return kernels::cast(load_npy(std::string(REMATCH_FIXTURES) + "/losses/" + case_name + "/" + name + ".npy"),
                       dtype);
}
double input_scalar(const std::string& name) { return fixture("inputs", name).item<double>(); }

// S / τ reaches 20 here, so float32 logits carry ~1e-6 relative error that the softmaxes pass on to the
// losses (3e-7 measured) and their gradients (1.7e-5 measured, CCL log); 1e-4 keeps a margin while a formula
// slip shows at 1e-2.
constexpr double kF32Tol = 1e-4;
// float64: the reference sums in another order and takes logs of quotients where we subtract log-sum-exps
// (2e-14 measured).
constexpr double kF64Tol = 1e-12;

// Runs f on the fixture's S (as `dtype`) and compares the value and dL/dS (for a [B] loss, of Σ r·loss).
void check_golden(const std::string& case_name, const std::function<Tensor(const Tensor&)>& f, DType dtype,
                  double tol) {
  Tensor s = fixture("inputs", "scores", dtype);
  s.requires_grad_(true);
  const Tensor loss = f(s);
  EXPECT_TRUE(test::all_close(loss, fixture(case_name, "loss"), tol, tol)) << case_name;
  backward(loss.dim() == 0 ? loss : sum(mul(loss, fixture("inputs", "r", dtype))));
  EXPECT_TRUE(test::all_close(s.grad(), fixture(case_name, "grad"), tol, tol)) << case_name << " gradient";
}

struct GoldenCase {
  std::string name;
  std::function<Tensor(const Tensor&)> f;
};

std::vector<GoldenCase> golden_cases(DType dtype) {
  const double tau = input_scalar("tau"), margin = input_scalar("margin"), q = input_scalar("q");
  std::vector<GoldenCase> cases;
  cases.push_back({"infonce", [=](const Tensor& s) { return infonce_loss(s, tau); }});
  for (const char* phi : {"log", "tan", "abs", "exp", "gce"})
    for (const char* tag : {"all", "ratio"}) {
      const Tensor mask = fixture("inputs", std::string("mask_") + tag, dtype);
      const ComplementaryPhi p = parse_complementary_phi(phi);
      cases.push_back({std::string("ccl_") + phi + "_" + tag,
                       [=](const Tensor& s) { return complementary_contrastive_loss(s, tau, p, q, mask); }});
    }
  for (const char* label : {"code", "paper"}) {
    const RceLabel l = parse_rce_label(label);
    cases.push_back({std::string("warmup_") + label, [=](const Tensor& s) { return l2rm_warmup_loss(s, tau, l); }});
  }
  for (const char* mode : {"mean", "hardest"}) {
    const SplitLoss m = parse_split_loss(mode);
    cases.push_back({std::string("split_") + mode, [=](const Tensor& s) { return per_sample_split_loss(s, margin, m); }});
  }
  const Tensor plan = fixture("inputs", "plan");  // float64 even on the float32 path: the loss casts it
  for (const char* variant : {"sym_kl", "kl", "soft_infonce", "js"}) {
    const RematchLoss v = parse_rematch_loss(variant);
    cases.push_back({std::string("rematch_") + variant, [=](const Tensor& s) { return rematch_kl_loss(s, plan, tau, v); }});
  }
  return cases;
}

TEST(RetrievalLossGolden, MatchesOfficialCodeFloat64) {
  for (const GoldenCase& c : golden_cases(DType::Float64)) check_golden(c.name, c.f, DType::Float64, kF64Tol);
}

TEST(RetrievalLossGolden, MatchesOfficialCodeFloat32) {
  for (const GoldenCase& c : golden_cases(DType::Float32)) check_golden(c.name, c.f, DType::Float32, kF32Tol);
}

// Scores in (0, 1) like SGR/SAF outputs; τ = 0.5 keeps the softmaxes away from saturation so central
// differences resolve every entry.
Tensor scores(uint32_t seed, int64_t b = 5) { return test::random_tensor({b, b}, DType::Float64, seed, 0.05, 0.95); }

TEST(RetrievalLossGrad, InfoNceAndWarmup) {
  EXPECT_GRADCHECK([](const TensorList& t) { return infonce_loss(t[0], 0.5); }, {scores(1)});
  for (RceLabel label : {RceLabel::Code, RceLabel::Paper})
    EXPECT_GRADCHECK([&](const TensorList& t) { return l2rm_warmup_loss(t[0], 0.5, label); }, {scores(2)});
}

TEST(RetrievalLossGrad, ComplementaryEveryPhiAndMask) {
  Generator gen(5);
  for (double ratio : {-1.0, 0.6}) {
    const Tensor mask = random_negative_mask(5, ratio, gen);
    for (ComplementaryPhi phi : {ComplementaryPhi::Log, ComplementaryPhi::Tan, ComplementaryPhi::Abs,
                                 ComplementaryPhi::Exp, ComplementaryPhi::Gce})
      EXPECT_GRADCHECK([&](const TensorList& t) { return complementary_contrastive_loss(t[0], 0.5, phi, 0.3, mask); },
                       {scores(3)});
  }
}

TEST(RetrievalLossGrad, SplitLossBothModes) {
  for (SplitLoss mode : {SplitLoss::Mean, SplitLoss::Hardest})
    EXPECT_GRADCHECK([&](const TensorList& t) { return per_sample_split_loss(t[0], 0.2, mode); }, {scores(4)});
}

TEST(RetrievalLossGrad, RematchEveryVariant) {
  Tensor plan = test::random_tensor({5, 5}, DType::Float64, 6, 0, 0.01);
  plan = masked_fill(plan, eye(5, 5, DType::Bool), 0.0);  // masked positives: Π = 1e-10 there
  for (RematchLoss v : {RematchLoss::SymKl, RematchLoss::Kl, RematchLoss::SoftInfoNce, RematchLoss::Js})
    EXPECT_GRADCHECK([&](const TensorList& t) { return rematch_kl_loss(t[0], plan, 0.5, v); }, {scores(5)});
}

// Second derivatives (create_graph, autograd/engine.h) of every loss above, CCL's tan among them.
TEST(RetrievalLossGradGrad, EveryLoss) {
  EXPECT_GRADGRADCHECK([](const TensorList& t) { return infonce_loss(t[0], 0.5); }, {scores(11)});
  EXPECT_GRADGRADCHECK([](const TensorList& t) { return l2rm_warmup_loss(t[0], 0.5, RceLabel::Code); }, {scores(12)});
  Generator gen(13);
  const Tensor mask = random_negative_mask(5, 0.6, gen);
  for (ComplementaryPhi phi : {ComplementaryPhi::Log, ComplementaryPhi::Tan, ComplementaryPhi::Abs,
                               ComplementaryPhi::Exp, ComplementaryPhi::Gce})
    EXPECT_GRADGRADCHECK([&](const TensorList& t) { return complementary_contrastive_loss(t[0], 0.5, phi, 0.3, mask); },
                         {scores(14)});
  for (SplitLoss mode : {SplitLoss::Mean, SplitLoss::Hardest})
    EXPECT_GRADGRADCHECK([&](const TensorList& t) { return square(per_sample_split_loss(t[0], 0.2, mode)); },
                         {scores(15)});
  Tensor plan = test::random_tensor({5, 5}, DType::Float64, 16, 0, 0.01);
  plan = masked_fill(plan, eye(5, 5, DType::Bool), 0.0);
  for (RematchLoss v : {RematchLoss::SymKl, RematchLoss::Kl, RematchLoss::SoftInfoNce, RematchLoss::Js})
    EXPECT_GRADGRADCHECK([&](const TensorList& t) { return rematch_kl_loss(t[0], plan, 0.5, v); }, {scores(17)});
}

// docs/methods/l2rm.md §1.11, rcl.md §2.4 at a uniform batch (all S equal, so every p = 1/B).
TEST(RetrievalLoss, ClosedFormsAtUniformBatch) {
  const int64_t b = 8;
  const double bd = static_cast<double>(b);
  const Tensor s = full({b, b}, 0.37, DType::Float64);
  // RCE: loss = 0.5·(2 log B + 2·RCE), RCE = −(1/B) log(1 + ε) − (1 − 1/B) log ε ≈ 16.118·(1 − 1/B).
  const double rce = -std::log1p(1e-7) / bd - (1 - 1 / bd) * std::log(1e-7);
  EXPECT_NEAR(l2rm_warmup_loss(s).item<double>(), 0.5 * (2 * std::log(bd) + 2 * rce), 1e-12);
  EXPECT_NEAR(l2rm_warmup_loss(s).item<double>(), 0.5 * (2 * std::log(bd) + 2 * 16.118 * (1 - 1 / bd)), 2e-3);
  // CCL with all negatives: log = 2·(B−1)·(−log(1 − 1/B)), abs = 2·(1 − 1/B). The ε terms move them by ~1e-10.
  Generator gen(0);
  const Tensor all = random_negative_mask(b, -1, gen);
  EXPECT_NEAR(complementary_contrastive_loss(s, 0.05, ComplementaryPhi::Log, 0.2, all).item<double>(),
              2 * (bd - 1) * -std::log(1 - 1 / bd), 1e-8);
  EXPECT_NEAR(complementary_contrastive_loss(s, 0.05, ComplementaryPhi::Abs, 0.2, all).item<double>(),
              2 * (1 - 1 / bd), 1e-8);
  EXPECT_NEAR(infonce_loss(s).item<double>(), 2 * std::log(bd), 1e-8);
  // A uniform batch has no violation beyond the margin: every split loss is 2·α·(B−1)/B (mean) or 2α.
  const Tensor split = per_sample_split_loss(s, 0.2);
  EXPECT_TRUE(test::values_equal(split, std::vector<double>(b, 2 * 0.2 * (bd - 1) / bd), 1e-15));
  EXPECT_TRUE(test::values_equal(per_sample_split_loss(s, 0.2, SplitLoss::Hardest), std::vector<double>(b, 0.4), 1e-15));
}

// The rematch loss of a plan that is the softmax itself is 0 for the KL variants.
TEST(RetrievalLoss, RematchVanishesWhenPlanMatchesSoftmax) {
  const Tensor s = scores(7, 4);
  // A plan whose rows normalise to P^{i2t} and whose columns normalise to P^{t2i}: exp(S/τ) (unnormalised).
  const Tensor plan = exp(div(s, 0.05));
  for (RematchLoss v : {RematchLoss::SymKl, RematchLoss::Kl, RematchLoss::Js})
    EXPECT_NEAR(rematch_kl_loss(s, plan, 0.05, v).item<double>(), 0, 1e-9);
  // The plan is a constant: no gradient reaches it, and a float32 plan is cast to S's dtype.
  Tensor p32 = kernels::cast(plan, DType::Float32);
  p32.requires_grad_(true);
  Tensor sg = s.detach();
  sg.requires_grad_(true);
  backward(rematch_kl_loss(sg, p32));
  EXPECT_TRUE(sg.grad().defined());
  EXPECT_FALSE(p32.grad().defined());
}

TEST(RetrievalLoss, RandomNegativeMask) {
  Generator gen(11);
  const Tensor all = random_negative_mask(6, -1, gen);
  EXPECT_EQ(gen.offset(), 0u);  // all negatives: no draw
  EXPECT_TRUE(test::values_equal(to(all, DType::Float64), [] {
    std::vector<double> v(36, 1);
    for (int i = 0; i < 6; ++i) v[i * 7] = 0;
    return v;
  }()));
  const Tensor half = random_negative_mask(8, 0.5, gen);
  EXPECT_EQ(gen.offset(), 64u);  // one uniform per entry
  EXPECT_EQ(half.dtype(), DType::Bool);
  const std::vector<double> v = to(half, DType::Float64).to_vector<double>();
  for (int i = 0; i < 8; ++i) {
    double row = 0;
    for (int j = 0; j < 8; ++j) row += v[i * 8 + j];
    EXPECT_EQ(row, 4) << "row " << i;
    EXPECT_EQ(v[i * 9], 0) << "diagonal " << i;
  }
  Generator again(11);
  random_negative_mask(6, -1, again);
  EXPECT_TRUE(test::values_equal(to(random_negative_mask(8, 0.5, again), DType::Float64), v));
  EXPECT_EQ(negatives_per_row(128, -1), 127);
  EXPECT_EQ(negatives_per_row(128, 1), 127);
  EXPECT_EQ(negatives_per_row(128, 0.7), 89);
}

TEST(RetrievalLoss, Errors) {
  const Tensor s = scores(8, 3);
  EXPECT_THROWS_WITH(infonce_loss(zeros({2, 3}, DType::Float64)), "infonce_loss", "square", "[2, 3]");
  EXPECT_THROWS_WITH(l2rm_warmup_loss(s, 0), "l2rm_warmup_loss", "tau", "0");
  EXPECT_THROWS_WITH(complementary_contrastive_loss(s, 0.05, ComplementaryPhi::Log, 0.2, zeros({3, 2})),
                     "complementary_contrastive_loss", "negative_mask", "[3, 2]");
  EXPECT_THROWS_WITH(complementary_contrastive_loss(s, 0.05, ComplementaryPhi::Gce, 0, ones({3, 3}, DType::Float64)),
                     "complementary_contrastive_loss", "q", "0");
  EXPECT_THROWS_WITH(negatives_per_row(10, 0.05), "negatives_per_row", "0.05", "10");
  EXPECT_THROWS_WITH(negatives_per_row(1, -1), "negatives_per_row", "B >= 2");
  EXPECT_THROWS_WITH(rematch_kl_loss(s, zeros({3, 4}, DType::Float64)), "rematch_kl_loss", "plan", "[3, 4]");
  EXPECT_THROWS_WITH(rematch_kl_loss(s, full({3, 3}, -0.1, DType::Float64)), "rematch_kl_loss", "negative", "-0.1");
  EXPECT_THROWS_WITH(rematch_kl_loss(s, full({3, 3}, NAN, DType::Float64)), "rematch_kl_loss", "NaN");
  EXPECT_THROWS_WITH(per_sample_split_loss(s, NAN), "per_sample_split_loss", "margin");
  EXPECT_THROWS_WITH(parse_split_loss("max"), "split_loss", "\"max\"", "mean|hardest");
  EXPECT_THROWS_WITH(parse_rce_label("x"), "rce_label", "code|paper");
  EXPECT_THROWS_WITH(parse_complementary_phi("infoNCE"), "loss", "log|tan|abs|exp|gce");
  EXPECT_THROWS_WITH(parse_rematch_loss("sym"), "rematch_loss", "sym_kl|kl|soft_infonce|js");
}

}  // namespace
}  // namespace rematch::losses
