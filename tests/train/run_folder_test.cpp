// Run folders: fresh/resume/overwrite, config.json and results.md written atomically, and metrics.jsonl
// appended line by line, read back, and truncated on resume; a full disk or a read-only place gives an error
// naming the file and never leaves half a metrics line.
#include "train/run/run_folder.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "disk_faults.h"
#include "tensor/file_io.h"
#include "test_util.h"
#include "viz/html.h"
#include "viz/png_canvas.h"

namespace rematch::run {
namespace {
namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Every entry of a folder, to check that no temporary file is left behind.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

MetricRecord record(int64_t epoch, int64_t step, const std::string& kind, double loss) {
  return {epoch, step, kind, {{"loss", loss}}};
}

class RunFolderTest : public test::TempDirTest {};

TEST_F(RunFolderTest, CreatesTheFolderWithParentsAndNamesItsFiles) {
  const RunFolder run(path("a/b/run"), RunStart::Fresh);
  EXPECT_TRUE(fs::is_directory(path("a/b/run")));
  EXPECT_TRUE(fs::is_directory(path("a/b/run/plots")));
  EXPECT_EQ(run.dir(), path("a/b/run"));
  EXPECT_EQ(run.config_path(), path("a/b/run/config.json"));
  EXPECT_EQ(run.metrics_path(), path("a/b/run/metrics.jsonl"));
  EXPECT_EQ(run.checkpoint_latest_path(), path("a/b/run/checkpoint_latest.safetensors"));
  EXPECT_EQ(run.checkpoint_best_path(), path("a/b/run/checkpoint_best.safetensors"));
  EXPECT_EQ(run.plots_dir(), path("a/b/run/plots"));
  EXPECT_EQ(run.plot_path("loss.png"), path("a/b/run/plots/loss.png"));
  EXPECT_EQ(run.results_path(), path("a/b/run/results.md"));
  EXPECT_THROWS_WITH(run.plot_path("../x.png"), "plot file name '../x.png'");
}

TEST_F(RunFolderTest, DefaultRunDirIsMethodAndTimestamp) {
  const std::string dir = default_run_dir("uot_rcl", 1700000000);
  EXPECT_TRUE(std::regex_match(dir, std::regex(R"(runs/uot_rcl-\d{8}-\d{6})"))) << dir;
  EXPECT_THROWS_WITH(default_run_dir("", 0), "must be non-empty");
  EXPECT_THROWS_WITH(default_run_dir("a/b", 0), "'a/b'");
}

TEST_F(RunFolderTest, AFreshStartRefusesAFolderHoldingARun) {
  RunFolder(path("run"), RunStart::Fresh).write_config(R"({"method": "rcl"})");
  EXPECT_THROWS_WITH(RunFolder(path("run"), RunStart::Fresh), path("run"), "already holds a run", "--resume",
                     "--overwrite");
  // A folder with other files but no config.json is not a run.
  fs::create_directories(path("other"));
  put(path("other/notes.txt"), "hi");
  EXPECT_NO_THROW(RunFolder(path("other"), RunStart::Fresh));
}

TEST_F(RunFolderTest, ResumeNeedsARunAndKeepsItsFiles) {
  EXPECT_THROWS_WITH(RunFolder(path("empty"), RunStart::Resume), "holds no run to resume", "config.json");
  EXPECT_FALSE(fs::exists(path("empty")));  // a mistyped --resume leaves no folder and no lock file behind
  {
    const RunFolder first(path("run"), RunStart::Fresh);
    first.write_config("{\"epochs\": 3}\n");
    put(first.checkpoint_latest_path(), "weights");
    put(first.plot_path("loss.png"), Canvas(2, 2).encode_png());  // a PNG rematch wrote (viz/written_by_rematch.h)
  }
  const RunFolder resumed(path("run"), RunStart::Resume);
  EXPECT_EQ(resumed.read_config(), "{\"epochs\": 3}\n");
  EXPECT_EQ(slurp(resumed.checkpoint_latest_path()), "weights");
  EXPECT_TRUE(fs::exists(resumed.plot_path("loss.png")));
}

TEST_F(RunFolderTest, OneWriterAtATimeAndTheLockGoesWithTheFolder) {
  std::optional<RunFolder> first(std::in_place, path("run"), RunStart::Fresh);
  first->write_config("{}");
  // A second writer, of any start, is refused while the first lives, naming the process that holds it.
  for (RunStart start : {RunStart::Fresh, RunStart::Resume, RunStart::Overwrite})
    EXPECT_THROWS_WITH(RunFolder(path("run"), start), "another process is writing this run",
                       "pid " + std::to_string(::getpid()), "use another --run_dir");
  EXPECT_TRUE(fs::exists(path("run/config.json")));  // the refused overwrite deleted nothing
  first.reset();
  EXPECT_NO_THROW(RunFolder(path("run"), RunStart::Resume));
  // A refused start releases the lock: the folder can be opened right after.
  EXPECT_THROWS_WITH(RunFolder(path("run"), RunStart::Fresh), "already holds a run");
  EXPECT_NO_THROW(RunFolder(path("run"), RunStart::Resume));
}

TEST_F(RunFolderTest, TemporaryFilesOfDeadProcessesAreRemovedOthersKept) {
  fs::create_directories(path("run/plots"));
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // its pid now names no process
  const std::string dead = std::to_string(child), live = std::to_string(::getpid());
  for (const std::string& f : {"run/checkpoint_latest.safetensors.tmp." + dead + ".0",
                               "run/plots/loss.png.tmp." + dead + ".12", "run/config.json.tmp." + live + ".1",
                               std::string("run/notes.tmp.txt"), "run/x.tmp." + dead, "run/y.tmp." + dead + ".z"})
    put(path(f), "partial");
  const RunFolder run(path("run"), RunStart::Fresh);
  EXPECT_EQ(run.removed_temporaries(),
            (std::vector<std::string>{path("run/checkpoint_latest.safetensors.tmp." + dead + ".0"),
                                      path("run/plots/loss.png.tmp." + dead + ".12")}));
  EXPECT_EQ(entries(run.dir()), (std::vector<std::string>{"config.json.tmp." + live + ".1", "notes.tmp.txt", "plots",
                                                          "run.lock", "x.tmp." + dead, "y.tmp." + dead + ".z"}));
}

TEST_F(RunFolderTest, OverwriteDeletesEverythingTheEarlierRunWrote) {
  {
    const RunFolder first(path("run"), RunStart::Fresh);
    first.write_config(R"({"method": "l2rm"})");
    first.write_results("| a |\n");
    put(first.metrics_path(), "{}\n");
    put(first.checkpoint_latest_path(), "w");
    put(first.checkpoint_best_path(), "w");
    put(first.plot_path("loss.png"), Canvas(2, 2).encode_png());  // a PNG rematch wrote (viz/written_by_rematch.h)
    put(path("run/noise_index.npy"), "npy");  // the method's record of its noise
    fs::create_directories(path("run/splits"));
    put(path("run/splits/epoch_0.npy"), "npy");
    put(path("run/splits/epoch_0.json"), R"({"epoch":0,"method":"l2rm","kind":"kept","pairs":2})");
    fs::create_directories(path("run/report/thumbs"));  // what `rematch retrieve --run` wrote
    put(path("run/report/index.html"), viz::html_page_start("report"));
    put(path("run/report/thumbs/train_3.png"), "png");
  }
  const RunFolder second(path("run"), RunStart::Overwrite);
  EXPECT_EQ(entries(second.dir()), (std::vector<std::string>{"plots", "run.lock"}));
  EXPECT_TRUE(entries(second.plots_dir()).empty());
  EXPECT_NO_THROW(RunFolder(path("new"), RunStart::Overwrite));  // nothing to overwrite is fine
}

TEST_F(RunFolderTest, AFileInTheWayIsAnError) {
  put(path("file"), "x");
  EXPECT_THROWS_WITH(RunFolder(path("file"), RunStart::Fresh), "run folder '" + path("file") + "'");
  EXPECT_THROWS_WITH(RunFolder("", RunStart::Fresh), "the path is empty");
}

TEST_F(RunFolderTest, ConfigMustBeAJsonObject) {
  const RunFolder run(path("run"), RunStart::Fresh);
  EXPECT_THROWS_WITH(run.write_config("{\"a\": "), run.config_path(), "not JSON");
  EXPECT_THROWS_WITH(run.write_config("[1, 2]"), run.config_path(), "not a JSON object");
  EXPECT_FALSE(fs::exists(run.config_path()));
  run.write_config("{\"a\": 1}");
  EXPECT_EQ(slurp(run.config_path()), "{\"a\": 1}\n");
  EXPECT_EQ(entries(run.dir()), (std::vector<std::string>{"config.json", "plots", "run.lock"}));  // no temporary file left
}

TEST_F(RunFolderTest, ResultsAreReplacedWhole) {
  const RunFolder run(path("run"), RunStart::Fresh);
  run.write_results("| method | rSum |\n|---|---|\n| rcl | 400.1 |\n");
  run.write_results("| method | rSum |\n");
  EXPECT_EQ(slurp(run.results_path()), "| method | rSum |\n");
  EXPECT_EQ(entries(run.dir()), (std::vector<std::string>{"plots", "results.md", "run.lock"}));
}

TEST_F(RunFolderTest, MetricsAreOneJsonObjectPerLine) {
  MetricsLog log(path("metrics.jsonl"));
  log.append({1, 2, "train", {{"loss", 0.5}, {"lr", 0.0002}}});
  log.append({1, 2, "eval", {{"rsum", NAN}, {"r1", INFINITY}}});
  // Each line is handed to the kernel at once: readable before the log is closed.
  EXPECT_EQ(slurp(path("metrics.jsonl")),
            "{\"epoch\":1,\"step\":2,\"kind\":\"train\",\"loss\":0.5,\"lr\":0.0002}\n"
            "{\"epoch\":1,\"step\":2,\"kind\":\"eval\",\"rsum\":null,\"r1\":null}\n");
  const std::vector<MetricRecord> back = log.records();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].kind, "train");
  EXPECT_EQ(back[0].values.size(), 2u);
  EXPECT_EQ(back[0].values[1].first, "lr");
  EXPECT_DOUBLE_EQ(back[0].get("lr"), 0.0002);
  EXPECT_TRUE(back[1].has("rsum"));
  EXPECT_TRUE(std::isnan(back[1].get("rsum")));
  EXPECT_TRUE(std::isnan(back[1].get("r1")));
  EXPECT_THROWS_WITH(back[0].get("rsum"), "has no value 'rsum'", "loss, lr");
}

