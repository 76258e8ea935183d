// Starting a run never deletes or writes over what rematch did not write: --overwrite refuses a folder that is no
// rematch run (even one holding files of the same names), the root, home and current folders, and a run folder
// holding other files (naming them); it deletes everything of the earlier run, so a new run never shows an older
// method's splits or report as its own; a fresh start refuses a folder holding a run's files without its
// config.json. And nothing there blocks on a FIFO or follows a symbolic link: run.lock and metrics.jsonl.
#include "train/run/run_folder_contents.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_util.h"
#include "train/run/run_folder.h"
#include "viz/html.h"
#include "viz/png_canvas.h"
#include "viz/written_by_rematch.h"
#include "with_deadline.h"

namespace rematch::run {
namespace {
namespace fs = std::filesystem;

void put(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class RunFolderContentsTest : public test::TempDirTest {
 protected:
  // A finished run of `method` in `dir` as rematch leaves it, with a report and per-epoch splits.
  void finished_run(const std::string& dir, const std::string& method) {
    { const RunFolder run(dir, RunStart::Fresh); run.write_config("{\"method\": \"" + method + "\", \"run_dir\": \"" + dir + "\"}"); }
    put(dir + "/metrics.jsonl", "{\"epoch\":0,\"step\":0,\"kind\":\"train\",\"loss\":1}\n");
    put(dir + "/results.md", "| rsum |\n");
    put(dir + "/checkpoint_latest.safetensors", "w");
    put(dir + "/plots/loss.png", marked_png());
    put(dir + "/noise_index.npy", "npy");
    put(dir + "/splits/epoch_1.npy", "npy");
    put(dir + "/splits/epoch_1.json", "{\"epoch\":1,\"method\":\"" + method + "\",\"kind\":\"kept\",\"pairs\":3}\n");
    put(dir + "/report/index.html", viz::html_page_start("caught") + viz::html_page_end());
    put(dir + "/report/detection.png", marked_png());
    put(dir + "/report/thumbs/train_0.jpg", "jpg");
  }
  // A PNG as rematch writes it (viz/written_by_rematch.h), and as an earlier rematch did: without the marker.
  static std::string marked_png() { return Canvas(3, 2).encode_png(); }
  static std::string unmarked_png() {
    std::string png = marked_png();
    EXPECT_EQ(png.substr(33 + 4, 4), "tEXt");
    return png.erase(33, 12 + 16);  // the chunk after IHDR: length, type, "Software\0rematch", CRC
  }
  // A page of an earlier rematch: its head without the generator line.
  static std::string earlier_page() {
    std::string page = viz::html_page_start("retrieval") + viz::html_page_end();
    const std::string line = std::string(viz::kGeneratorMeta) + "\n";
    return page.erase(page.find(line), line.size());
  }
};

// A project folder of another tool, holding files of the names rematch writes: --overwrite deletes nothing.
TEST_F(RunFolderContentsTest, OverwriteRefusesAFolderThatIsNotARun) {
  const std::string dir = path("project");
  put(dir + "/config.json", "{\"learning_rate\": 0.1}");
  put(dir + "/results.md", "my results");
  put(dir + "/metrics.jsonl", "{}\n");
  put(dir + "/plots/figure.png", "png");
  EXPECT_THROWS_WITH(RunFolder(dir, RunStart::Overwrite), "run folder '" + dir + "': is not a rematch run folder (",
                     dir + "/config.json is not one rematch wrote", "holds config.json, metrics.jsonl, plots, results.md",
                     "--overwrite deletes only a run's own files: move them away, or pick another --run_dir");
  EXPECT_EQ(slurp(dir + "/results.md"), "my results");
  EXPECT_EQ(slurp(dir + "/config.json"), "{\"learning_rate\": 0.1}");
  EXPECT_TRUE(fs::exists(dir + "/plots/figure.png"));
  EXPECT_FALSE(fs::exists(dir + "/run.lock"));
  // Without any config.json too.
  fs::remove(dir + "/config.json");
  EXPECT_THROWS_WITH(RunFolder(dir, RunStart::Overwrite), "is not a rematch run folder (no config.json)");
  EXPECT_EQ(slurp(dir + "/results.md"), "my results");
}

TEST_F(RunFolderContentsTest, OverwriteRefusesARunFolderHoldingOtherFilesNamingThem) {
  const std::string dir = path("run");
  finished_run(dir, "l2rm");
  put(dir + "/notes.txt", "mine");
  put(dir + "/splits/my_analysis.csv", "a,b");
  put(dir + "/plots/old", "");
  EXPECT_THROWS_WITH(RunFolder(dir, RunStart::Overwrite),
                     "holds files rematch does not write in a run folder (notes.txt, plots/old, splits/my_analysis.csv)",
                     "move them away, or pick another --run_dir");
  EXPECT_EQ(slurp(dir + "/notes.txt"), "mine");
  EXPECT_TRUE(fs::exists(dir + "/results.md"));
  EXPECT_TRUE(fs::exists(dir + "/splits/epoch_1.npy"));
}

// An l2rm run overwritten by a triplet run: nothing of l2rm's is left for the run page to show as triplet's.
TEST_F(RunFolderContentsTest, OverwriteLeavesNothingOfTheEarlierMethod) {
  const std::string dir = path("run");
  finished_run(dir, "l2rm");
  {
    const RunFolder second(dir, RunStart::Overwrite);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"plots", "run.lock"}));
    EXPECT_TRUE(entries(dir + "/plots").empty());
    second.write_config("{\"method\": \"triplet\"}");
  }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"config.json", "plots", "run.lock"}));
}

