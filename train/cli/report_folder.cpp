#include "train/cli/report_folder.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "train/run/run_folder_contents.h"

namespace rematch::cli {
namespace fs = std::filesystem;

std::string report_folder_problem(const std::string& out) {
  const std::string where = "--out " + out + ": ";
  const std::string guarded = run::protected_folder(out);
  if (!guarded.empty())
    return where + "is " + guarded + "; a report writes its page, pictures and thumbs/ there and replaces them on "
           "the next report: give a folder of its own";
  std::error_code ec;
  if (!fs::exists(out, ec)) return "";
  if (!fs::is_directory(out, ec)) return where + "exists and is not a folder: give a folder for the report";
  // What a report writes, told by name and content (pages with rematch's head, marked plots: viz/
  // written_by_rematch.h), and whether a page rematch wrote is among it.
  std::vector<std::string> foreign = run::foreign_report_entries(out);
  bool holds_a_report = false;
  std::vector<std::string> others;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool ours = std::find(foreign.begin(), foreign.end(), name) == foreign.end();
    if (ours && it->path().extension() == ".html") {
      holds_a_report = true;
    } else if (ours) {
      others.push_back(name);
    }
  }
  // Pictures and thumbs/ count as a report's only beside a page rematch wrote.
  if (!holds_a_report) foreign.insert(foreign.end(), others.begin(), others.end());
  std::sort(foreign.begin(), foreign.end());
  if (foreign.empty()) return "";
  return where + "holds what rematch did not write (" + run::list_names(foreign) + "); a report replaces its own "
         "files there: move these away, or give another --out";
}

}  // namespace rematch::cli