TEST_F(RunFolderTest, MetricsRefuseReservedAndRepeatedNames) {
  MetricsLog log(path("metrics.jsonl"));
  EXPECT_THROWS_WITH(log.append({1, 1, "train", {{"step", 1.0}}}), "'step' is reserved");
  EXPECT_THROWS_WITH(log.append({1, 1, "train", {{"loss", 1.0}, {"loss", 2.0}}}), "'loss' appears twice");
  EXPECT_EQ(slurp(path("metrics.jsonl")), "");
}

TEST_F(RunFolderTest, ReopeningAppends) {
  {
    MetricsLog log(path("m.jsonl"));
    log.append(record(1, 1, "train", 1.0));
  }
  MetricsLog log(path("m.jsonl"));
  log.append(record(1, 2, "train", 2.0));
  EXPECT_EQ(read_metrics(path("m.jsonl")).size(), 2u);
}

TEST_F(RunFolderTest, ResumeTruncatesRecordsPastTheCheckpoint) {
  MetricsLog log(path("m.jsonl"));
  for (int64_t e = 1; e <= 2; ++e)
    for (int64_t s = 1; s <= 3; ++s) log.append(record(e, s, "train", 10.0 * e + s));
  log.append({2, 3, "eval", {{"rsum", 400.0}}});
  // The checkpoint was taken at (epoch 2, step 1): (2,2), (2,3) and the eval at (2,3) go.
  EXPECT_EQ(log.truncate_after(2, 1), 3);
  log.append(record(2, 2, "train", 99.0));  // the resumed run goes on appending
  const std::vector<MetricRecord> back = read_metrics(path("m.jsonl"));
  ASSERT_EQ(back.size(), 5u);
  EXPECT_EQ(back[3].epoch, 2);
  EXPECT_EQ(back[3].step, 1);
  EXPECT_EQ(back[4].get("loss"), 99.0);
  EXPECT_EQ(log.truncate_after(5, 0), 0);  // nothing past the end: the file is left as it is
  EXPECT_EQ(read_metrics(path("m.jsonl")).size(), 5u);
  EXPECT_EQ(log.truncate_after(0, 0), 5);
  EXPECT_EQ(slurp(path("m.jsonl")), "");
  EXPECT_EQ(entries(dir_.string()), (std::vector<std::string>{"m.jsonl"}));
}

