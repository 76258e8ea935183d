// The ablation switches of the papers' tables (marked in the methods' flag tables:
// pairs/l2rm_options.h, rcsl/rcsl_options.h, uotrcl/uotrcl_options.h): each flag belongs to one method (elsewhere an error naming the flag and the method), contradictory or empty combinations are
// refused, config.json keeps them, and on a small synthetic world each changes exactly its piece of a training
// step — the plan's mass, the cost matrix, the loss terms present — while the rest of the step is identical to
// the same step without it.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "l2rm_test_util.h"
#include "rcsl_test_util.h"
#include "test_util.h"
#include "train/methods/l2rm/l2rm_method.h"
#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/uotrcl/uotrcl_method.h"
#include "train/synth/pairs_world.h"
#include "uotrcl_test_util.h"

namespace rematch::train {
namespace {

TrainConfig base(const std::string& method) {
  TrainConfig c;
  c.method = method;
  c.data_path = "/data";
  c.data_name = "x_precomp";
  if (method == "rcsl") c.options<RcslOptions>().paired_length = 100;
  return c;
}

L2rmOptions& l2rm(TrainConfig& c) { return c.options<L2rmOptions>(); }
RcslOptions& rcsl(TrainConfig& c) { return c.options<RcslOptions>(); }
UotrclOptions& uot(TrainConfig& c) { return c.options<UotrclOptions>(); }

void resolve(TrainConfig c) { resolve_defaults(c); }

TEST(AblationFlags, DefaultsAreTheFullMethods) {
  TrainConfig l = base("l2rm");
  resolve_defaults(l);
  EXPECT_EQ(l2rm(l).rematch_ot, RematchOt::Partial);
  EXPECT_EQ(l2rm(l).cost_function, CostFunction::Learned);
  TrainConfig u = base("uotrcl");
  resolve_defaults(u);
  EXPECT_EQ(uot(u).confident_set, ConfidentSet::Jsd);
  TrainConfig r = base("rcsl");
  resolve_defaults(r);
  EXPECT_FALSE(l2rm(r).rematch_ot.has_value());  // not an l2rm run: nothing to record
  EXPECT_NE(to_json(r).find("\"rematch_ot\": \"\""), std::string::npos);
  const RcslOptions& o = rcsl(r);
  EXPECT_FALSE(o.no_trl || o.no_reg || o.no_rcm_t || o.no_rcm_v || o.no_rcm);
}

TEST(AblationFlags, AFlagOfAnotherMethodIsAnErrorNamingFlagAndMethod) {
  auto given = [](const std::string& method, auto set) {
    TrainConfig c = base(method);
    set(c);
    return c;
  };
  EXPECT_THROWS_WITH(resolve(given("rcl", [](TrainConfig& c) { l2rm(c).rematch_ot = RematchOt::Full; })),
                     "--rematch_ot", "--method rcl", "l2rm");
  EXPECT_THROWS_WITH(resolve(given("rcsl", [](TrainConfig& c) { l2rm(c).cost_function = CostFunction::Cosine; })),
                     "--cost_function", "--method rcsl");
  EXPECT_THROWS_WITH(resolve(given("triplet", [](TrainConfig& c) { l2rm(c).mask_positives = MaskPositives::Off; })),
                     "--mask_positives", "--method triplet");
  EXPECT_THROWS_WITH(resolve(given("rcl", [](TrainConfig& c) { l2rm(c).rematch_loss = losses::RematchLoss::Kl; })),
                     "--rematch_loss", "--method rcl");
  EXPECT_THROWS_WITH(resolve(given("l2rm", [](TrainConfig& c) { rcsl(c).no_reg = true; })), "--no_reg",
                     "--method l2rm");
  EXPECT_THROWS_WITH(resolve(given("uotrcl", [](TrainConfig& c) { rcsl(c).no_trl = true; })), "--no_trl",
                     "--method uotrcl");
  EXPECT_THROWS_WITH(resolve(given("l2rm", [](TrainConfig& c) { rcsl(c).no_rcm = true; })), "--no_rcm");
  EXPECT_THROWS_WITH(resolve(given("rcsl", [](TrainConfig& c) { uot(c).no_plc = true; })), "--no_plc",
                     "--method rcsl");
  EXPECT_THROWS_WITH(resolve(given("l2rm", [](TrainConfig& c) { uot(c).no_bhg = true; })), "--no_bhg",
                     "--method l2rm");
  EXPECT_THROWS_WITH(resolve(given("rcsl-nc", [](TrainConfig& c) { uot(c).confident_set = ConfidentSet::Random; })),
                     "--confident_set", "--method rcsl-nc");
  // A value that is no choice of the flag: refused when it is read (config.json, the command line).
  EXPECT_THROWS_WITH(train_config_from_json(R"({"method": "l2rm", "rematch_ot": "half"})"), "--rematch_ot",
                     "partial", "half");
  EXPECT_THROWS_WITH(train_config_from_json(R"({"method": "uotrcl", "confident_set": "all"})"), "--confident_set");
  resolve(given("rcsl-nc", [](TrainConfig& c) { rcsl(c).no_rcm_v = true; }));  // rcsl-nc runs RCSL: its switches apply
}

TEST(AblationFlags, ContradictoryOrEmptyCombinationsAreRefused) {
  auto run = [](bool trl, bool reg, bool t, bool v, bool all, int64_t mine = -1) {
    TrainConfig c = base("rcsl");
    RcslOptions& o = rcsl(c);
    o.no_trl = trl;
    o.no_reg = reg;
    o.no_rcm_t = t;
    o.no_rcm_v = v;
    o.no_rcm = all;
    o.mine_epoch = mine;
    resolve_defaults(c);
  };
  run(false, true, false, false, true);   // Table 6 #7
  run(true, false, false, false, true);   // Table 6 #8
  EXPECT_THROWS_WITH(run(false, false, true, false, true), "--no_rcm already drops both");
  EXPECT_THROWS_WITH(run(false, false, true, true, false), "--no_rcm_t with --no_rcm_v", "--no_rcm");
  EXPECT_THROWS_WITH(run(true, true, false, false, true), "leave no loss term");
  EXPECT_THROWS_WITH(run(true, true, false, false, false), "--no_trl with --no_reg", "learning stage");
  run(true, true, false, false, false, 0);  // mining from the first epoch: L_rcm remains everywhere
  TrainConfig u = base("uotrcl");
  uot(u).no_plc = uot(u).no_bhg = true;
  EXPECT_THROWS_WITH(resolve(u), "--no_plc with --no_bhg", "no loss");
}

TEST(AblationFlags, ConfigJsonKeepsThem) {
  TrainConfig r = base("rcsl");
  rcsl(r).no_trl = rcsl(r).no_rcm = true;
  resolve_defaults(r);
  TrainConfig back_r = resumed_train_config(to_json(r), "config.json");
  EXPECT_TRUE(rcsl(back_r).no_trl && rcsl(back_r).no_rcm && !rcsl(back_r).no_reg);
  EXPECT_EQ(to_json(back_r), to_json(r));
  TrainConfig l = base("l2rm");
  l2rm(l).rematch_ot = RematchOt::Full;
  l2rm(l).cost_function = CostFunction::Cosine;
  resolve_defaults(l);
  TrainConfig back_l = resumed_train_config(to_json(l), "config.json");
  EXPECT_EQ(l2rm(back_l).rematch_ot, RematchOt::Full);
  EXPECT_EQ(l2rm(back_l).cost_function, CostFunction::Cosine);
  TrainConfig u = base("uotrcl");
  uot(u).no_bhg = true;
  uot(u).confident_set = ConfidentSet::Random;
  resolve_defaults(u);
  TrainConfig back_u = resumed_train_config(to_json(u), "config.json");
  EXPECT_TRUE(uot(back_u).no_bhg && !uot(back_u).no_plc);
  EXPECT_EQ(uot(back_u).confident_set, ConfidentSet::Random);
  for (const char* key : {"\"rematch_ot\"", "\"cost_function\"", "\"no_reg\"", "\"no_trl\"", "\"no_rcm_t\"",
                          "\"no_rcm_v\"", "\"no_rcm\"", "\"no_plc\"", "\"no_bhg\"", "\"confident_set\""})
    EXPECT_NE(to_json(u).find(key), std::string::npos) << key;
}

// ---- L2RM Table 3 ------------------------------------------------------------------------------------------

class L2rmAblation : public test::TempDirTest {
 protected:
  TrainConfig config(const std::function<void(TrainConfig&)>& ablate = {}) {
    return l2rm_test::tiny_config(path("data"), ablate);
  }
  L2rmMethod make(const TrainConfig& c) { return l2rm_test::make(c, log_); }
  // One main-phase step (split, cost update, rematch, clean triplet) of a fresh method.
  StepResult first_step(L2rmMethod& m) {
    m.begin_epoch(0);
    return m.train_step(0, 0);
  }
  // A similarity matrix in (0, 1) for the plan and cost checks.
  static Tensor scores() {
    Generator g(4);
    return add(mul(rand({8, 8}, DType::Float32, Device::cpu(), &g), 0.8), 0.1);
  }
  static double total(const Tensor& t) { return sum(to(t, DType::Float64)).item<double>(); }
  static std::vector<double> diag(const Tensor& t) {
    const std::vector<double> v = to(t, DType::Float64).to_vector<double>();
    std::vector<double> d;
    for (int64_t i = 0; i < t.size(0); ++i) d.push_back(v[static_cast<size_t>(i * t.size(1) + i)]);
    return d;
  }
  std::ostringstream log_;
};

TEST_F(L2rmAblation, FullOtTransportsAllTheMassOnTheSameCosts) {
  // Solved to convergence here (L2RM's own stop, ‖Δu‖₂ < 1e-3, leaves the partial mass at ~0.13), so the
  // masses are the problems' own: ρ = 0.1 against 1.
  auto converged = [](TrainConfig& c) {
    l2rm(c).ot_tol = 1e-10;
    l2rm(c).ot_max_iter = 100000;
  };
  L2rmMethod partial = make(config(converged)), full = make(config([&](TrainConfig& c) {
                                                  converged(c);
                                                  l2rm(c).rematch_ot = RematchOt::Full;
                                                }));
  const Tensor S = scores();
  EXPECT_TRUE(test::all_close(full.rematch_costs(S), partial.rematch_costs(S), 0, 0));  // same costs
  const Tensor p = partial.rematch_plan(S), f = full.rematch_plan(S);
  EXPECT_NEAR(total(p), 0.1, 1e-3);  // ρ through the real block (§1.5; the dummy row carries the rest)
  EXPECT_NEAR(total(f), 1.0, 1e-3);  // balanced: all the mass
  for (double d : diag(f)) EXPECT_EQ(d, 0.0);  // still masked (noise is injected)
  for (double d : diag(p)) EXPECT_EQ(d, 0.0);
  // The rest of the step is the same: the cost update and the clean triplet do not see the plan.
  L2rmMethod a = make(config()), b = make(config([](TrainConfig& c) { l2rm(c).rematch_ot = RematchOt::Full; }));
  const StepResult ra = first_step(a), rb = first_step(b);
  ASSERT_TRUE(ra.parts.count("rematch"));
  EXPECT_EQ(rb.parts.at("cost"), ra.parts.at("cost"));
  EXPECT_EQ(rb.parts.at("trip"), ra.parts.at("trip"));
  EXPECT_NE(rb.parts.at("rematch"), ra.parts.at("rematch"));
}

TEST_F(L2rmAblation, MaskOffLetsTheGivenPairsCarryMass) {
  L2rmMethod on = make(config()), off = make(config([](TrainConfig& c) { l2rm(c).mask_positives = MaskPositives::Off; }));
  const Tensor S = scores();
  EXPECT_TRUE(test::all_close(off.rematch_costs(S), on.rematch_costs(S), 0, 0));
  double diagonal_mass = 0;
  for (double d : diag(off.rematch_plan(S))) diagonal_mass += d;
  EXPECT_GT(diagonal_mass, 0.0);
  for (double d : diag(on.rematch_plan(S))) EXPECT_EQ(d, 0.0);
  EXPECT_NEAR(total(off.rematch_plan(S)), total(on.rematch_plan(S)), 0.02);  // same partial mass ρ
  L2rmMethod a = make(config()), b = make(config([](TrainConfig& c) { l2rm(c).mask_positives = MaskPositives::Off; }));
  const StepResult ra = first_step(a), rb = first_step(b);
  EXPECT_EQ(rb.parts.at("cost"), ra.parts.at("cost"));
  EXPECT_EQ(rb.parts.at("trip"), ra.parts.at("trip"));
  EXPECT_NE(rb.parts.at("rematch"), ra.parts.at("rematch"));
}

TEST_F(L2rmAblation, CosineCostIsOneMinusSAndTheCostNetNeverLearns) {
  L2rmMethod learned = make(config()),
             cosine = make(config([](TrainConfig& c) { l2rm(c).cost_function = CostFunction::Cosine; }));
  // Move both cost nets away from their init (where f_c(S) = 1 − S): only the learned cost follows.
  for (L2rmMethod* m : {&learned, &cosine}) {
    NoGradGuard no_grad;
    for (const Tensor& p : m->cost_net().parameters()) kernels::copy_(p, add(p, 0.05));
  }
  const Tensor S = scores();
  const Tensor expected = clamp_min(rsub(1.0, S), 1e-10);
  EXPECT_TRUE(test::all_close(cosine.rematch_costs(S), expected, 0, 0));
  EXPECT_FALSE(test::all_close(learned.rematch_costs(S), expected, 1e-3, 0));
  // A step: no cost update (no "cost" part, f_c unchanged), the clean triplet as with the learned cost.
  L2rmMethod a = make(config()), b = make(config([](TrainConfig& c) { l2rm(c).cost_function = CostFunction::Cosine; }));
  std::vector<Tensor> before;
  for (const Tensor& p : b.cost_net().parameters()) before.push_back(kernels::clone(p));
  const StepResult ra = first_step(a), rb = first_step(b);
  EXPECT_TRUE(ra.parts.count("cost"));
  EXPECT_FALSE(rb.parts.count("cost"));
  EXPECT_EQ(rb.parts.at("trip"), ra.parts.at("trip"));
  ASSERT_TRUE(rb.parts.count("rematch"));
  const std::vector<Tensor> after = b.cost_net().parameters();
  for (size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(test::all_close(after[i], before[i], 0, 0)) << i;
}

TEST_F(L2rmAblation, RematchLossChangesOnlyTheRematchTerm) {
  L2rmMethod a = make(config());
  const StepResult ra = first_step(a);
  for (losses::RematchLoss loss : {losses::RematchLoss::Kl, losses::RematchLoss::SoftInfoNce}) {
    L2rmMethod b = make(config([&](TrainConfig& c) { l2rm(c).rematch_loss = loss; }));
    const StepResult rb = first_step(b);
    EXPECT_EQ(rb.parts.at("cost"), ra.parts.at("cost")) << static_cast<int>(loss);
    EXPECT_EQ(rb.parts.at("trip"), ra.parts.at("trip")) << static_cast<int>(loss);
    EXPECT_NE(rb.parts.at("rematch"), ra.parts.at("rematch")) << static_cast<int>(loss);
  }
}

// ---- RCSL Table 6 ------------------------------------------------------------------------------------------

class RcslAblation : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    rcsl_test::write_world(dir_.string(), 40, 10, 10);
  }
  TrainConfig config(const std::function<void(TrainConfig&)>& ablate = {}) {
    TrainConfig c;
    c.method = "rcsl";
    c.data_path = dir_.string();
    c.data_name = "synth_precomp";
    c.vocab_path = dir_.string() + "/vocab";
    c.seed = 3;
    rcsl(c).paired_length = 6;
    rcsl(c).mine_epoch = 1;
    if (ablate) ablate(c);
    resolve_defaults(c);
    c.batch_size = 16;
    c.num_epochs = 2;
    rcsl(c).embed_size = 16;
    rcsl(c).word_dim = 8;
    c.eval_batch = 32;
    return c;
  }
  // The first step of epoch `epoch` of a fresh method with the config.
  StepResult step(const TrainConfig& c, int64_t epoch, bool* bank_built = nullptr) {
    RcslMethod m = rcsl_test::make(c, log_);
    m.begin_epoch(epoch);
    if (bank_built) *bank_built = !m.memory_bank().empty();
    return m.train_step(epoch, 0);
  }
  std::ostringstream log_;
};

// Each row of Table 6 as flags: the terms left are exactly those the row keeps, each with the value it has in
// the full method's same step, and the step's loss is their sum.
TEST_F(RcslAblation, EachRowDropsExactlyItsTerms) {
  bool bank = false;
  const StepResult full = step(config(), 1, &bank);
  EXPECT_TRUE(bank);
  for (const char* k : {"trl", "reg", "rcm_t", "rcm_v"}) ASSERT_TRUE(full.parts.count(k)) << k;
  EXPECT_DOUBLE_EQ(full.parts.at("rcm"), full.parts.at("rcm_t") + full.parts.at("rcm_v"));
  struct Row {
    const char* name;
    std::function<void(TrainConfig&)> flags;
    std::vector<std::string> kept;
  };
  const std::vector<Row> rows = {
      {"#2 w/o L_reg", [](TrainConfig& c) { rcsl(c).no_reg = true; }, {"trl", "rcm_t", "rcm_v"}},
      {"#3 w/o L_sdl† (L_trl†)", [](TrainConfig& c) { rcsl(c).no_trl = true; }, {"reg", "rcm_t", "rcm_v"}},
      {"#4 w/o L_rcm^t", [](TrainConfig& c) { rcsl(c).no_rcm_t = true; }, {"trl", "reg", "rcm_v"}},
      {"#5 w/o L_rcm^v", [](TrainConfig& c) { rcsl(c).no_rcm_v = true; }, {"trl", "reg", "rcm_t"}},
      {"#6 w/o L_rcm", [](TrainConfig& c) { rcsl(c).no_rcm = true; }, {"trl", "reg"}},
      {"#7 w/o L_reg & L_rcm", [](TrainConfig& c) { rcsl(c).no_reg = rcsl(c).no_rcm = true; }, {"trl"}},
      {"#8 w/o L_sdl† & L_rcm", [](TrainConfig& c) { rcsl(c).no_trl = rcsl(c).no_rcm = true; }, {"reg"}},
  };
  for (const Row& row : rows) {
    bool built = false;
    const StepResult r = step(config(row.flags), 1, &built);
    double sum = 0;
    for (const char* k : {"trl", "reg", "rcm_t", "rcm_v"}) {
      const bool kept = std::find(row.kept.begin(), row.kept.end(), k) != row.kept.end();
      EXPECT_EQ(r.parts.count(k), kept ? 1u : 0u) << row.name << ": " << k;
      if (kept && r.parts.count(k)) {
        EXPECT_EQ(r.parts.at(k), full.parts.at(k)) << row.name << ": " << k;
        sum += r.parts.at(k);
      }
    }
    EXPECT_NEAR(r.loss, sum, 1e-5 * std::max(1.0, std::abs(sum))) << row.name;
    // No mining loss, no memory bank (Table 4's "RCSL w/o RCM" is #6).
    const bool mines = r.parts.count("rcm_t") || r.parts.count("rcm_v");
    EXPECT_EQ(built, mines) << row.name;
  }
}

// The learning stage (before --mine_epoch) has no mining term to drop: --no_rcm leaves it identical.
TEST_F(RcslAblation, NoRcmLeavesTheLearningStageUnchanged) {
  const StepResult full = step(config(), 0);
  const StepResult ablated = step(config([](TrainConfig& c) { rcsl(c).no_rcm = true; }), 0);
  EXPECT_EQ(ablated.parts, full.parts);
  EXPECT_EQ(ablated.loss, full.loss);
}

// ---- UOT-RCL ----------------------------------------------------------------------------------------------

using uotrcl_test::tiny_world;
// Three epochs: one warm-up, then the main epochs whose first step the tests compare.
TrainConfig tiny_options() { return uotrcl_test::tiny_options(3); }
UotrclMethod method(const TrainConfig& c, const data::LabeledDataset& data, std::ostream& log) {
  return uotrcl_test::make(c, data, log);
}

// One warm-up epoch, then the first main epoch's label correction and first step.
StepResult main_step(UotrclMethod& m) {
  const EpochInfo warm = m.begin_epoch(0);
  for (int64_t s = 0; s < warm.steps; ++s) m.train_step(0, s);
  m.end_epoch(0);
  m.begin_epoch(1);
  return m.train_step(1, 0);
}

TEST(UotrclAblation, NoPlcAndNoBhgDropOneTermOfEq19) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(tiny_world());
  std::ostringstream log;
  UotrclMethod full = method(tiny_options(), data, log);
  const StepResult f = main_step(full);
  ASSERT_TRUE(f.parts.count("plc") && f.parts.count("bhg"));
  const double lambda = tiny_options().options<UotrclOptions>().lambda_bhg;
  EXPECT_NEAR(f.loss, f.parts.at("plc") + lambda * f.parts.at("bhg"), 1e-5);

