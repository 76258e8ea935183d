// MSCN's pieces (docs/methods/mscn.md): the adaptive margin and its loss against their definitions (§2.2), the
// warm-up loss, BCE, the meta net's names, the pair scores against the batch matrix (§1), the virtual step's
// second derivative against finite differences of the whole meta loss (§2.2), the split's mixture (§3), the meta
// set's draws (§4), the step plan (warm-up, then "train B" on A's split and "train A" on B's) and the flags
// refused by name. The whole step against the official code is mscn_golden_step_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "autograd/autograd.h"
#include "autograd/gradcheck.h"
#include "cli_runner.h"
#include "nn/safetensors.h"
#include "test_util.h"
#include "train/cli/app.h"
#include "train/methods/make_method.h"
#include "train/methods/mscn/mscn_method.h"
#include "train/methods/mscn/mscn_scores.h"
#include "train/methods/mscn/virtual_step.h"
#include "train/run/run_folder.h"
#include "train/synth/pairs_world.h"

namespace rematch::train {
namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(MscnAdaptiveMargin, IsTheCodesSAdaptive) {
  EXPECT_DOUBLE_EQ(mscn_adaptive_margin(0.2, 0.5), 0.1);       // p/(1−p) = 1: s = 1/2
  EXPECT_DOUBLE_EQ(mscn_adaptive_margin(0.2, 0.75), 0.2 * 0.9);  // ratio 3: 1/(1 + 1/9)
  EXPECT_DOUBLE_EQ(mscn_adaptive_margin(0.2, 1.0), 0.2);
  EXPECT_DOUBLE_EQ(mscn_adaptive_margin(0.2, 0.0), 0.0);
}

// Σ_i max_{j≠i}[m_j + S_ij − S_ii]_+ + Σ_j max_{i≠j}[m_j + S_ij − S_jj]_+ with m_j of S_jj, written out.
double adaptive_by_hand(const std::vector<double>& S, int64_t B, double alpha) {
  auto m = [&](int64_t j) { return mscn_adaptive_margin(alpha, S[j * B + j]); };
  double total = 0;
  for (int64_t i = 0; i < B; ++i) {
    double a = 0;
    for (int64_t j = 0; j < B; ++j)
      if (j != i) a = std::max(a, m(j) + S[i * B + j] - S[i * B + i]);
    total += a;
  }
  for (int64_t j = 0; j < B; ++j) {
    double b = 0;
    for (int64_t i = 0; i < B; ++i)
      if (i != j) b = std::max(b, m(j) + S[i * B + j] - S[j * B + j]);
    total += b;
  }
  return total;
}

TEST(MscnLosses, AreTheirDefinitionsAndHaveTheirGradients) {
  Generator gen(3);
  const int64_t B = 5;
  const Tensor S = rand({B, B}, DType::Float64, Device::cpu(), &gen);
  EXPECT_NEAR(mscn_adaptive_margin_loss(S, 0.2).item<double>(), adaptive_by_hand(S.to_vector<double>(), B, 0.2), 1e-14);
  // The margins are constants (the code's `torch.no_grad()` diagonal): away from the hinges' kinks the gradient
  // is the one with the margins held fixed, which central differences see as well.
  const GradcheckResult ga = gradcheck([](const TensorList& in) {
    return mscn_adaptive_margin_loss(in[0], 0.2);
  }, {S});
  EXPECT_FALSE(ga.ok) << "the margins' dependence on the diagonal is not differentiated (no_grad in the code)";
  // Warm-up: Σ_i mean_j + Σ_j mean_i with the constant margin, the zeroed diagonal counted in the means.
  const std::vector<double> s = S.to_vector<double>();
  double want = 0;
  for (int64_t i = 0; i < B; ++i)
    for (int64_t j = 0; j < B; ++j)
      if (i != j)
        want += (std::max(0.0, 0.2 + s[i * B + j] - s[i * B + i]) + std::max(0.0, 0.2 + s[i * B + j] - s[j * B + j])) / B;
  EXPECT_NEAR(mscn_warmup_loss(S, 0.2).item<double>(), want, 1e-14);
  const GradcheckResult gw = gradcheck([](const TensorList& in) { return mscn_warmup_loss(in[0], 0.2); }, {S});
  EXPECT_TRUE(gw.ok) << gw.message;
  // BCE: −mean(y log p + (1 − y) log(1 − p)).
  const Tensor p = add(mul(rand({6}, DType::Float64, Device::cpu(), &gen), 0.9), 0.05);
  const std::vector<double> y = {1, 0, 1, 1, 0, 0};
  double bce = 0;
  const std::vector<double> pv = p.to_vector<double>();
  for (size_t i = 0; i < y.size(); ++i) bce -= (y[i] * std::log(pv[i]) + (1 - y[i]) * std::log(1 - pv[i])) / 6;
  EXPECT_NEAR(binary_cross_entropy(p, from_vector(y, {6})).item<double>(), bce, 1e-14);
  const GradcheckResult gb = gradcheck(
      [&](const TensorList& in) { return binary_cross_entropy(in[0], to(from_vector(y, {6}), DType::Float64)); }, {p});
  EXPECT_TRUE(gb.ok) << gb.message;
  EXPECT_THROW(binary_cross_entropy(p, zeros({5}, DType::Float64)), Error);
  EXPECT_THROW(mscn_adaptive_margin_loss(zeros({2, 3}, DType::Float64), 0.2), Error);
}

TEST(MscnMetaSim, HasTheOfficialNamesAndScoresInTheUnitInterval) {
  Generator gen(1);
  MetaSim m(6, 4, DType::Float64, &gen);
  std::vector<std::string> names;
  for (const auto& [n, t] : m.named_parameters()) names.push_back(n + ":" + t.shape_str());
  EXPECT_EQ(names, (std::vector<std::string>{"first_hidden_layer.fc.weight:[4, 6]", "first_hidden_layer.fc.bias:[4]",
                                             "output_layer.weight:[1, 4]", "output_layer.bias:[1]"}));
  const Tensor s = m.forward(randn({3, 2, 6}, DType::Float64, Device::cpu(), &gen));
  EXPECT_EQ(s.shape_str(), "[3, 2, 1]");
  for (double v : s.to_vector<double>()) EXPECT_TRUE(v > 0 && v < 1) << v;
  EXPECT_THROW(m.forward(zeros({2, 5}, DType::Float64)), Error);
}

// A tiny float64 model and batch for the tests below.
struct Tiny {
  models::SgrafConfig config;
  Tensor regions, ids, lengths;
  explicit Tiny(models::SimilarityModule module) {
    config.module = module;
    config.vocab_size = 11;
    config.img_dim = 5;
    config.num_regions = 3;
    config.word_dim = 3;
    config.embed_size = 4;
    config.sim_dim = 3;
    config.sgr_step = 2;
    config.dropout = 0;
    Generator gen(9);
    regions = randn({4, 3, 5}, DType::Float64, Device::cpu(), &gen);
    ids = from_vector(std::vector<int64_t>{1, 5, 6, 2, 1, 7, 2, 0, 1, 8, 9, 2, 1, 4, 2, 0}, {4, 4});
    lengths = from_vector(std::vector<int64_t>{4, 3, 4, 3});
  }
};

TEST(MscnScores, PairScoresAreTheMatrixDiagonalInEvalMode) {
  for (models::SimilarityModule module : {models::SimilarityModule::SGR, models::SimilarityModule::SAF}) {
    Tiny t(module);
    Generator gen(4);
    models::SgrafModel model(t.config, DType::Float64, &gen);
    MetaSim meta(3, 5, DType::Float64, &gen);
    model.eval();
    NoGradGuard no_grad;
    const Tensor S = mscn_scores(model, meta, t.regions, t.ids, t.lengths);
    ASSERT_EQ(S.shape_str(), "[4, 4]");
    const Tensor s = mscn_pair_scores(model, meta, t.regions, t.ids, t.lengths);
    const std::vector<double> m = S.to_vector<double>(), d = s.to_vector<double>();
    for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(d[static_cast<size_t>(i)], m[static_cast<size_t>(i * 5)], 1e-14) << i;
  }
}

// The meta loss after a virtual step, as a function of the meta net's parameters (they enter both the virtual
// step's gradient and the meta forward); its analytic gradient, through the second derivative of the SGR/SAF
// loss, against central differences.
TEST(MscnVirtualStep, MetaGradientThroughTheVirtualStepMatchesFiniteDifferences) {
  for (models::SimilarityModule module : {models::SimilarityModule::SGR, models::SimilarityModule::SAF}) {
    Tiny t(module);
    Generator gen(5);
    models::SgrafModel model(t.config, DType::Float64, &gen);
    models::SgrafModel shadow(t.config, DType::Float64, &gen);
    MetaSim meta(3, 5, DType::Float64, &gen);
    const Tensor labels = from_vector(std::vector<double>{1, 0, 1, 0}, {4});
    const Tensor meta_regions = randn({4, 3, 5}, DType::Float64, Device::cpu(), &gen);
    const double lr = 0.3;
    std::vector<Tensor> buffers_before;
    for (const auto& [n, b] : model.named_buffers()) buffers_before.push_back(clone(b));
    auto meta_loss = [&] {
      const BufferSnapshot snapshot(model);
      const Tensor pseudo = mscn_adaptive_margin_loss(mscn_scores(model, meta, t.regions, t.ids, t.lengths), 0.2);
      const std::vector<Tensor> stepped = virtual_sgd_step(pseudo, model.parameters(), lr);
      snapshot.restore();
      install_parameters(shadow, stepped);
      return binary_cross_entropy(mscn_pair_scores(shadow, meta, meta_regions, t.ids, t.lengths), labels);
    };
    const std::vector<Tensor> params = meta.parameters();
    const TensorList g = grad({meta_loss()}, params);
    // The net's BatchNorm statistics are back where they were.
    const nn::NamedTensors after = model.named_buffers();
    for (size_t k = 0; k < after.size(); ++k) EXPECT_TRUE(test::all_close(after[k].second, buffers_before[k], 0, 0));
    const double h = 1e-6;
    double worst = 0;
    int checked = 0;
    for (size_t k = 0; k < params.size(); ++k) {
      const int64_t n = params[k].numel();
      for (int64_t e = 0; e < n; e += std::max<int64_t>(1, n / 3)) {
        double* v = params[k].data<double>() + e;
        const double keep = *v;
        double f[2];
        for (int side = 0; side < 2; ++side) {
          *v = keep + (side == 0 ? h : -h);
          f[side] = meta_loss().item<double>();
        }
        *v = keep;
        const double numeric = (f[0] - f[1]) / (2 * h);
        const double analytic = g[k].to_vector<double>()[static_cast<size_t>(e)];
        worst = std::max(worst, std::abs(numeric - analytic));
        EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << k << " " << e;
        ++checked;
      }
    }
    EXPECT_GT(checked, 6);
    // Without the virtual step the meta net's gradient is another one: the second-order path carries weight.
    const TensorList direct = grad(
        {binary_cross_entropy(mscn_pair_scores(model, meta, meta_regions, t.ids, t.lengths), labels)}, params);
    EXPECT_FALSE(test::all_close(direct[0], g[0], 1e-9, 0));
  }
}

TEST(MscnSplit, MixtureStartsFromTheMetaSetAndRefitsOnTraining) {
  // Meta: clean pairs score high, drawn pairs low; training: a mixture of both.
  std::vector<double> meta_scores, labels, train;
  for (int i = 0; i < 40; ++i) {
    meta_scores.push_back(0.7 + 0.005 * i);
    labels.push_back(1);
    meta_scores.push_back(0.1 + 0.004 * i);
    labels.push_back(0);
  }
  for (int i = 0; i < 60; ++i) train.push_back(0.75 + 0.003 * i);
  for (int i = 0; i < 40; ++i) train.push_back(0.12 + 0.003 * i);
  train.push_back(1.0);  // clamped to 1 − 1e-3
  const MscnSplit s = mscn_split(meta_scores, labels, train);
  EXPECT_DOUBLE_EQ(s.initial[0].weight, 0.5);
  const std::array<double, 2> clean_ab = mixture::beta_method_of_moments(std::vector<double>(
      [&] {
        std::vector<double> c;
        for (size_t i = 0; i < labels.size(); ++i)
          if (labels[i] > 0.5) c.push_back(meta_scores[i]);
        return c;
      }()));
  EXPECT_DOUBLE_EQ(s.initial[1].alpha, clean_ab[0]);
  EXPECT_DOUBLE_EQ(s.initial[1].beta, clean_ab[1]);
  EXPECT_GE(s.mixture.iterations, 1);
  EXPECT_LE(s.mixture.iterations, 10);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(s.clean[static_cast<size_t>(i)], 1) << i;
  for (int i = 60; i < 100; ++i) EXPECT_EQ(s.clean[static_cast<size_t>(i)], 0) << i;
  EXPECT_EQ(s.clean.back(), 1);
  EXPECT_THROW(mscn_split({0.5}, {1}, train), Error);  // no drawn pairs
}

class MscnMethodTest : public test::TempDirTest {
 protected:
  TrainConfig config(const std::string& source = "dev") {
    synth::PairsWorldConfig w;
    w.train_images = 24;
    w.dev_images = 4;
    w.test_images = 4;
    w.regions = 3;
    w.feature_dim = 8;
    synth::write_pairs_world(synth::make_pairs_world(w), path("pairs"));
    TrainConfig c;
    c.method = "mscn";
    c.data_path = path("pairs");
    c.data_name = "synth_precomp";
    c.noise_ratio = 0.5;
    c.batch_size = 8;
    MscnOptions& o = c.options<MscnOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.meta_source = source == "dev" ? MetaSource::Dev : MetaSource::Train;
    o.meta_size = source == "dev" ? 12 : 4;
    o.meta_interval = 2;
    c.warmup_epoch = 1;
    c.num_epochs = 1;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
};

TEST_F(MscnMethodTest, WarmupThenTrainBOnASplitThenTrainAOnBs) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config(), log);
  auto& mscn = dynamic_cast<MscnMethod&>(*m);
  EXPECT_EQ(m->num_epochs(), 3);
  EXPECT_EQ(mscn.meta_set().num_clean(), 12);
  const EpochInfo warm = m->begin_epoch(0);
  EXPECT_EQ(warm.phase, "warmup");
  // 120 captions in batches of 2 × 8: 8 per net (the last one of 8).
  ASSERT_EQ(warm.steps, 16);
  const Tensor metaB0 = clone(mscn.meta(1).parameters()[0].detach());
  const Tensor metaA0 = clone(mscn.meta(0).parameters()[0].detach());
  for (int64_t s = 0; s < 8; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_A"), 1u);
  EXPECT_TRUE(test::all_close(mscn.meta(1).parameters()[0], metaB0, 0, 0));
  EXPECT_FALSE(test::all_close(mscn.meta(0).parameters()[0], metaA0, 0, 0)) << "the warm-up steps the meta net";
  for (int64_t s = 8; s < 16; ++s) EXPECT_EQ(m->train_step(0, s).parts.count("warmup_B"), 1u);
  m->end_epoch(0);
  EXPECT_TRUE(m->best_candidate(0));

  const EpochInfo b = m->begin_epoch(1);
  EXPECT_EQ(b.phase, "train B");
  EXPECT_EQ(b.stats.count("clean_precision"), 1u);
  ASSERT_EQ(mscn.probability().size(), 120u);
  // Every Adam started afresh at the end of the warm-up, the meta nets' at --meta_lr.
  EXPECT_DOUBLE_EQ(mscn.meta_optimizer(1).lr(), 17e-6);
  EXPECT_EQ(mscn.optimizer(0).step_count(0), 0);
  const Tensor a0 = clone(mscn.net(0).parameters()[0].detach());
  const Tensor mb0 = clone(mscn.meta(1).parameters()[0].detach());
  int meta_steps = 0;
  for (int64_t s = 0; s < b.steps; ++s) {
    const StepResult r = m->train_step(1, s);
    EXPECT_EQ(r.parts.count("train_B"), 1u);
    EXPECT_EQ(r.parts.count("meta_B"), s % 2 == 1 ? 1u : 0u) << s;  // --meta_interval 2
    meta_steps += static_cast<int>(r.parts.count("meta_B"));
  }
  EXPECT_TRUE(test::all_close(mscn.net(0).parameters()[0], a0, 0, 0)) << "A must not move in B's half";
  if (meta_steps > 0) EXPECT_FALSE(test::all_close(mscn.meta(1).parameters()[0], mb0, 0, 0));
  EXPECT_GT(meta_steps, 0) << "A's split left B no iteration with a meta step";
  EXPECT_FALSE(m->best_candidate(1));
  const EpochInfo a = m->begin_epoch(2);
  EXPECT_EQ(a.phase, "train A");
  for (int64_t s = 0; s < a.steps; ++s) EXPECT_EQ(m->train_step(2, s).parts.count("train_A"), 1u);
  EXPECT_TRUE(m->best_candidate(2));
  // The meta set's drawn pairs: as many as the clean ones, none with its caption's own image.
  const MetaSet& ms = mscn.meta_set();
  ASSERT_EQ(ms.noise_captions().size(), 12u);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_NE(ms.noise_images()[i], mscn.data().train->image_index(ms.noise_captions()[i]));
  EXPECT_EQ(std::set<int64_t>(ms.noise_captions().begin(), ms.noise_captions().end()).size(), 12u);
  const EvalResult v = m->validate();
  EXPECT_EQ(v.metrics.count("rsum_A"), 1u);
  const EvalResult t = m->test();
  // The per-net tables first, the averaged one (MSCN's reported numbers, the headline) last: results.md ends with it.
  const size_t net_a = t.table.find("net A alone"), net_b = t.table.find("net B alone");
  const size_t averaged = t.table.find("A and B averaged (MSCN's reported numbers)");
  ASSERT_NE(net_a, std::string::npos);
  ASSERT_NE(net_b, std::string::npos);
  ASSERT_NE(averaged, std::string::npos);
  EXPECT_LT(net_a, net_b);
  EXPECT_LT(net_b, averaged);
  EXPECT_EQ(t.table.find("alone", averaged), std::string::npos);
  // The averaged table's rSum line is the headline's score.
  EXPECT_NE(t.table.find("rSum", averaged), std::string::npos);
}

TEST_F(MscnMethodTest, TrainMetaSourceTakesWholeImagesOutOfTraining) {
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config("train"), log);
  auto& mscn = dynamic_cast<MscnMethod&>(*m);
  EXPECT_EQ(mscn.meta_set().num_clean(), 20);  // 4 images × 5 captions
  EXPECT_EQ(mscn.training_captions().size(), 100u);
  std::set<int64_t> kept_images;
  for (int64_t j : mscn.training_captions()) kept_images.insert(mscn.data().train->image_index(j));
  EXPECT_EQ(kept_images.size(), 20u);
}

