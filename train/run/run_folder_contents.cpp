#include "train/run/run_folder_contents.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "viz/written_by_rematch.h"

namespace rematch::run {
namespace fs = std::filesystem;

namespace {

// "<name>.tmp.<pid>.<n>" of an atomic write (tensor/file_io.h) stripped to <name>; other names as they are.
std::string without_temporary_suffix(const std::string& name) {
  static const std::regex temporary(R"((.+)\.tmp\.\d+\.\d+)");
  std::smatch m;
  return std::regex_match(name, m, temporary) ? m[1].str() : name;
}

bool is_temporary(const std::string& name) { return without_temporary_suffix(name) != name; }

// Whether a folder holds nothing but temporary files of atomic writes (a kill inside one leaves them).
bool only_temporaries(const fs::path& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (!is_temporary(it->path().filename().string())) return false;
  return true;
}

bool is_folder(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec) && !e.is_symlink(ec);
}

// The top-level entries of a run folder, and what rematch writes inside its subfolders.
const char* const kRunFiles[] = {"config.json",   "metrics.jsonl",   "checkpoint_latest.safetensors",
                                 "checkpoint_best.safetensors", "results.md", "run.lock", "noise_index.npy",
                                 "noisy_labels.npy", "memory.md"};
const char* const kRunFolders[] = {"plots", "splits", "report"};

// The plots an earlier rematch wrote before its PNGs carried the marker (viz/written_by_rematch.h), by name: in
// plots/ the trainer's curves (train/methods/trainer.cpp write_curves: loss, validation and the plotted statistics
// of each method's epoch_stats()), L2RM's and UOT-RCL's write_plots (train/methods/l2rm/l2rm_method.cpp,
// train/methods/uotrcl/uotrcl_method.cpp); in report/ the plots of `rematch retrieve --run`
// (train/cli/caught_report.cpp, train/cli/label_report.cpp). Every PNG written since carries the marker, so
// this list is never extended.
const char* const kUnmarkedPlots[] = {"loss.png", "validation.png", "loss_histogram.png", "transport_plan.png",
                                      "corrected_labels.png", "clean_precision.png", "clean_recall.png",
                                      "clean_precision_A.png", "clean_precision_B.png", "clean_label.png",
                                      "noisy_label.png", "noisy_recall.png", "hard_size.png", "noisy_size.png",
                                      "label_accuracy.png"};
const char* const kUnmarkedReportPlots[] = {"detection.png", "labels.png"};

template <size_t N>
bool one_of(const char* const (&names)[N], const std::string& name) {
  return std::find_if(std::begin(names), std::end(names), [&](const char* n) { return name == n; }) != std::end(names);
}

bool regular_file(const fs::path& file) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(file, ec));
}

// Whether `file` is a PNG (its signature), read without following a link or blocking on a FIFO.
bool is_png(const fs::path& file) {
  if (!regular_file(file)) return false;
  try {
    const io::ReadFile f(file.string(), "plot");
    char head[8] = {};
    return f.read_at(head, sizeof head, 0) == sizeof head && std::string(head, 8) == "\x89PNG\r\n\x1a\n";
  } catch (const std::exception&) {
    return false;
  }
}

// A PNG rematch wrote in a folder where an earlier rematch wrote the plots `unmarked` without the marker.
template <size_t N>
bool rematch_png(const fs::path& file, const char* const (&unmarked)[N]) {
  return viz::png_written_by_rematch(file.string()) || (one_of(unmarked, file.filename().string()) && is_png(file));
}

// Whether splits/epoch_<epoch>.json is what viz::write_epoch_split writes (viz/epoch_splits.h): a small JSON
// object of exactly "epoch" (this epoch), "method", "kind" and "pairs".
bool rematch_split_meta(const fs::path& file, int64_t epoch) {
  if (!regular_file(file)) return false;
  try {
    const io::ReadFile f(file.string(), "epoch split");
    if (f.size() > 4096) return false;
    std::string text(f.size(), '\0');
    text.resize(f.read_at(text.data(), text.size(), 0));
    io::require_shallow_json(text, "epoch split");
    const nlohmann::json j = nlohmann::json::parse(text);
    return j.is_object() && j.size() == 4 && j.contains("epoch") && j["epoch"].is_number_integer() &&
           j["epoch"].get<int64_t>() == epoch && j.contains("method") && j["method"].is_string() &&
           j.contains("kind") && j["kind"].is_string() && j.contains("pairs") && j["pairs"].is_number_integer();
  } catch (const std::exception&) {
    return false;
  }
}

