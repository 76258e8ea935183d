// DECL's pieces (train/methods/decl/, docs/methods/decl.md) beyond the golden steps against the official code
// (decl_golden_step_test.cpp): the hardness schedule at the official sizes, the loss terms on hand-made inputs,
// the presets, and the refusal of bad flags by name (the resolved config and `rematch train --dry_run`).
#include <gtest/gtest.h>

#include <cmath>

#include "cli_runner.h"
#include "test_util.h"
#include "train/methods/decl/decl_method.h"

namespace rematch::train {
namespace {

using cli::test::run_cli;

TEST(DeclHardness, AnnealsFromTheBatchToMuAsTheOfficialSchedule) {
  // max(int(128 − 0.025·t), 5): 127 at the first step, 5 from t = 4,920 on (int truncates: 5.000…01 → 5).
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 1, 128), 127);
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 40, 128), 127);
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 41, 128), 126);
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 4920, 128), 5);
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 100000, 128), 5);  // negative before the max
  // A short last batch: b − 1 when it has fewer pairs than the hardness.
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 1, 20), 19);
  EXPECT_EQ(decl::hardness(128, 0.025, 5, 5000, 20), 5);
}

TEST(DeclLosses, HingeKeepsTheKHardestOfEachRowAndColumn) {
  // S = [[0.5, 0.6, 0.1], [0.2, 0.4, 0.3], [0.0, 0.9, 0.8]], margin 0.2.
  const Tensor S = from_vector(std::vector<double>{0.5, 0.6, 0.1, 0.2, 0.4, 0.3, 0.0, 0.9, 0.8}, {3, 3});
  // Row hinges [0.2 + S_ij − S_ii]₊ (j ≠ i): row 0 {0.3, 0}, row 1 {0, 0.1}, row 2 {0, 0.3};
  // column hinges [0.2 + S_ji − S_ii]₊ (j ≠ i): col 0 {0, 0}, col 1 {0.4, 0.7}, col 2 {0, 0}.
  const std::vector<double> k1 = decl::robust_dynamic_hinge(S, 0.2, 1).to_vector<double>();
  EXPECT_NEAR(k1[0], 0.3 + 0.0, 1e-12);
  EXPECT_NEAR(k1[1], 0.1 + 0.7, 1e-12);
  EXPECT_NEAR(k1[2], 0.3 + 0.0, 1e-12);
  const std::vector<double> k2 = decl::robust_dynamic_hinge(S, 0.2, 2).to_vector<double>();
  EXPECT_NEAR(k2[1], (0.1 + 0.4 + 0.7) / 2, 1e-12);
}

TEST(DeclLosses, KlToUniformIsZeroAtTheUniformAndPositiveElsewhere) {
  const Tensor ones = from_vector(std::vector<double>(8, 1.0), {2, 4});
  for (double v : decl::dirichlet_kl_to_uniform(ones).to_vector<double>()) EXPECT_NEAR(v, 0.0, 1e-12);
  // KL(Dir(2, 1) ‖ Dir(1, 1)) = log 2 − 1/2 (the Beta(2, 1) density 2x against the uniform).
  const Tensor a = from_vector(std::vector<double>{2.0, 1.0}, {1, 2});
  EXPECT_NEAR(decl::dirichlet_kl_to_uniform(a).item<double>(), std::log(2.0) - 0.5, 1e-12);
}

TEST(DeclLosses, EvidentialLossOfAConfidentCorrectRowIsSmall) {
  // Row 0 all evidence on its label, row 1 all on the wrong column: the first loss is far below the second.
  const Tensor alpha = from_vector(std::vector<double>{1000.0, 1.0, 1.0, 1000.0}, {2, 2});
  const Tensor y = from_vector(std::vector<double>{1.0, 0.0, 1.0, 0.0}, {2, 2});
  const std::vector<double> l = decl::evidential_loss(alpha, y, 0.1).to_vector<double>();
  EXPECT_LT(l[0], 0.01);
  EXPECT_GT(l[1], 1.0);
}

