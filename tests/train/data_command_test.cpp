// `rematch data check` through the program: the table and exit 0 on a good folder, exit 1 with the problem named
// on a bad one, --json, and the command-line mistakes (exit 2).
#include "train/cli/data_command.h"

#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_util.h"
#include "train/synth/pairs_world.h"

namespace rematch::cli {
namespace {

namespace fs = std::filesystem;
using test::run_cli;
using test::operator+;

class DataCommandTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    synth::PairsWorldConfig c;
    c.train_images = 30, c.dev_images = 5, c.test_images = 5, c.regions = 3, c.feature_dim = 4;
    synth::write_pairs_world(synth::make_pairs_world(c), dir_.string());
  }
  std::vector<std::string> check_args() const {
    return {"data", "check", "--data_path", dir_.string(), "--data_name", "synth_precomp"};
  }
};

TEST_F(DataCommandTest, GoodFolderExitsZeroWithTheTable) {
  const auto r = run_cli(check_args());
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("synth_precomp/train_ims.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float32 [30, 3, 4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ready to train"), std::string::npos) << r.out;
}

TEST_F(DataCommandTest, BadFolderExitsOneNamingTheFile) {
  const std::string ims = (dir_ / "synth_precomp" / "dev_ims.npy").string();
  fs::resize_file(ims, fs::file_size(ims) / 2);
  const auto r = run_cli(check_args());
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(ims + "' is truncated"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("data check: 1 problem(s)"), std::string::npos) << r.err;
}

TEST_F(DataCommandTest, JsonIsOneObject) {
  const auto r = run_cli(check_args() + std::vector<std::string>{"--json", "--quick"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"], "precomp");
  EXPECT_EQ(j["errors"], 0);
  EXPECT_FALSE(j["items"][1]["numbers"].contains("oov_share"));  // --quick tokenises nothing
}

TEST_F(DataCommandTest, CommandLineMistakes) {
  auto r = run_cli({"data", "check", "--data_path", dir_.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("give --data_name"), std::string::npos) << r.err;
  r = run_cli({"data"});
  EXPECT_EQ(r.code, kExitUsage);
}

// A FIFO given as the labelled HDF5 file is named as a FIFO (it read "give --data_name" in `data check` and
// "does not exist" at a run's start), and nothing waits on it.
TEST_F(DataCommandTest, AFifoAsTheDataIsNamedAsOne) {
  const std::string fifo = path("x.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = run_cli({"data", "check", "--data_path", fifo});
  EXPECT_NE(r.code, kExitOk);
  EXPECT_NE(r.err.find("--data_path '" + fifo + "': is a FIFO (named pipe), not a regular file"), std::string::npos)
      << r.err;
  r = run_cli({"train", "--method", "mrl", "--data_path", fifo, "--run_dir", path("run")});
  EXPECT_NE(r.code, kExitOk);
  EXPECT_NE(r.err.find("'" + fifo + "' is a FIFO (named pipe), not an HDF5 file or a folder"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace rematch::cli
