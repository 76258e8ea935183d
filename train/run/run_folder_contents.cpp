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

bool rematch_file_in(const std::string& folder, const std::string& name) {
  static const std::regex plot(R"([^/]+\.png)"), split(R"(epoch_\d+\.(npy|json))"),
      page(R"([^/]+\.(html|png))"), thumb(R"([^/]+\.(png|jpg))");
  const std::string base = without_temporary_suffix(name);
  if (folder == "plots") return std::regex_match(base, plot);
  if (folder == "splits") return std::regex_match(base, split);
  if (folder == "report") return std::regex_match(base, page);
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
    if (is_folder(*it) || !rematch_file_in(kind, name)) out.push_back(prefix + name);
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
