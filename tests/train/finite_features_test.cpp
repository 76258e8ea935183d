// One NaN or Inf in a split's region features is refused where the features are loaded, naming the file and the
// row: before, a SAF model scored such an image 0.502 against every caption, validation picked a best checkpoint
// on it and `eval --checkpoint` printed an rSum with exit 0. Training, scoring, evaluation and the data check all
// refuse it.
#include "train/data/finite_features.h"

#include <cmath>
#include <filesystem>

#include "cli_runner.h"
#include "tensor/npy.h"
#include "test_util.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::operator+;
using test::run_cli;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CheckFiniteRows, NamesTheFirstRowHoldingNanOrInf) {
  std::vector<float> v(3 * 2 * 2, 1.0f);
  v[1 * 4 + 0 * 2 + 1] = NAN;
  v[2 * 4 + 1 * 2 + 0] = -INFINITY;
  EXPECT_THROWS_WITH(data::check_finite_rows(from_vector(v, {3, 2, 2}), "image features file", "f.npy", "row",
                                              "re-extract it"),
                     "image features file 'f.npy': row 1 holds nan (element [1, 0, 1]); only finite values can be "
                     "used: re-extract it");
  v[1 * 4 + 0 * 2 + 1] = 0;
  EXPECT_THROWS_WITH(data::check_finite_rows(from_vector(v, {3, 2, 2}), "x", "f.npy", "row", "."), "row 2 holds -inf");
  v[2 * 4 + 1 * 2 + 0] = 0;
  EXPECT_NO_THROW(data::check_finite_rows(from_vector(v, {3, 2, 2}), "x", "f.npy", "row", "."));
  const std::vector<double> big(300000, 2.0);  // several blocks: the first bad row is found whichever block holds it
  std::vector<double> late = big;
  late[250000] = NAN;
  late[299999] = NAN;
  EXPECT_THROWS_WITH(data::check_finite_rows(from_vector(late, {3000, 100}), "x", "f.npy", "row", "."),
                     "row 2500 holds nan (element [2500, 0])");
  EXPECT_NO_THROW(data::check_finite_rows(from_vector<int64_t>({1, 2}), "x", "f.npy", "row", "."));
}

class FiniteFeaturesTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    rematch::test::TempDirTest::SetUp();
    ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("synth"), "--images", "20", "--dev_images", "4",
                       "--test_images", "6", "--regions", "4", "--feature_dim", "8", "--seed", "3"})
                  .code,
              kExitOk);
    ASSERT_EQ(run_cli({"init-checkpoint", "--module_name", "SAF", "--out", path("saf.safetensors"), "--vocab_path",
                       path("synth/vocab"), "--data_name", "synth_precomp", "--img_dim", "8", "--word_dim", "8",
                       "--embed_size", "8", "--sim_dim", "8", "--num_regions", "4"})
                  .code,
              kExitOk);
  }
  // Puts `value` into one feature of row `row` of <split>_ims.npy; returns the file's path.
  std::string poison(const std::string& split, int64_t row, float value) {
    const std::string file = path("synth/synth_precomp/" + split + "_ims.npy");
    const Tensor t = load_npy(file, -1);
    std::vector<float> v = t.to_vector<float>();
    v[static_cast<size_t>(row * t.size(1) * t.size(2) + 5)] = value;
    save_npy(file, from_vector(v, t.sizes()));
    return file;
  }
  std::vector<std::string> data(const std::string& split) const {
    return {"--data_path", path("synth"), "--data_name", "synth_precomp", "--split", split};
  }
};

TEST_F(FiniteFeaturesTest, ScoringAndEvaluationRefuseANanRow) {
  const std::string file = poison("test", 3, NAN);
  const CliResult score = run_cli(std::vector<std::string>{"score", "--checkpoint", path("saf.safetensors"), "--out",
                                                           path("sims.npy")} + data("test"));
  EXPECT_EQ(score.code, kExitFailure);
  EXPECT_TRUE(contains(score.err, "image features file '" + file + "': row 3 holds nan (element [3, 0, 5])")) << score.err;
  EXPECT_FALSE(std::filesystem::exists(path("sims.npy")));
  const CliResult eval = run_cli(std::vector<std::string>{"eval", "--checkpoint", path("saf.safetensors")} + data("test"));
  EXPECT_EQ(eval.code, kExitFailure);
  EXPECT_FALSE(contains(eval.out, "rSum")) << eval.out;
  EXPECT_TRUE(contains(eval.err, "row 3 holds nan")) << eval.err;
}

TEST_F(FiniteFeaturesTest, TrainingRefusesAnInfInTheValidationSplit) {
  const std::string file = poison("dev", 1, INFINITY);
  const CliResult r = run_cli({"train", "--method", "triplet", "--data_path", path("synth"), "--data_name",
                               "synth_precomp", "--run_dir", path("run"), "--batch_size", "8", "--embed_size", "8",
                               "--word_dim", "8", "--sim_dim", "8", "--num_epochs", "1", "--progress", "none"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_TRUE(contains(r.err, "image features file '" + file + "': row 1 holds inf")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("run/checkpoint_best.safetensors")));
}

TEST_F(FiniteFeaturesTest, TheDataCheckReportsIt) {
  const std::string file = poison("test", 5, -INFINITY);
  const CliResult r = run_cli({"data", "check", "--data_path", path("synth"), "--data_name", "synth_precomp"});
  EXPECT_NE(r.code, kExitOk);
  EXPECT_TRUE(contains(r.out + r.err, "row 5 holds -inf")) << r.out << r.err;
}

}  // namespace
}  // namespace rematch::cli
