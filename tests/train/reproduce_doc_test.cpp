// The documents that promise a command or a value cannot rot: every `rematch train`
// line of docs/reproduce.md runs with --dry_run against a data folder holding every file it names, and
// docs/presets.md is the text the flag tables give and names every value a preset sets. The
// sources' comments cite what lasts (docs/design.md §7.2): no issue number or review word
// outside the tests, and every docs section they cite exists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli_runner.h"
#include "test_util.h"
#include "train/methods/presets_doc.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/train_config.h"

namespace rematch::cli {
namespace {

namespace fs = std::filesystem;
using test::CliResult;
using test::run_cli;

const std::string kDocs = std::string(REMATCH_FIXTURES) + "/../../docs/";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct DocCommand {
  int line;
  std::vector<std::string> args;  // without the leading "rematch"
};

// Every line that starts with `rematch train `, split on spaces.
std::vector<DocCommand> train_commands(const std::string& text) {
  std::vector<DocCommand> out;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.rfind("rematch train ", 0) != 0) continue;
    std::istringstream words(line.substr(std::string("rematch ").size()));
    DocCommand c{n, {}};
    for (std::string w; words >> w;) c.args.push_back(w);
    out.push_back(c);
  }
  return out;
}

std::string flag_value(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "";
}

class ReproduceDocTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    rematch::test::TempDirTest::SetUp();
    ASSERT_EQ(run_cli({"synth", "--kind", "pairs", "--out", path("synth"), "--data_name", "tiny_precomp", "--images",
                       "12", "--dev_images", "5", "--test_images", "5", "--regions", "2", "--feature_dim", "4"})
                  .code,
              kExitOk);
  }
  // `<data>/<name>/` with train, dev, test and testall files, and `<data>/vocab/<name>_vocab.json`.
  void make_precomp(const std::string& data, const std::string& name) {
    const std::string from = path("synth") + "/tiny_precomp/", to = data + "/" + name + "/";
    if (fs::exists(to + "train_ims.npy")) return;
    fs::create_directories(to);
    fs::create_directories(data + "/vocab");
    for (const char* split : {"train", "dev", "test"}) {
      fs::copy_file(from + split + "_ims.npy", to + split + "_ims.npy");
      fs::copy_file(from + split + "_caps.txt", to + split + "_caps.txt");
    }
    fs::copy_file(from + "test_ims.npy", to + "testall_ims.npy");
    fs::copy_file(from + "test_caps.txt", to + "testall_caps.txt");
    fs::copy_file(path("synth") + "/vocab/tiny_precomp_vocab.json", data + "/vocab/" + name + "_vocab.json");
  }
  // A file named by a command: an .npy is a valid one, anything else a line of text.
  void make_file(const std::string& file) {
    if (fs::exists(file)) return;
    fs::create_directories(fs::path(file).parent_path());
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".npy") == 0)
      fs::copy_file(path("synth") + "/tiny_precomp/test_ims.npy", file);
    else
      std::ofstream(file) << "placeholder\n";
  }
};