TrainConfig decl_config(const std::string& preset, double noise) {
  TrainConfig c;
  c.method = "decl";
  c.preset = preset;
  c.data_path = "/data";
  c.noise_ratio = noise;
  resolve_defaults(c);
  return c;
}

TEST(DeclPresets, FollowTheOfficialScripts) {
  const TrainConfig f30k = decl_config("f30k", 0.2);
  EXPECT_EQ(f30k.warmup_epoch, 5);
  EXPECT_EQ(f30k.num_epochs, 40);
  EXPECT_EQ(f30k.lr_update, 20);
  EXPECT_DOUBLE_EQ(f30k.learning_rate, 2e-4);
  EXPECT_EQ(f30k.batch_size, 128);
  EXPECT_DOUBLE_EQ(f30k.grad_clip, 2.0);
  EXPECT_DOUBLE_EQ(f30k.options<DeclOptions>().tau, 0.1);
  EXPECT_DOUBLE_EQ(f30k.options<DeclOptions>().lambda1, 0.8);
  EXPECT_DOUBLE_EQ(f30k.options<DeclOptions>().lambda2, 0.1);
  EXPECT_DOUBLE_EQ(f30k.options<DeclOptions>().eta, 0.025);
  EXPECT_EQ(f30k.options<DeclOptions>().mu, 5);
  EXPECT_EQ(f30k.val_subset, data::ValSubset::sgraf);
  EXPECT_EQ(decl_config("f30k", 0.6).warmup_epoch, 2);
  EXPECT_EQ(decl_config("f30k", 0.8).warmup_epoch, 2);
  const TrainConfig coco = decl_config("coco", 0.4);
  EXPECT_EQ(coco.warmup_epoch, 2);
  EXPECT_EQ(coco.num_epochs, 20);
  EXPECT_EQ(coco.lr_update, 10);
  EXPECT_DOUBLE_EQ(coco.learning_rate, 5e-4);
  EXPECT_EQ(coco.test_split, TestSplit::Testall);
  EXPECT_EQ(decl_config("coco", 0.6).warmup_epoch, 1);
  const TrainConfig cc = decl_config("cc152k", 0);
  EXPECT_EQ(cc.warmup_epoch, 5);
  EXPECT_EQ(cc.num_epochs, 40);
}

TEST(DeclFlags, BadValuesAreRefusedByName) {
  auto refused = [](const std::function<void(TrainConfig&)>& set, std::vector<std::string> parts) {
    TrainConfig c;
    c.method = "decl";
    c.preset = "f30k";
    c.data_path = "/data";
    set(c);
    EXPECT_TRUE(test::throws_with([&] { resolve_defaults(c); }, parts));
  };
  refused([](TrainConfig& c) { c.options<DeclOptions>().mu = 0; }, {"--mu"});
  refused([](TrainConfig& c) { c.options<DeclOptions>().mu = 128; }, {"--mu", "--batch_size"});
  refused([](TrainConfig& c) { c.options<DeclOptions>().lambda1 = -1; }, {"--lambda1"});
  refused([](TrainConfig& c) { c.options<DeclOptions>().lambda2 = -0.5; }, {"--lambda2"});
  refused([](TrainConfig& c) { c.options<DeclOptions>().eta = -1; }, {"--eta"});
  refused([](TrainConfig& c) { c.options<DeclOptions>().tau = 0; }, {"--tau"});
  // On the command line: a malformed value, an unknown flag, another method's ablation switch.
  auto cli_refuses = [](std::vector<std::string> extra, const std::string& needle) {
    std::vector<std::string> args = {"train", "--method", "decl", "--preset", "f30k", "--data_path", "/nonexistent",
                                     "--dry_run"};
    args.insert(args.end(), extra.begin(), extra.end());
    const cli::test::CliResult r = run_cli(args);
    EXPECT_NE(r.code, 0) << needle;
    EXPECT_NE((r.out + r.err).find(needle), std::string::npos) << needle << ":\n" << r.out << r.err;
  };
  cli_refuses({"--mu", "two"}, "--mu");
  cli_refuses({"--eta", "-0.1"}, "--eta");
  cli_refuses({"--rematch_loss", "kl"}, "--rematch_loss");
}

}  // namespace
}  // namespace rematch::train
