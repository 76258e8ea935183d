// `rematch init-checkpoint`: a rematch training checkpoint at epoch 0 whose model_config rebuilds the model,
// the vocabulary size from the vocabulary file or --vocab_size, reproducible from --seed, and usage errors.
#include "train/cli/init_checkpoint_command.h"

#include "models/models.h"
#include "sgraf_cli_fixture.h"
#include "tensor/tensor.h"
#include "train/data/vocab.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::run_cli;
using test::SgrafCliTest;

TEST_F(SgrafCliTest, InitCheckpointWritesARebuildableModel) {
  const std::string file = init("SAF", "saf.safetensors", "7");
  const models::SgrafFile info = models::read_sgraf_file(file);
  EXPECT_EQ(info.kind, models::SgrafFileKind::RematchCheckpoint);
  EXPECT_EQ(info.config.module, models::SimilarityModule::SAF);
  EXPECT_EQ(info.config.vocab_size, data::Vocabulary::load(path("synth/vocab/synth_precomp_vocab.json")).size());
  EXPECT_EQ(info.config.img_dim, 8);
  EXPECT_EQ(info.config.num_regions, 3);
  EXPECT_EQ(info.config.embed_size, 8);
  EXPECT_EQ(nn::read_checkpoint_info(file).epoch, 0);
  const auto model = models::load_sgraf_model(file);
  EXPECT_EQ(model->config().sim_dim, 4);
  // The same seed gives the same weights, another seed others.
  const std::string again = init("SAF", "again.safetensors", "7"), other = init("SAF", "other.safetensors", "8");
  const auto a = models::load_sgraf_model(again)->state_dict(), b = models::load_sgraf_model(other)->state_dict();
  const auto m = model->state_dict();
  EXPECT_EQ(m[0].second.to_vector<float>(), a[0].second.to_vector<float>());
  EXPECT_NE(m[0].second.to_vector<float>(), b[0].second.to_vector<float>());
}

TEST_F(SgrafCliTest, InitCheckpointWithVocabularySize) {
  const CliResult r =
      run_cli({"init-checkpoint", "--module_name", "SGR", "--vocab_size", "8481", "--img_dim", "16", "--word_dim", "4",
               "--embed_size", "8", "--sim_dim", "4", "--out", path("v.safetensors")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("SGR (V=8481, img_dim=16"), std::string::npos) << r.out;
  EXPECT_EQ(models::read_sgraf_file(path("v.safetensors")).config.vocab_size, 8481);
}

TEST_F(SgrafCliTest, InitCheckpointUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"init-checkpoint", "--module_name", "AVE", "--vocab_size", "5", "--out", path("x")}, "--module_name"},
      {{"init-checkpoint", "--module_name", "SGR", "--out", path("x")}, "--vocab_size"},
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5", "--vocab_path", path("synth/vocab"),
        "--data_name", "synth_precomp", "--out", path("x")},
       "not both"},
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5"}, "--out"},
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5", "--sim_dim", "0", "--out", path("x")},
       "--sim_dim"},
      // One graph-reasoning layer a step: a step count in the millions built layers until memory ran out.
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5", "--sgr_step", "100000000", "--out",
        path("x")},
       "--sgr_step: Value 100000000 not in range 1 to 64"},
      // CLI11's PositiveNumber printed its range with DBL_MAX's 309 digits, and clamped 1e20 to 2^63 - 1.
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5", "--learning_rate", "inf", "--out", path("x")},
       "--learning_rate: must be a finite number > 0, got inf\n"},
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5", "--img_dim", "99999999999999999999", "--out",
        path("x")},
       "--img_dim: must be a whole number >= 1 below 2^63, got 99999999999999999999\n"},
      {{"init-checkpoint", "--module_name", "SGR", "--vocab_size", "5", "--img_dim", "1.5", "--out", path("x")},
       "--img_dim: must be a whole number >= 1, got '1.5'"},
  };
  for (const auto& [args, needle] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << args[2] << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path("x")));
}

// --out names a new file: an existing one (a run's checkpoint_best, even under the run's lock) was replaced.
TEST_F(SgrafCliTest, InitCheckpointReplacesNothing) {
  const std::string best = init("SGR", "checkpoint_best.safetensors", "1");
  const std::string before = models::describe(models::read_sgraf_file(best).config);
  const std::uintmax_t size = std::filesystem::file_size(best);
  const CliResult r = run_cli({"init-checkpoint", "--module_name", "SAF", "--vocab_size", "5", "--out", best});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--out " + best + " exists: init-checkpoint writes a new checkpoint and replaces nothing"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::filesystem::file_size(best), size);
  EXPECT_EQ(models::describe(models::read_sgraf_file(best).config), before);
}

}  // namespace
}  // namespace rematch::cli
