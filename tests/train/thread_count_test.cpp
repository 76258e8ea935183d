// `rematch score` writes the same matrix, byte for byte, at any number of OpenMP threads (1, 2, 3 and 4 here):
// sizes at which the models' products are split into blocks (tensor/cpu/matmul.cpp), an SGR and a SAF model
// averaged. (Under mpirun, tests/parallel/sharded_scoring.sh compares ranks of 2 threads with one process.) And a
// training run (L2RM on SAF: a warm-up and a main epoch, its optimal transport included) writes the same
// checkpoint at 1 and 3 threads. On CUDA (skipped without a device), the score matrix is the same run to run.
#include <omp.h>

#include <filesystem>
#include <fstream>

#ifdef REMATCH_CUDA_EMULATED
#include <cuda_runtime.h>  // the emulator's: cuda_emu::set_reverse_schedule
#endif

#include "cli_runner.h"
#include "test_util.h"
#include "train/synth/pairs_world.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::run_cli;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class ThreadCountTest : public rematch::test::TempDirTest {};

TEST_F(ThreadCountTest, TheScoreMatrixIsTheSameAtAnyThreadCount) {
  synth::PairsWorldConfig c;
  c.train_images = 12, c.dev_images = 4, c.test_images = 12, c.regions = 36, c.feature_dim = 256;
  synth::write_pairs_world(synth::make_pairs_world(c), path("data"));
  for (const char* m : {"SGR", "SAF"})
    ASSERT_EQ(run_cli({"init-checkpoint", "--module_name", m, "--out", path(std::string(m) + ".safetensors"),
                       "--vocab_path", path("data/vocab"), "--data_name", "synth_precomp", "--img_dim", "256",
                       "--word_dim", "32", "--embed_size", "256", "--sim_dim", "32", "--num_regions", "36", "--seed", "1"})
                  .code,
              kExitOk);
  const int before = omp_get_max_threads();
  std::vector<std::string> matrices;
  for (int threads : {1, 2, 3, 4}) {
    omp_set_num_threads(threads);
    const std::string out = path("sims_" + std::to_string(threads) + ".npy");
    const CliResult r = run_cli({"score", "--checkpoint", path("SGR.safetensors"), "--checkpoint", path("SAF.safetensors"),
                                 "--data_path", path("data"), "--data_name", "synth_precomp", "--split", "test", "--out", out});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    matrices.push_back(bytes_of(out));
  }
  omp_set_num_threads(before);
  ASSERT_GT(matrices[0].size(), 12u * 60u * 4u);
  for (size_t i = 1; i < matrices.size(); ++i) EXPECT_TRUE(matrices[i] == matrices[0]) << i + 1 << " threads differ from 1";
}

// On CUDA the same bytes run to run, whatever the host's thread count (docs/design.md §2.4: cuBLAS and our own
// kernels on one stream, none of which adds with atomics): `rematch score --device cuda` at 1, 2 and 4 threads.
// Under the CUDA emulator (docs/cuda_emulator.md) a fourth run resumes the threads and runs the blocks in reverse
// order: a sum whose order followed the threads' or blocks' timing (an atomic add, a block-order reduction) would
// give other bytes there.
TEST_F(ThreadCountTest, TheCudaScoreMatrixIsTheSameRunToRun) {
  SKIP_WITHOUT_CUDA();
  synth::PairsWorldConfig c;
  c.train_images = 12, c.dev_images = 4, c.test_images = 40, c.regions = 36, c.feature_dim = 256;
  synth::write_pairs_world(synth::make_pairs_world(c), path("data"));
  for (const char* m : {"SGR", "SAF"})
    ASSERT_EQ(run_cli({"init-checkpoint", "--module_name", m, "--out", path(std::string(m) + ".safetensors"),
                       "--vocab_path", path("data/vocab"), "--data_name", "synth_precomp", "--img_dim", "256",
                       "--word_dim", "32", "--embed_size", "256", "--sim_dim", "32", "--num_regions", "36", "--seed", "1"})
                  .code,
              kExitOk);
  const int before = omp_get_max_threads();
  std::vector<std::string> matrices;
  std::vector<int> runs{1, 2, 4};
#ifdef REMATCH_CUDA_EMULATED
  runs.push_back(-2);  // 2 threads, the reverse schedule
#endif
  for (int run : runs) {
    const int threads = run < 0 ? -run : run;
    omp_set_num_threads(threads);
#ifdef REMATCH_CUDA_EMULATED
    cuda_emu::set_reverse_schedule(run < 0);
#endif
    const std::string out = path("cuda_" + std::to_string(run) + ".npy");
    const CliResult r = run_cli({"score", "--checkpoint", path("SGR.safetensors"), "--checkpoint", path("SAF.safetensors"),
                                 "--data_path", path("data"), "--data_name", "synth_precomp", "--split", "test",
                                 "--device", "cuda", "--block_images", "7", "--out", out});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    matrices.push_back(bytes_of(out));
  }
#ifdef REMATCH_CUDA_EMULATED
  cuda_emu::set_reverse_schedule(false);
#endif
  omp_set_num_threads(before);
  ASSERT_GT(matrices[0].size(), 40u * 200u * 4u);
  for (size_t i = 1; i < matrices.size(); ++i) EXPECT_TRUE(matrices[i] == matrices[0]) << "run " << i + 1 << " differs from run 1";
}

TEST_F(ThreadCountTest, TrainingWritesTheSameCheckpointAtAnyThreadCount) {
  synth::PairsWorldConfig c;
  c.train_images = 24, c.dev_images = 4, c.test_images = 4, c.regions = 36, c.feature_dim = 256, c.seed = 3;
  synth::write_pairs_world(synth::make_pairs_world(c), path("data"));
  const int before = omp_get_max_threads();
  std::vector<std::string> checkpoints;
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    const std::string run = path("run_" + std::to_string(threads));
    const CliResult r = run_cli({"train", "--method", "l2rm", "--module_name", "SAF", "--data_path", path("data"),
                                 "--data_name", "synth_precomp", "--batch_size", "24", "--embed_size", "256",
                                 "--word_dim", "32", "--sim_dim", "32", "--num_epochs", "1", "--warmup_epoch", "1",
                                 "--noise_ratio", "0.2", "--progress", "none", "--no_plots", "--run_dir", run});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    checkpoints.push_back(bytes_of(run + "/checkpoint_latest.safetensors"));
  }
  omp_set_num_threads(before);
  ASSERT_FALSE(checkpoints[0].empty());
  EXPECT_TRUE(checkpoints[1] == checkpoints[0]) << "3 threads trained another model than 1";
}

}  // namespace
}  // namespace rematch::cli