// `rematch synth --meta_images N` writes a meta split of N fresh images (5 captions each) without changing the other
// splits; --meta_source split (the default) trains on it, and says what to do when the folder has none.
TEST_F(MscnMethodTest, SynthWritesAMetaSplitThatTheDefaultMetaSourceReads) {
  const std::vector<std::string> synth = {"synth", "--kind", "pairs", "--images", "24", "--dev_images", "4",
                                          "--test_images", "4", "--regions", "3", "--feature_dim", "8"};
  std::vector<std::string> with = synth, without = synth;
  with.insert(with.end(), {"--out", path("with"), "--meta_images", "3"});
  without.insert(without.end(), {"--out", path("without")});
  ASSERT_EQ(cli::test::run_cli(with).code, cli::kExitOk);
  ASSERT_EQ(cli::test::run_cli(without).code, cli::kExitOk);
  const std::string a = path("with") + "/synth_precomp/", b = path("without") + "/synth_precomp/";
  for (const char* f : {"train_ims.npy", "train_caps.txt", "dev_ims.npy", "test_caps.txt"})
    EXPECT_EQ(file_bytes(a + f), file_bytes(b + f)) << f;
  EXPECT_FALSE(std::filesystem::exists(b + "meta_ims.npy"));
  TrainConfig c = config();
  c.data_path = path("with");
  c.options<MscnOptions>().meta_source = MetaSource::Split;
  std::ostringstream log;
  {
    std::unique_ptr<Method> m = make_method(c, log);
    EXPECT_EQ(dynamic_cast<MscnMethod&>(*m).meta_set().num_clean(), 15);
  }
  c.data_path = path("without");
  try {
    make_method(c, log);
    ADD_FAILURE() << "no meta split: expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--meta_source split"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("meta_ims.npy"), std::string::npos) << e.what();
  }
  // --dry_run checks the same files and refuses the same way; with the split it lists them.
  const std::vector<std::string> dry = {"train", "--method", "mscn", "--data_name", "synth_precomp",
                                        "--meta_source", "split", "--dry_run", "--data_path"};
  std::vector<std::string> dry_with = dry, dry_without = dry;
  dry_with.push_back(path("with"));
  dry_without.push_back(path("without"));
  const cli::test::CliResult refused = cli::test::run_cli(dry_without);
  EXPECT_NE(refused.code, cli::kExitOk);
  EXPECT_NE(refused.err.find("--meta_source split: no meta split in"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("meta_ims.npy and meta_caps.txt missing"), std::string::npos) << refused.err;
  const cli::test::CliResult listed = cli::test::run_cli(dry_with);
  EXPECT_EQ(listed.code, cli::kExitOk) << listed.err;
  EXPECT_NE(listed.err.find("data: meta image features: " + path("with") + "/synth_precomp/meta_ims.npy"),
            std::string::npos) << listed.err;
  EXPECT_NE(listed.err.find("data: meta captions: "), std::string::npos) << listed.err;
  // Only the captions missing: named alone.
  std::filesystem::copy_file(path("with") + "/synth_precomp/meta_ims.npy", path("without") + "/synth_precomp/meta_ims.npy");
  const cli::test::CliResult half = cli::test::run_cli(dry_without);
  EXPECT_NE(half.code, cli::kExitOk);
  EXPECT_NE(half.err.find("(meta_caps.txt missing"), std::string::npos) << half.err;
}

