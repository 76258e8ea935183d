// `rematch demo --labeled` (train/cli/labeled_demo.h) at 3 epochs: the four runs, the mAP table with UOT-RCL's
// label accuracy and the noisy labels' accuracy, the validation plot and UOT-RCL's report page; the flags the
// labelled mode refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "test_util.h"

namespace rematch::cli {
namespace {

using test::run_cli;

class LabeledDemoTest : public rematch::test::TempDirTest {};

TEST_F(LabeledDemoTest, TrainsTheFourMethodsAndPrintsTheirMapTable) {
  const test::CliResult r =
      run_cli({"demo", "--labeled", "--out", path("demo"), "--epochs", "3", "--progress", "none"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* row : {"| ce     |", "| mrl    |", "| dscmr  |", "| uotrcl |"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing from:\n" << r.out;
  EXPECT_NE(r.out.find("| method | Img→Txt mAP | Txt→Img mAP | average | label accuracy |"), std::string::npos);
  EXPECT_NE(r.out.find("50% of the training labels"), std::string::npos);
  // Only UOT-RCL corrects labels: its row has a label accuracy, the others a dash.
  const size_t u = r.out.find("| uotrcl |");
  ASSERT_NE(u, std::string::npos);
  const std::string uotrcl_row = r.out.substr(u, r.out.find('\n', u) - u);
  EXPECT_EQ(uotrcl_row.find(" - |"), std::string::npos) << uotrcl_row;
  const size_t c = r.out.find("| ce     |");
  EXPECT_NE(r.out.substr(c, r.out.find('\n', c) - c).find(" - |"), std::string::npos);
  EXPECT_NE(r.out.find("the noisy labels every method trains on are 0.5"), std::string::npos) << r.out;
  for (const char* run : {"ce", "mrl", "dscmr", "uotrcl"})
    EXPECT_TRUE(std::filesystem::exists(path("demo") + "/" + run + "/results.md")) << run;
  EXPECT_TRUE(std::filesystem::exists(path("demo") + "/validation_map.png"));
  EXPECT_TRUE(std::filesystem::exists(path("demo") + "/uotrcl/plots/corrected_labels.png"));
  std::ifstream page(path("demo") + "/report/index.html");
  std::stringstream html;
  html << page.rdbuf();
  EXPECT_NE(html.str().find("corrected label"), std::string::npos) << "the report is UOT-RCL's corrected labels";
}

TEST_F(LabeledDemoTest, RefusesWhatTheLabelledModeCannotDo) {
  const test::CliResult methods = run_cli({"demo", "--labeled", "--methods", "rcl", "--out", path("a")});
  EXPECT_NE(methods.code, kExitOk);
  EXPECT_NE(methods.err.find("--methods"), std::string::npos) << methods.err;
  const test::CliResult epochs = run_cli({"demo", "--labeled", "--epochs", "2", "--out", path("b")});
  EXPECT_NE(epochs.code, kExitOk);
  EXPECT_NE(epochs.err.find("--epochs"), std::string::npos) << epochs.err;
  const test::CliResult noise = run_cli({"demo", "--labeled", "--noise_ratio", "1", "--out", path("c")});
  EXPECT_NE(noise.code, kExitOk);
  EXPECT_NE(noise.err.find("--noise_ratio"), std::string::npos) << noise.err;
}

}  // namespace
}  // namespace rematch::cli