TEST_F(ReproduceDocTest, EveryTrainCommandPassesItsDryRun) {
  const std::vector<DocCommand> commands = train_commands(read_text(kDocs + "reproduce.md"));
  // The page covers every result and ablation row of the seeds: far more than a hundred runs.
  EXPECT_GE(commands.size(), 100u);
  const std::string data = path("data");
  std::set<std::string> methods;
  for (DocCommand c : commands) {
    for (std::string& a : c.args) {
      ASSERT_TRUE(a.find_first_of("\"'`\\|&;") == std::string::npos)
          << "reproduce.md line " << c.line << ": '" << a << "' — commands are plain words (no quotes, pipes)";
      if (a.rfind("$DATA", 0) == 0) a = data + a.substr(5);
      if (a.rfind(data + "/", 0) == 0) make_file(a);
    }
    const std::string method = flag_value(c.args, "--method"), preset = flag_value(c.args, "--preset");
    ASSERT_FALSE(preset.empty()) << "reproduce.md line " << c.line << ": every command names its --preset";
    if (method != "uotrcl") {
      const std::string name = flag_value(c.args, "--data_name");
      make_precomp(data, name.empty() ? preset + "_precomp" : name);
    }
    // MSCN's meta split (--meta_source split, its default): the files the page's recipe writes (--dry_run checks
    // them as the run does), here the dev split's.
    const std::string meta_source = flag_value(c.args, "--meta_source");
    if (method == "mscn" && (meta_source.empty() || meta_source == "split")) {
      const std::string name = flag_value(c.args, "--data_name");
      const std::string folder = data + "/" + (name.empty() ? preset + "_precomp" : name) + "/";
      if (!fs::exists(folder + "meta_ims.npy")) {
        fs::copy_file(folder + "dev_ims.npy", folder + "meta_ims.npy");
        fs::copy_file(folder + "dev_caps.txt", folder + "meta_caps.txt");
      }
    }
    c.args.push_back("--dry_run");
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.code, kExitOk) << "reproduce.md line " << c.line << ":\n" << r.err;
    if (r.code != kExitOk) continue;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("method"), method) << "line " << c.line;
    EXPECT_EQ(j.at("preset"), preset) << "line " << c.line;
    methods.insert(method);
  }
  EXPECT_EQ(methods, (std::set<std::string>{"l2rm", "rcl", "rcsl", "rcsl-nc", "uotrcl", "decl", "crcl", "ncr", "bicro",
                                            "mscn", "cream", "mrl", "dscmr", "sdml"}));
}

// Every value resolve_defaults fills from a method and a preset is named (as `--flag`) in docs/presets.md, whose
// tables give its source.
TEST(PresetsDoc, NamesEveryValueAPresetSets) {
  const std::string doc = read_text(kDocs + "presets.md");
  const nlohmann::json unresolved = nlohmann::json::parse(train::to_json(train::TrainConfig{}));
  const std::set<std::string> not_hyperparameters = {"method", "preset", "seed", "data_path", "data_name",
                                                      "paired_length"};
  std::set<std::string> missing;
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"triplet", {"f30k", "coco", "cc152k"}}, {"infonce", {"f30k", "coco", "cc152k"}},
      {"rcl", {"f30k", "coco", "cc152k"}},     {"l2rm", {"f30k", "coco", "cc152k"}},
      {"decl", {"f30k", "coco", "cc152k"}},
      {"rcsl", {"f30k", "coco"}},              {"rcsl-nc", {"f30k", "coco"}},
      {"uotrcl", {"wiki", "nus", "xmedianet"}}, {"crcl", {"f30k", "coco", "cc152k"}},
      {"mscn", {"f30k", "coco", "cc152k"}},    {"bicro", {"f30k", "coco", "cc152k"}},
      {"mrl", {"wiki", "nus", "xmedianet"}},   {"dscmr", {"wiki", "nus", "xmedianet"}},
      {"sdml", {"wiki", "nus", "xmedianet"}},   {"cream", {"f30k", "coco", "cc152k"}}};
  for (const auto& [method, presets] : runs)
    for (const std::string& preset : presets) {
      train::TrainConfig c;
      c.method = method;
      c.preset = preset;
      c.data_path = "/data";
      c.seed = 7;
      if (method == "rcsl") c.options<train::RcslOptions>().paired_length = 500;
      train::resolve_defaults(c);
      const nlohmann::json j = nlohmann::json::parse(train::to_json(c));
      for (const auto& [key, value] : j.items())
        if (!not_hyperparameters.count(key) && value != unresolved.at(key) &&
            !(key == "noise_seed" && value == 7) && doc.find("`--" + key) == std::string::npos)
          missing.insert(key + " (" + method + " " + preset + ")");
    }
  EXPECT_TRUE(missing.empty()) << [&] {
    std::string s = "docs/presets.md does not name:";
    for (const std::string& m : missing) s += " " + m;
    return s;
  }();
}

// docs/presets.md is written from the flag tables and the methods' defaults (train/methods/presets_doc.h); with
// REMATCH_WRITE_DOCS=1 this test writes it.
TEST(PresetsDoc, IsWhatTheFlagTablesSay) {
  const std::string want = train::presets_markdown();
  const std::string file = kDocs + "presets.md";
  if (std::getenv("REMATCH_WRITE_DOCS") != nullptr) std::ofstream(file) << want;
  const std::string got = read_text(file);
  std::istringstream a(got), b(want);
  std::string line_got, line_want;
  int line = 0;
  while (true) {
    ++line;
    const bool more_got = static_cast<bool>(std::getline(a, line_got));
    const bool more_want = static_cast<bool>(std::getline(b, line_want));
    if (!more_got && !more_want) break;
    ASSERT_EQ(line_got, line_want) << "docs/presets.md line " << line << " differs from the flag tables; rewrite it "
                                   << "with REMATCH_WRITE_DOCS=1 train_tests --gtest_filter=PresetsDoc.*";
  }
}

