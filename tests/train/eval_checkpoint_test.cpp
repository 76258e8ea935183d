// `rematch eval --checkpoint`: metrics of the scored split equal `eval --sims` on the matrix `score` saved,
// SGRAF with --checkpoint twice, captions per image read from the data, --sims/--checkpoint exclusive, and
// --device: only with --checkpoint, refused before any data is read when unusable, and on a GPU (skipped
// without one) the CPU's metrics.
#include "train/cli/eval_checkpoint.h"

#include "sgraf_cli_fixture.h"
#include "tensor/device.h"
#include "tensor/tensor.h"
#include "test_util.h"
#include "train/eval/retrieval_metrics.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::run_cli;
using test::SgrafCliTest;
using test::operator+;

TEST_F(SgrafCliTest, EvalCheckpointEqualsEvalOfTheScoredMatrix) {
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  for (const std::vector<std::string>& ckpts : {std::vector<std::string>{"--checkpoint", sgr},
                                                std::vector<std::string>{"--checkpoint", sgr, "--checkpoint", saf}}) {
    ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--out", path("S.npy")} + ckpts + data_flags()).code, kExitOk);
    const CliResult from_sims = run_cli({"eval", "--sims", path("S.npy"), "--json"});
    const CliResult from_ckpt = run_cli(std::vector<std::string>{"eval", "--json"} + ckpts + data_flags());
    ASSERT_EQ(from_ckpt.code, kExitOk) << from_ckpt.err;
    EXPECT_EQ(from_ckpt.out, from_sims.out);
    const CliResult table = run_cli(std::vector<std::string>{"eval"} + ckpts + data_flags());
    EXPECT_NE(table.out.find(ckpts.size() == 4 ? "SGRAF (SGR+SAF averaged) on synth_precomp/test"
                                               : "SGR on synth_precomp/test"),
              std::string::npos)
        << table.out;
    EXPECT_NE(table.out.find("rSum"), std::string::npos) << table.out;
  }
}

TEST_F(SgrafCliTest, ScoreSplitReportsCaptionsPerImage) {
  CheckpointScoringOptions o;
  o.checkpoints = {init("SAF", "saf.safetensors")};
  o.data_path = path("synth");
  o.data_name = "synth_precomp";
  o.split = "dev";
  o.block_images = 2;
  o.block_captions = 4;
  const ScoredSplit s = score_split(o);
  EXPECT_EQ(s.sims.sizes(), (Shape{3, 15}));
  EXPECT_EQ(s.captions_per_image, 5);
  for (float v : s.sims.to_vector<float>()) EXPECT_TRUE(v > 0 && v < 1);
  o.data_path.clear();
  EXPECT_THROW(score_split(o), UsageError);
}

TEST_F(SgrafCliTest, EvalNeedsExactlyOneSource) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S.npy")} + data_flags()).code,
            kExitOk);
  const CliResult none = run_cli({"eval"});
  EXPECT_EQ(none.code, kExitUsage);
  EXPECT_NE(none.err.find("--sims"), std::string::npos) << none.err;
  const CliResult both =
      run_cli(std::vector<std::string>{"eval", "--sims", path("S.npy"), "--checkpoint", sgr} + data_flags());
  EXPECT_EQ(both.code, kExitUsage);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  const CliResult no_data = run_cli({"eval", "--checkpoint", sgr});
  EXPECT_EQ(no_data.code, kExitUsage);
  EXPECT_NE(no_data.err.find("--data_path"), std::string::npos) << no_data.err;
}

TEST_F(SgrafCliTest, EvalDeviceGoesWithCheckpointAndIsCheckedFirst) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S.npy")} + data_flags()).code,
            kExitOk);
  const CliResult sims_only = run_cli({"eval", "--sims", path("S.npy"), "--device", "cpu"});
  EXPECT_EQ(sims_only.code, kExitUsage);
  EXPECT_NE(sims_only.err.find("--device requires --checkpoint"), std::string::npos) << sims_only.err;

  const std::vector<std::string> missing_data = {"--data_path", path("nowhere"), "--data_name", "synth_precomp"};
  const CliResult typo = run_cli(std::vector<std::string>{"eval", "--checkpoint", sgr, "--device", "cuda:x"} +
                                 missing_data);
  EXPECT_EQ(typo.code, kExitUsage);
  EXPECT_NE(typo.err.find("--device must be cpu, cuda or cuda:N (got 'cuda:x')"), std::string::npos) << typo.err;
  const CliResult absent = run_cli(std::vector<std::string>{"eval", "--checkpoint", sgr, "--device",
                                                            cuda_available() ? "cuda:99" : "cuda"} +
                                   missing_data);
  EXPECT_EQ(absent.code, kExitFailure);
  EXPECT_NE(absent.err.find("--device cuda"), std::string::npos) << absent.err;
  EXPECT_NE(absent.err.find(cuda_available() ? "CUDA device(s) visible" : cuda_unavailable_reason()),
            std::string::npos)
      << absent.err;
  EXPECT_EQ(absent.err.find("nowhere"), std::string::npos) << "data was read: " << absent.err;
}

// The GPU's scores are the CPU's to float32 rounding (score_command_test.cpp); here eval scores on the GPU
// exactly as score does, so its metrics are those of the matrix `score --device cuda` saved.
TEST_F(SgrafCliTest, EvalCheckpointOnCudaEqualsEvalOfTheCudaScores) {
  SKIP_WITHOUT_CUDA();
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  const std::vector<std::string> on_gpu = {"--checkpoint", sgr, "--checkpoint", saf, "--device", "cuda"};
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--out", path("S.npy")} + on_gpu + data_flags()).code, kExitOk);
  const CliResult from_sims = run_cli({"eval", "--sims", path("S.npy"), "--json"});
  const CliResult from_ckpt = run_cli(std::vector<std::string>{"eval", "--json"} + on_gpu + data_flags());
  ASSERT_EQ(from_ckpt.code, kExitOk) << from_ckpt.err;
  EXPECT_EQ(from_ckpt.out, from_sims.out);
}

}  // namespace
}  // namespace rematch::cli