  TrainConfig o = tiny_options();
  uot(o).no_plc = true;
  UotrclMethod no_plc = method(o, data, log);
  const StepResult a = main_step(no_plc);
  EXPECT_FALSE(a.parts.count("plc"));
  EXPECT_EQ(a.parts.at("bhg"), f.parts.at("bhg"));  // same model, batch and relation plan
  EXPECT_NEAR(a.loss, lambda * f.parts.at("bhg"), 1e-6);
  EXPECT_EQ(no_plc.confident(), full.confident());

  o = tiny_options();
  uot(o).no_bhg = true;
  UotrclMethod no_bhg = method(o, data, log);
  const StepResult b = main_step(no_bhg);
  EXPECT_FALSE(b.parts.count("bhg"));
  EXPECT_EQ(b.parts.at("plc"), f.parts.at("plc"));
  EXPECT_EQ(b.loss, f.parts.at("plc"));
  EXPECT_TRUE(test::all_close(no_bhg.corrected_labels(), full.corrected_labels(), 0, 0));
}

TEST(UotrclAblation, RandomConfidentSetHasTheSameSizeAndChangesOnlyG) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(tiny_world());
  std::ostringstream log;
  UotrclMethod jsd = method(tiny_options(), data, log);
  TrainConfig o = tiny_options();
  uot(o).confident_set = ConfidentSet::Random;
  UotrclMethod random = method(o, data, log);
  const StepResult rj = main_step(jsd), rr = main_step(random);
  ASSERT_FALSE(jsd.confident().empty());
  EXPECT_EQ(random.confident().size(), jsd.confident().size());
  EXPECT_NE(random.confident(), jsd.confident());
  for (size_t i = 1; i < random.confident().size(); ++i)
    EXPECT_LT(random.confident()[i - 1], random.confident()[i]);  // distinct rows
  // The warm-up and the model are the same, so everything G feeds differs and nothing before it does.
  EXPECT_EQ(random.current_epoch().stats.at("s"), jsd.current_epoch().stats.at("s"));
  EXPECT_FALSE(test::all_close(random.corrected_labels(), jsd.corrected_labels(), 0, 0));
  // The draw is reproducible and leaves the run's own stream alone.
  UotrclMethod again = method(o, data, log);
  main_step(again);
  EXPECT_EQ(again.confident(), random.confident());
  EXPECT_EQ(rr.pairs, rj.pairs);
}

// The switches reach their methods' sections from the command line's and config.json's flat keys.
TEST(UotrclAblation, OptionsComeFromTheFlags) {
  TrainConfig c = train_config_from_json(
      R"({"method": "uotrcl", "data_path": "/data", "valid_len": 0, "no_bhg": true, "confident_set": "random"})");
  resolve_defaults(c);
  EXPECT_FALSE(uot(c).no_plc);
  EXPECT_TRUE(uot(c).no_bhg);
  EXPECT_EQ(uot(c).confident_set, ConfidentSet::Random);
  TrainConfig r = train_config_from_json(
      R"({"method": "rcsl", "data_path": "/data", "data_name": "x", "paired_length": 100, "no_rcm_t": true,
          "no_trl": true})");
  resolve_defaults(r);
  EXPECT_TRUE(rcsl(r).no_trl);
  EXPECT_FALSE(rcsl(r).no_reg);
  EXPECT_TRUE(rcsl(r).no_rcm_t);
  EXPECT_FALSE(rcsl(r).no_rcm_v);
}

}  // namespace
}  // namespace rematch::train
