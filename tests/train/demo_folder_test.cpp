// `rematch demo --out` replaces only what an earlier demo wrote: a new or empty folder, or one holding only a
// demo's data/, report/, validation_rsum.png and run folders, is fine; anything else is named and nothing is
// written; the root, home and current folders are refused.
#include "train/cli/demo_folder.h"

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "test_util.h"
#include "viz/html.h"

namespace rematch::cli {
namespace {
namespace fs = std::filesystem;

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

class DemoFolderTest : public rematch::test::TempDirTest {};

TEST_F(DemoFolderTest, AnEarlierDemosFolderIsFineAnythingElseIsNamed) {
  const std::vector<std::string> methods = {"triplet", "l2rm"};
  EXPECT_EQ(demo_folder_problem(path("new"), methods), "");
  const fs::path out = dir_ / "demo";
  put(out / "data" / "synth_precomp" / "train_ims.npy", "npy");
  put(out / "data" / "vocab" / "synth_precomp_vocab.json", "{}");
  put(out / "triplet" / "config.json", "{\"method\": \"triplet\"}");
  put(out / "triplet" / "results.md", "| |");
  put(out / "report" / "index.html", viz::html_page_start("demo"));  // a page rematch wrote
  put(out / "report" / "thumbs" / "train_1.png", "png");
  put(out / "validation_rsum.png", "png");
  EXPECT_EQ(demo_folder_problem(out.string(), methods), "");
  put(out / "thesis.tex", "mine");
  put(out / "data" / "coco_precomp" / "train_ims.npy", "npy");
  put(out / "l2rm" / "results.md", "someone's");
  EXPECT_EQ(demo_folder_problem(out.string(), methods),
            "--out " + out.string() + ": holds what a demo does not write (data/coco_precomp, l2rm/ (not a rematch "
            "run folder), thesis.tex); the demo replaces its own files there: move these away, or give another --out");
  EXPECT_NE(demo_folder_problem("/", methods).find("is the root folder"), std::string::npos);
  EXPECT_NE(demo_folder_problem(".", methods).find("is the current folder"), std::string::npos);
}

TEST_F(DemoFolderTest, TheDemoRefusesBeforeWritingAnything) {
  const fs::path out = dir_ / "project";
  put(out / "notes.txt", "mine");
  const test::CliResult r = test::run_cli({"demo", "--out", out.string(), "--progress", "none"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("holds what a demo does not write (notes.txt)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "data"));
}

}  // namespace
}  // namespace rematch::cli