// Inside plots/, splits/ and report/ the same rule as at the top: what rematch did not write there (a figure of the
// user's, a page of their own, an epoch split that is not rematch's) is named and --overwrite deletes nothing;
// rematch's files, an earlier rematch's unmarked plots and pages included, are deleted.
TEST_F(RunFolderContentsTest, OverwriteRefusesTheUsersFilesInsideTheRunsFoldersNamingThem) {
  const std::string dir = path("run");
  finished_run(dir, "cream");
  put(dir + "/plots/figure_for_paper.png", "MY FIGURE");
  put(dir + "/plots/figure_2.png", unmarked_png());        // a PNG, but not rematch's and not a name it gives
  put(dir + "/plots/clean_precision.png", unmarked_png()); // an earlier rematch's plot
  put(dir + "/splits/epoch_7.npy", "npy");                // no epoch_7.json of rematch's beside it
  put(dir + "/splits/epoch_2.json", "{\"epoch\":3,\"method\":\"cream\",\"kind\":\"kept\",\"pairs\":3}");
  put(dir + "/report/notes.html", "<html><body>my notes</body></html>");
  put(dir + "/report/retrieval.html", earlier_page());     // an earlier rematch's page
  put(dir + "/report/labels.png", "a text file");
  EXPECT_THROWS_WITH(RunFolder(dir, RunStart::Overwrite),
                     "run folder '" + dir + "': holds files rematch does not write in a run folder (plots/figure_2.png, "
                     "plots/figure_for_paper.png, report/labels.png, report/notes.html, splits/epoch_2.json, "
                     "splits/epoch_7.npy); --overwrite would leave them mixed with a new run: move them away, or pick "
                     "another --run_dir");
  EXPECT_EQ(slurp(dir + "/plots/figure_for_paper.png"), "MY FIGURE");
  EXPECT_TRUE(fs::exists(dir + "/plots/loss.png"));
  EXPECT_TRUE(fs::exists(dir + "/report/notes.html"));
  for (const char* mine : {"/plots/figure_for_paper.png", "/plots/figure_2.png", "/splits/epoch_7.npy",
                           "/splits/epoch_2.json", "/report/notes.html", "/report/labels.png"})
    fs::remove(dir + mine);
  { const RunFolder again(dir, RunStart::Overwrite); }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"plots", "run.lock"}));
  EXPECT_TRUE(entries(dir + "/plots").empty());
}

TEST_F(RunFolderContentsTest, RematchsPngsAndPagesAreToldFromOthersByTheirContent) {
  EXPECT_TRUE(viz::png_head_marked_by_rematch(marked_png()));
  EXPECT_FALSE(viz::png_head_marked_by_rematch(unmarked_png()));
  EXPECT_FALSE(viz::png_head_marked_by_rematch("Software\0rematch"));  // the words alone, no PNG
  EXPECT_TRUE(viz::page_head_written_by_rematch(viz::html_page_start("<a title>")));
  EXPECT_TRUE(viz::page_head_written_by_rematch(earlier_page()));
  std::string restyled = earlier_page();
  restyled.replace(restyled.find("body{"), 5, "p{");
  EXPECT_FALSE(viz::page_head_written_by_rematch(restyled));
  EXPECT_FALSE(viz::page_head_written_by_rematch("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"));
  // Through a file: a symbolic link to rematch's PNG is not rematch's file.
  put(path("p.png"), marked_png());
  fs::create_symlink(path("p.png"), path("link.png"));
  EXPECT_TRUE(viz::png_written_by_rematch(path("p.png")));
  EXPECT_FALSE(viz::png_written_by_rematch(path("link.png")));
  EXPECT_FALSE(viz::page_written_by_rematch(path("none.html")));
}