TEST_F(RunFolderTest, TheCutIsAtTheFirstRecordPastThePoint) {
  // Lines after the first record past the point go even if they are earlier: they belong to the abandoned
  // future of the run, and a damaged one among them does not stop the resume.
  put(path("m.jsonl"),
      "{\"epoch\":1,\"step\":1,\"kind\":\"train\"}\n"
      "{\"epoch\":1,\"step\":5,\"kind\":\"train\"}\n"
      "{\"epoch\":1,\"step\":2,\"kind\":\"train\"}\n"
      "not json\n");
  MetricsLog log(path("m.jsonl"));
  EXPECT_EQ(log.truncate_after(1, 3), 3);
  EXPECT_EQ(slurp(path("m.jsonl")), "{\"epoch\":1,\"step\":1,\"kind\":\"train\"}\n");
}

TEST_F(RunFolderTest, ATornLastLineIsDropped) {
  put(path("m.jsonl"), "{\"epoch\":1,\"step\":1,\"kind\":\"train\",\"loss\":1}\n{\"epoch\":1,\"st");
  EXPECT_EQ(read_metrics(path("m.jsonl")).size(), 1u);  // reading ignores it
  MetricsLog log(path("m.jsonl"));                       // opening removes it
  log.append(record(1, 2, "train", 2.0));
  const std::vector<MetricRecord> back = read_metrics(path("m.jsonl"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].step, 2);
}