const std::string kRoot = std::string(REMATCH_FIXTURES) + "/../../";

// Every file under the repository's `folders` whose name ends in one of `extensions`, relative to the root.
std::vector<std::string> source_files(const std::vector<std::string>& folders, const std::set<std::string>& extensions) {
  std::vector<std::string> out;
  for (const std::string& folder : folders) {
    if (!fs::exists(kRoot + folder)) continue;
    for (const auto& e : fs::recursive_directory_iterator(kRoot + folder))
      if (e.is_regular_file() && extensions.count(e.path().extension().string()))
        out.push_back(fs::relative(e.path(), kRoot).string());
  }
  return out;
}

// The engine's and the program's sources, the benchmarks, tools and fuzz targets: everything but the tests, whose
// first lines may say which issue a test came from.
TEST(SourceComments, NameNoIssueOrReview) {
  const std::vector<std::string> files =
      source_files({"tensor", "autograd", "nn", "ot", "models", "parallel", "viz", "train", "python/src", "bench",
                    "tools", "fuzz", "cmake"},
                   {".h", ".cpp", ".cu", ".cuh", ".py", ".sh", ".cmake"});
  EXPECT_GT(files.size(), 300u);
  const std::regex forbidden(R"(issue [0-9]|desk-check)", std::regex::icase);
  std::string found;
  for (const std::string& f : files) {
    std::ifstream in(kRoot + f);
    int n = 0;
    for (std::string line; std::getline(in, line);)
      if (++n && std::regex_search(line, forbidden)) found += "\n  " + f + ":" + std::to_string(n) + ": " + line;
  }
  EXPECT_TRUE(found.empty()) << "cite a paper, a file or a docs section, not an issue or a review (docs/design.md "
                             << "§7.2):" << found;
}

// The section numbers of docs/<page>.md ("## 4 Errors", "### 4.3 Files"): what `docs/<page>.md §4.3` may cite.
std::set<std::string> sections(const std::string& page) {
  std::set<std::string> out;
  std::ifstream in(kRoot + "docs/" + page + ".md");
  const std::regex heading(R"(^#+\s+(\d+(\.\d+)*)\b)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, heading)) out.insert(m[1]);
  return out;
}

// Every `<page>.md §N` a source cites (docs/<page>.md, or docs/methods/<page>.md as the method pages cite each
// other, "rcl.md §2.2") names a page and a section it has: a section renumbered or a page renamed is caught here.
TEST(SourceComments, CiteDocsSectionsThatExist) {
  const std::vector<std::string> files =
      source_files({"tensor", "autograd", "nn", "ot", "models", "parallel", "viz", "train", "python/src", "bench",
                    "fuzz", "tests"},
                   {".h", ".cpp", ".cu", ".cuh"});
  const std::regex cite(R"((?:docs/)?((?:methods/)?[a-z0-9_\-]+)\.md §(\d+(?:\.\d+)*))");
  std::map<std::string, std::set<std::string>> known;
  std::string missing;
  int cited = 0;
  for (const std::string& f : files) {
    std::ifstream in(kRoot + f);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      for (std::sregex_iterator it(line.begin(), line.end(), cite), end; it != end; ++it) {
        std::string page = (*it)[1];
        if (!fs::exists(kRoot + "docs/" + page + ".md") && page.find('/') == std::string::npos) page = "methods/" + page;
        if (!known.count(page)) known[page] = sections(page);
        ++cited;
        if (!known[page].count((*it)[2]))
          missing += "\n  " + f + ":" + std::to_string(n) + ": docs/" + page + ".md §" + std::string((*it)[2]);
      }
    }
  }
  EXPECT_GT(cited, 200);
  EXPECT_TRUE(missing.empty()) << "citations of sections that do not exist:" << missing;
}

}  // namespace
}  // namespace rematch::cli