TEST_F(RunFolderContentsTest, OverwriteRefusesTheRootHomeAndCurrentFolders) {
  EXPECT_EQ(protected_folder("/"), "the root folder");
  EXPECT_EQ(protected_folder("."), "the current folder");
  EXPECT_EQ(protected_folder(fs::current_path().string() + "/"), "the current folder");
  EXPECT_EQ(protected_folder(path("no_such_folder")), "");
  EXPECT_EQ(protected_folder(dir_.string()), "");
  // In a child: the current folder and $HOME are the test's own folders there.
  const std::string home = path("home"), work = path("work");
  finished_run(home, "rcl");
  finished_run(work, "rcl");
  const test::ChildOutcome o = test::run_with_deadline([&] {
    ::setenv("HOME", home.c_str(), 1);
    if (::chdir(work.c_str()) != 0) throw std::runtime_error("chdir");
    std::string said;
    for (const std::string& d : {std::string("."), std::string("./"), home, std::string("/")}) {
      try {
        RunFolder(d, RunStart::Overwrite);
      } catch (const std::exception& e) {
        said += std::string(e.what()) + "\n";
      }
    }
    throw std::runtime_error(said);
  });
  ASSERT_TRUE(o.finished);
  EXPECT_NE(o.message.find("run folder '.': is the current folder; --overwrite deletes a run's files only in a folder "
                           "of its own: pick another --run_dir"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("run folder './': is the current folder"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("run folder '" + home + "': is your home folder"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("run folder '/': is the root folder"), std::string::npos) << o.message;
  EXPECT_TRUE(fs::exists(work + "/results.md"));
  EXPECT_TRUE(fs::exists(home + "/results.md"));
}

TEST_F(RunFolderContentsTest, AFreshStartRefusesARunsFilesWithoutItsConfig) {
  const std::string dir = path("results");
  put(dir + "/results.md", "someone's table");
  put(dir + "/metrics.jsonl", "{}\n");
  EXPECT_THROWS_WITH(RunFolder(dir, RunStart::Fresh), "run folder '" + dir + "': holds metrics.jsonl, results.md but "
                     "no config.json, so it is not a rematch run; a run here would write over them");
  EXPECT_EQ(slurp(dir + "/results.md"), "someone's table");
  // What a refused or killed start leaves (the lock, an empty plots/) is no obstacle.
  const std::string left = path("left");
  put(left + "/run.lock", "pid 1");
  fs::create_directories(left + "/plots");
  EXPECT_NO_THROW(RunFolder(left, RunStart::Fresh));
  EXPECT_NO_THROW(RunFolder(left, RunStart::Overwrite));
}

TEST_F(RunFolderContentsTest, TheContentsAreToldApart) {
  const std::string dir = path("run");
  finished_run(dir, "rcl");
  EXPECT_TRUE(holds_rematch_config(dir));
  EXPECT_TRUE(foreign_entries(dir).empty());
  put(dir + "/config.json.tmp.123.4", "partial");
  put(dir + "/report/thumbs/x.gif", "gif");
  fs::create_directories(dir + "/checkpoints");
  EXPECT_EQ(foreign_entries(dir), (std::vector<std::string>{"checkpoints", "report/thumbs/x.gif"}));
  put(dir + "/config.json", "[1, 2]");
  EXPECT_FALSE(holds_rematch_config(dir));
  EXPECT_FALSE(holds_rematch_config(path("none")));
  EXPECT_EQ(list_names({"a", "b", "c"}, 2), "a, b and 1 more");
}

// A FIFO as run.lock: the open would block forever (and ignore SIGTERM); it is refused by name at once.
TEST_F(RunFolderContentsTest, AFifoAsTheLockFileIsRefusedWithoutWaiting) {
  const std::string dir = path("run");
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/run.lock").c_str(), 0644), 0);
  const test::ChildOutcome o = test::run_with_deadline([&] { RunFolder(dir, RunStart::Fresh); }, 10);
  ASSERT_TRUE(o.finished) << "opening the FIFO run.lock blocked";
  EXPECT_EQ(o.message, "run folder '" + dir + "': its lock file '" + dir + "/run.lock' is a FIFO (named pipe), not a "
                       "regular file; rematch keeps a plain file there: remove it, or use another --run_dir");
}

// A symbolic link as run.lock: the holder's description is never written through it into the file it names.
TEST_F(RunFolderContentsTest, ASymbolicLinkAsTheLockFileIsNotFollowed) {
  const std::string dir = path("run");
  fs::create_directories(dir);
  put(path("precious.txt"), "keep me");
  fs::create_symlink(path("precious.txt"), dir + "/run.lock");
  EXPECT_THROWS_WITH(RunFolder(dir, RunStart::Fresh), "its lock file '" + dir + "/run.lock' is a symbolic link");
  EXPECT_EQ(slurp(path("precious.txt")), "keep me");
}

TEST_F(RunFolderContentsTest, AFifoAsTheMetricsLogIsRefusedWithoutWaiting) {
  const std::string fifo = path("metrics.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const test::ChildOutcome o = test::run_with_deadline([&] { MetricsLog log(fifo); }, 10);
  ASSERT_TRUE(o.finished) << "opening the FIFO metrics.jsonl blocked";
  EXPECT_NE(o.message.find("'" + fifo + "': is a FIFO (named pipe), not a regular file"), std::string::npos) << o.message;
  const test::ChildOutcome r = test::run_with_deadline([&] { read_metrics(fifo); }, 10);
  ASSERT_TRUE(r.finished);
  EXPECT_NE(r.message.find("is a FIFO"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace rematch::run