TEST_F(RunFolderTest, ABadLineIsAnErrorNamingFileAndLine) {
  put(path("m.jsonl"), "{\"epoch\":1,\"step\":1,\"kind\":\"train\"}\n\n[1]\n");
  EXPECT_THROWS_WITH(read_metrics(path("m.jsonl")), path("m.jsonl"), "line 3", "not a JSON object");
  put(path("m.jsonl"), "{\"epoch\":1,\"kind\":\"train\"}\n");
  EXPECT_THROWS_WITH(read_metrics(path("m.jsonl")), "line 1", "\"step\"");
  put(path("m.jsonl"), "{\"epoch\":1,\"step\":1,\"kind\":\"train\",\"note\":\"x\"}\n");
  EXPECT_THROWS_WITH(read_metrics(path("m.jsonl")), "\"note\" is not a number");
  put(path("m.jsonl"), "{oops}\n");
  EXPECT_THROWS_WITH(read_metrics(path("m.jsonl")), "line 1", "not JSON");
  EXPECT_THROWS_WITH(read_metrics(path("missing.jsonl")), "missing.jsonl", "cannot open");
  EXPECT_THROWS_WITH(MetricsLog(path("no/such/dir/m.jsonl")), "no/such/dir/m.jsonl", "cannot open for appending");
}

