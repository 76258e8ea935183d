// OMP_NUM_THREADS asking for more threads than the program can start (train/main.cpp): refused by name, exit 2,
// before OpenMP starts a team (libgomp crashed with SIGSEGV and no message at 100,000).
#include <gtest/gtest.h>

#include <string>

#include "program_runner.h"
#include "test_util.h"

namespace rematch {
namespace {

class ThreadCountEnvTest : public test::TempDirTest {};

TEST_F(ThreadCountEnvTest, AThreadCountPastTheLimitIsRefusedByName) {
  test::Program p({"synth", "--kind", "pairs", "--out", path("data")}, dir_.string(), path("log"), 1,
                  {"OMP_NUM_THREADS=100000"});
  ASSERT_TRUE(p.started());
  EXPECT_EQ(p.wait(60), 2);
  EXPECT_NE(p.log().find("rematch: error: OMP_NUM_THREADS=100000 asks for more than 4096 threads"), std::string::npos)
      << p.log();
  EXPECT_FALSE(std::filesystem::exists(path("data")));
  test::Program ok({"synth", "--kind", "pairs", "--out", path("data"), "--images", "4", "--dev_images", "2",
                    "--test_images", "2"},
                   dir_.string(), path("log2"), 1, {"OMP_NUM_THREADS=8"});
  EXPECT_EQ(ok.wait(60), 0) << ok.log();
}

}  // namespace
}  // namespace rematch
