// Shared set-up of the tests of `rematch score`, `rematch init-checkpoint` and `rematch eval --checkpoint`:
// the program through cli::run, a temporary folder per test, and a tiny synthetic data set (4 test images,
// 20 captions, 3 regions of 8 features) with a small SGR and a small SAF checkpoint made by init-checkpoint.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace rematch::cli::test {

class SgrafCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("rematch_sgraf_cli_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("synth"), "--images", "6", "--dev_images", "3",
                       "--test_images", "4", "--regions", "3", "--feature_dim", "8", "--seed", "2"})
                  .code,
              kExitOk);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Data flags of the synthetic set.
  std::vector<std::string> data_flags() const { return {"--data_path", path("synth"), "--data_name", "synth_precomp"}; }
  // A small randomly initialised model fitting the synthetic data; returns its path.
  std::string init(const std::string& module, const std::string& name, const std::string& seed = "1",
                   const std::string& regions = "3") {
    const CliResult r = run_cli({"init-checkpoint",
                                 "--module_name",
                                 module,
                                 "--vocab_path",
                                 path("synth/vocab"),
                                 "--data_name",
                                 "synth_precomp",
                                 "--img_dim",
                                 "8",
                                 "--num_regions",
                                 regions,
                                 "--word_dim",
                                 "4",
                                 "--embed_size",
                                 "8",
                                 "--sim_dim",
                                 "4",
                                 "--seed",
                                 seed,
                                 "--out",
                                 path(name)});
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return path(name);
  }

  std::filesystem::path dir_;
};

}  // namespace rematch::cli::test
