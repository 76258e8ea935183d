// The two forms of a data check's report: the terminal table and --json.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "train/data/data_check.h"
#include "train/data/vocab.h"

namespace rematch::data {
namespace {

// A path as the table shows it: relative to --data_path when inside it.
std::string shown_path(const std::string& path, const std::string& data_path) {
  std::string base = without_trailing_slashes(data_path);
  if (!base.empty() && base != "/" && path.rfind(base + "/", 0) == 0) return path.substr(base.size() + 1);
  return path;
}

std::string mark(Severity s) {
  switch (s) {
    case Severity::ok: return "ok";
    case Severity::note: return "note";
    case Severity::warning: return "WARN";
    case Severity::error: return "FAIL";
  }
  return "?";
}

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }

}  // namespace

std::string format_report(const DataCheckReport& r) {
  std::ostringstream out;
  out << "rematch data check: " << (r.layout == "precomp" ? "SCAN precomp layout" : "class-labelled layout") << " in "
      << r.folder << "\n";
  out << (r.release.empty() ? "no official release of this name: files are checked against each other only"
                            : "held against the official " + r.release + " release (docs/data.md)")
      << "\n\n";
  std::vector<std::vector<std::string>> rows = {{"", "file", "holds", "official release"}};
  for (const CheckItem& i : r.items) {
    std::string holds = i.content.empty() ? "-" : i.content;
    if (i.severity != Severity::ok && i.status != "ok") holds = i.status + (i.content.empty() ? "" : ": " + i.content);
    // Facts about the whole set (a labelled split, its classes) are named by what they are, not by the folder.
    const std::string file = i.path == r.folder ? i.role : shown_path(i.path, r.data_path);
    rows.push_back({mark(i.severity), file, holds, i.expected.empty() ? "-" : i.expected});
  }
  std::vector<size_t> width(4, 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < 3; ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows)
    out << "  " << pad(row[0], width[0]) << "  " << pad(row[1], width[1]) << "  " << pad(row[2], width[2]) << "  "
        << row[3] << "\n";

  const int64_t errors = r.count(Severity::error), warnings = r.count(Severity::warning);
  for (const Severity s : {Severity::error, Severity::warning, Severity::note}) {
    bool header = false;
    for (const CheckItem& i : r.items) {
      if (i.severity != s || i.problem.empty()) continue;
      if (!header)
        out << "\n"
            << (s == Severity::error     ? "Problems (a training run would stop, or train on other data):"
                : s == Severity::warning ? "Warnings:"
                                         : "Notes:")
            << "\n";
      header = true;
      out << "  " << i.role << ": " << i.problem << "\n";
      if (!i.source.empty()) out << "    it comes from " << i.source << "\n";
    }
  }
  out << "\n"
      << errors << (errors == 1 ? " error, " : " errors, ") << warnings << (warnings == 1 ? " warning" : " warnings")
      << (errors ? ": fix the errors before training" : ": ready to train") << "\n";
  return out.str();
}

std::string report_json(const DataCheckReport& r) {
  nlohmann::json j;
  j["data_path"] = r.data_path;
  j["data_name"] = r.data_name;
  j["layout"] = r.layout;
  j["folder"] = r.folder;
  j["release"] = r.release.empty() ? nlohmann::json() : nlohmann::json(r.release);
  j["errors"] = r.count(Severity::error);
  j["warnings"] = r.count(Severity::warning);
  j["ok"] = r.ok();
  j["items"] = nlohmann::json::array();
  for (const CheckItem& i : r.items) {
    nlohmann::json e = {{"role", i.role},         {"path", i.path},       {"severity", severity_name(i.severity)},
                        {"status", i.status},     {"content", i.content}, {"expected", i.expected},
                        {"problem", i.problem},   {"source", i.source}};
    e["numbers"] = nlohmann::json::object();
    for (const auto& [k, v] : i.numbers) e["numbers"][k] = v;
    j["items"].push_back(e);
  }
  return j.dump(2);
}

}  // namespace rematch::data