// `rematch eval --checkpoint` on an MSCN run's checkpoint_best scores as the run's own test does: nets A and B each
// with its meta net, averaged (not the nets' untrained sim_eval_w heads), so every test metric comes out equal. An
// MSCN checkpoint is scored alone, and one whose meta nets are not named (an older version's) is refused.
TEST_F(MscnMethodTest, EvalCheckpointScoresWithTheMetaNetsAsTheRunsTest) {
  const TrainConfig c = config();  // writes the world
  const std::vector<std::string> data = {"--data_path", c.data_path, "--data_name", "synth_precomp"};
  std::vector<std::string> train = {"train", "--method", "mscn", "--run_dir", path("run"), "--noise_ratio", "0.5",
                                    "--batch_size", "8", "--embed_size", "8", "--word_dim", "4", "--sim_dim", "4",
                                    "--meta_source", "dev", "--meta_size", "12", "--meta_interval", "2",
                                    "--warmup_epoch", "1", "--num_epochs", "1", "--progress", "none"};
  train.insert(train.end(), data.begin(), data.end());
  const cli::test::CliResult t = cli::test::run_cli(train);
  ASSERT_EQ(t.code, cli::kExitOk) << t.err;
  run::MetricRecord test_record;
  for (const run::MetricRecord& m : run::read_metrics(path("run") + "/metrics.jsonl"))
    if (m.kind == "test") test_record = m;
  ASSERT_TRUE(test_record.has("test_rsum"));
  const std::string best = path("run") + "/checkpoint_best.safetensors";
  std::vector<std::string> eval = {"eval", "--checkpoint", best, "--split", "test", "--json"};
  eval.insert(eval.end(), data.begin(), data.end());
  const cli::test::CliResult e = cli::test::run_cli(eval);
  ASSERT_EQ(e.code, cli::kExitOk) << e.err;
  const nlohmann::json j = nlohmann::json::parse(e.out);
  for (const char* key : {"rsum", "i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10", "i2t_medr", "t2i_medr"})
    EXPECT_NEAR(j.at(key).get<double>(), test_record.get(std::string("test_") + key), 1e-9) << key;
  std::cout << "eval --checkpoint rSum " << j.at("rsum").get<double>() << ", the run's test rSum "
            << test_record.get("test_rsum") << "\n";
  // With another file: refused by name.
  std::vector<std::string> two = {"eval", "--checkpoint", best, "--checkpoint", path("run") +
                                  "/checkpoint_latest.safetensors"};
  two.insert(two.end(), data.begin(), data.end());
  const cli::test::CliResult pair = cli::test::run_cli(two);
  EXPECT_NE(pair.code, cli::kExitOk);
  EXPECT_NE(pair.err.find("MSCN checkpoint"), std::string::npos) << pair.err;
  // The same file without its "meta_prefixes" entry: refused, saying what to do.
  nn::SafetensorsFile f = nn::load_safetensors(best);
  ASSERT_EQ(f.metadata.erase("meta_prefixes"), 1u);
  f.metadata.erase(nn::kChecksumKey);
  nn::save_safetensors(path("old.safetensors"), f.tensors, f.metadata, true);
  std::vector<std::string> old = {"eval", "--checkpoint", path("old.safetensors")};
  old.insert(old.end(), data.begin(), data.end());
  const cli::test::CliResult o = cli::test::run_cli(old);
  EXPECT_NE(o.code, cli::kExitOk);
  EXPECT_NE(o.err.find("meta_prefixes"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("retrain"), std::string::npos) << o.err;
  // Control: without the meta nets at all, the file scores with net A's sim_eval_w head (the former behaviour), and
  // the metrics are not the run's.
  nn::NamedTensors nets_only;
  for (const auto& [name, t] : f.tensors)
    if (name.rfind("meta_", 0) != 0) nets_only.emplace_back(name, t);
  f.metadata.erase("model_prefixes");
  nn::save_safetensors(path("nets_only.safetensors"), nets_only, f.metadata, true);
  std::vector<std::string> head = {"eval", "--checkpoint", path("nets_only.safetensors"), "--split", "test", "--json"};
  head.insert(head.end(), data.begin(), data.end());
  const cli::test::CliResult h = cli::test::run_cli(head);
  ASSERT_EQ(h.code, cli::kExitOk) << h.err;
  const nlohmann::json hj = nlohmann::json::parse(h.out);
  std::cout << "sim_eval_w of net A: rSum " << hj.at("rsum").get<double>() << ", i2t meanr "
            << hj.at("i2t_meanr").get<double>() << " against " << j.at("i2t_meanr").get<double>() << "\n";
  EXPECT_NE(hj.at("i2t_meanr").get<double>(), j.at("i2t_meanr").get<double>());
}

// A meta set whose passes end with a batch of one pair (the meta step's BatchNorm cannot take it) is refused before
// training, naming the sizes and the flags to change; one pair more or less trains.
TEST_F(MscnMethodTest, MetaSetEndingInABatchOfOnePairIsRefused) {
  TrainConfig c = config();  // 12 dev captions: 24 meta pairs
  c.batch_size = 23;
  std::ostringstream log;
  try {
    make_method(c, log);
    ADD_FAILURE() << "a last meta batch of one pair: expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("meta set holds 24 pairs"), std::string::npos) << what;
    EXPECT_NE(what.find("--batch_size 23"), std::string::npos) << what;
    EXPECT_NE(what.find("--meta_size"), std::string::npos) << what;
  }
  c.batch_size = 22;
  EXPECT_NO_THROW(make_method(c, log));
}

TEST_F(MscnMethodTest, BadFlagsAreRefusedByName) {
  const TrainConfig c = config();
  const std::vector<std::string> base = {"train", "--method", "mscn", "--data_path", c.data_path, "--data_name",
                                         "synth_precomp", "--meta_source", "dev", "--dry_run"};
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{{"--meta_interval", "0"},
                                                                                   {"--meta_lr", "0"},
                                                                                   {"--meta_source", "elsewhere"},
                                                                                   {"--meta_size", "0"},
                                                                                   {"--batch_size", "1"}}) {
    std::vector<std::string> args = base;
    args.push_back(flag);
    args.push_back(value);
    const cli::test::CliResult r = cli::test::run_cli(args);
    EXPECT_NE(r.code, cli::kExitOk) << flag << " " << value;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
  const cli::test::CliResult ok = cli::test::run_cli(base);
  EXPECT_EQ(ok.code, cli::kExitOk) << ok.err;
}

}  // namespace
}  // namespace rematch::train