// Whether `file`, in a run's subfolder of kind `folder` ("plots", "splits", "report", "report/thumbs"), is one
// rematch wrote there: its name is one rematch gives files there and, but for thumbs/, its content says so
// (viz/written_by_rematch.h; a split's .npy goes with the .json written beside it). The temporary file of an
// atomic write of such a name counts by its name: it holds a part of the file.
bool rematch_file_in(const std::string& folder, const fs::path& file) {
  static const std::regex png(R"([^/]+\.png)"), split(R"(epoch_(\d{1,18})\.(npy|json))"), page(R"([^/]+\.html)"),
      thumb(R"([^/]+\.(png|jpg))");
  const std::string name = file.filename().string();
  const std::string base = without_temporary_suffix(name);
  const bool temporary = base != name;
  std::smatch m;
  if (folder == "plots")
    return std::regex_match(base, png) && (temporary || rematch_png(file, kUnmarkedPlots));
  if (folder == "splits") {
    if (!std::regex_match(base, m, split)) return false;
    if (temporary) return true;
    const int64_t epoch = std::stoll(m[1].str());
    const fs::path meta = file.parent_path() / ("epoch_" + m[1].str() + ".json");
    return regular_file(file) && rematch_split_meta(meta, epoch);
  }
  if (folder == "report") {
    if (std::regex_match(base, page)) return temporary || viz::page_written_by_rematch(file.string());
    return std::regex_match(base, png) && (temporary || rematch_png(file, kUnmarkedReportPlots));
  }
  // thumbs/: pictures rematch shrinks from the data set's, named after them (viz/thumbnails.h).
  if (folder == "report/thumbs") return std::regex_match(base, thumb);
  return false;
}

// The entries of `dir`, a folder of kind `kind` ("plots", "splits", "report", "report/thumbs"), that rematch does
// not write there, as `prefix` + their name.
void foreign_in(const fs::path& dir, const std::string& kind, const std::string& prefix, std::vector<std::string>& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (kind == "report" && name == "thumbs" && is_folder(*it)) {
      foreign_in(it->path(), "report/thumbs", prefix + name + "/", out);
      continue;
    }
    if (is_folder(*it) || !rematch_file_in(kind, it->path())) out.push_back(prefix + name);
  }
}

bool top_level_file(const std::string& name) {
  const std::string base = without_temporary_suffix(name);
  return std::find(std::begin(kRunFiles), std::end(kRunFiles), base) != std::end(kRunFiles);
}

bool top_level_folder(const std::string& name) {
  return std::find(std::begin(kRunFolders), std::end(kRunFolders), name) != std::end(kRunFolders);
}

std::string canonical_or_empty(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::canonical(p, ec);
  return ec ? std::string() : c.string();
}

}  // namespace

bool holds_rematch_config(const std::string& dir) {
  try {
    const std::string text = io::read_text_file((fs::path(dir) / "config.json").string(), "config");
    io::require_shallow_json(text, "config");  // nested too deep to be rematch's: not a run
    const nlohmann::json j = nlohmann::json::parse(text);
    return j.is_object() && j.contains("method") && j["method"].is_string();
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<std::string> foreign_entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (top_level_folder(name) && is_folder(*it)) {
      foreign_in(it->path(), name, name + "/", out);
      continue;
    }
    if (is_folder(*it) || !top_level_file(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool written_by_rematch_in(const std::string& folder, const std::string& file) {
  return top_level_folder(folder) && rematch_file_in(folder, file);
}

std::vector<std::string> foreign_report_entries(const std::string& report_dir) {
  std::vector<std::string> out;
  foreign_in(report_dir, "report", "", out);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> run_entries_with_content(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "run.lock" || is_temporary(name)) continue;
    if (name == "plots" && is_folder(*it) && only_temporaries(it->path())) continue;
    if ((top_level_folder(name) && is_folder(*it)) || top_level_file(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string protected_folder(const std::string& dir) {
  const std::string target = canonical_or_empty(dir);
  if (target.empty()) return "";  // does not exist yet: nothing in it to lose
  if (target == "/") return "the root folder";
  const char* home = std::getenv("HOME");
  if (home && *home && target == canonical_or_empty(home)) return "your home folder";
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (!ec && target == canonical_or_empty(cwd)) return "the current folder";
  return "";
}

std::string remove_run_entries(const std::string& dir) {
  std::vector<fs::path> doomed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "run.lock") continue;
    if ((top_level_folder(name) && is_folder(*it)) || (top_level_file(name) && !is_folder(*it)))
      doomed.push_back(it->path());
  }
  if (ec) return dir + ": " + ec.message();
  std::sort(doomed.begin(), doomed.end());
  for (const fs::path& p : doomed) {
    std::error_code rm;
    fs::remove_all(p, rm);
    if (rm) return p.string() + ": " + rm.message();
  }
  return "";
}

std::string list_names(const std::vector<std::string>& names, size_t shown) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < shown; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
  return s;
}

}  // namespace rematch::run
