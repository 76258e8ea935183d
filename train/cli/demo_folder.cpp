#include "train/cli/demo_folder.h"

#include <algorithm>
#include <filesystem>

#include "train/run/run_folder_contents.h"

namespace rematch::cli {
namespace fs = std::filesystem;

namespace {

bool is_folder(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec) && !e.is_symlink(ec);
}

}  // namespace

std::string demo_folder_problem(const std::string& out, const std::vector<std::string>& methods) {
  const std::string where = "--out " + out + ": ";
  const std::string guarded = run::protected_folder(out);
  if (!guarded.empty())
    return where + "is " + guarded + "; the demo writes data/, report/ and a run folder per method there and "
           "replaces them on the next demo: give a folder of its own (by default: demo)";
  std::error_code ec;
  if (!fs::exists(out, ec)) return "";
  if (!fs::is_directory(out, ec)) return where + "exists and is not a folder: give another --out";
  std::vector<std::string> foreign;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "validation_rsum.png" && !is_folder(*it)) continue;
    if (name == "data" && is_folder(*it)) {
      for (fs::directory_iterator d(it->path(), ec), e2; !ec && d != e2; d.increment(ec)) {
        const std::string sub = d->path().filename().string();
        if (!(is_folder(*d) && (sub == "synth_precomp" || sub == "vocab"))) foreign.push_back("data/" + sub);
      }
      continue;
    }
    if (name == "report" && is_folder(*it)) {
      for (const std::string& f : run::foreign_report_entries(it->path().string())) foreign.push_back("report/" + f);
      continue;
    }
    if (std::find(methods.begin(), methods.end(), name) != methods.end() && is_folder(*it)) {
      const std::string dir = it->path().string();
      for (const std::string& f : run::foreign_entries(dir)) foreign.push_back(name + "/" + f);
      if (!run::run_entries_with_content(dir).empty() && !run::holds_rematch_config(dir))
        foreign.push_back(name + "/ (not a rematch run folder)");
      continue;
    }
    foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  if (foreign.empty()) return "";
  return where + "holds what a demo does not write (" + run::list_names(foreign) + "); the demo replaces its own "
         "files there: move these away, or give another --out";
}

}  // namespace rematch::cli