// The disk takes part of a line, then no more: the part is cut off again, so the file still holds whole lines
// only and the next append (once there is room) does not glue its line to a fragment.
TEST_F(RunFolderTest, ALineTheDiskTakesOnlyPartOfIsCutOff) {
  MetricsLog log(path("m.jsonl"));
  log.append(record(1, 1, "train", 1.0));
  const std::string before = slurp(path("m.jsonl"));
  {
    test::FileSizeLimit limit(before.size() + 10);
    ASSERT_TRUE(limit.ok());
    EXPECT_THROWS_WITH(log.append(record(1, 2, "train", 2.0)), "metrics log '" + path("m.jsonl") + "'",
                       "cannot append a line (10 of ", " bytes were written and removed again): File too large");
  }
  EXPECT_EQ(slurp(path("m.jsonl")), before);
  log.append(record(1, 2, "train", 2.0));
  const std::vector<MetricRecord> back = read_metrics(path("m.jsonl"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].step, 2);
}

TEST_F(RunFolderTest, AFullTmpfsStopsTheLogWithWholeLinesOnly) {
  const std::string disk = path("disk");
  fs::create_directory(disk);
  test::SmallTmpfs tmpfs(disk, 8192);
  if (!tmpfs.available()) GTEST_SKIP() << tmpfs.skip_reason();
  MetricsLog log(disk + "/m.jsonl");
  int64_t appended = 0;
  try {
    for (; appended < 1000; ++appended) log.append(record(1, appended, "train", 0.123456789));
    FAIL() << "8 KiB took 1000 lines";
  } catch (const io::WriteError& e) {
    EXPECT_EQ(e.path(), disk + "/m.jsonl");
    EXPECT_NE(std::string(e.what()).find("No space left on device (the file system is full"), std::string::npos)
        << e.what();
  }
  const std::string text = slurp(disk + "/m.jsonl");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(static_cast<int64_t>(read_metrics(disk + "/m.jsonl").size()), appended);
}

// A run folder in a place the user may not write to: the error names it, says why and what to do. Root
// ignores chmod, so the test drops that override.
TEST_F(RunFolderTest, AFolderThatCannotBeCreatedSaysToPickAnotherRunDir) {
  const std::string locked = path("locked");
  fs::create_directory(locked);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(locked.c_str(), 0555), 0);
  {
    test::NoPermissionOverride as_nobody;
    if (!as_nobody.ok()) GTEST_SKIP() << as_nobody.skip_reason();
    EXPECT_THROWS_WITH(RunFolder(locked + "/run", RunStart::Fresh),
                       "run folder '" + locked + "/run': cannot create it: Permission denied (no permission to write",
                       "no training has run yet: fix that, or pick another --run_dir");
  }
  ASSERT_EQ(::chmod(locked.c_str(), 0755), 0);
}

TEST_F(RunFolderTest, AReadOnlyFileSystemRefusesEveryFileNamingIt) {
  const std::string disk = path("disk");
  fs::create_directory(disk);
  test::SmallTmpfs tmpfs(disk, 64 * 1024);
  if (!tmpfs.available()) GTEST_SKIP() << tmpfs.skip_reason();
  {
    const RunFolder run(disk + "/run", RunStart::Fresh);
    ASSERT_TRUE(tmpfs.set_read_only(true));
    EXPECT_THROWS_WITH(run.write_config("{}"), "write_config '" + run.config_path() + "': cannot create temporary file",
                       "Read-only file system", "pick another --run_dir");
    EXPECT_THROWS_WITH(MetricsLog(run.metrics_path()), "metrics log '" + run.metrics_path() + "'",
                       "cannot open for appending: Read-only file system");
    EXPECT_THROWS_WITH(RunFolder(disk + "/other", RunStart::Fresh), "run folder '" + disk + "/other'",
                       "Read-only file system", "pick another --run_dir");
  }
  ASSERT_TRUE(tmpfs.set_read_only(false));
}

TEST_F(RunFolderTest, LogsMove) {
  MetricsLog a(path("m.jsonl"));
  MetricsLog b = std::move(a);
  b.append(record(1, 1, "train", 1.0));
  EXPECT_EQ(b.path(), path("m.jsonl"));
  EXPECT_EQ(read_metrics(path("m.jsonl")).size(), 1u);
}

}  // namespace
}  // namespace rematch::run
