// The places that name the methods for a user follow the registry (train/methods/make_method.cpp), so a method
// added there cannot be missing from them: `rematch --help`'s first line (generated), `rematch train --help`'s
// method list (generated), README.md's opening paragraph and docs/README.md's index of method pages (written by
// hand, checked here).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "train/cli_runner.h"
#include "train/methods/method_spec.h"

namespace rematch {
namespace {

using cli::test::run_cli;

const std::string kRoot = std::string(REMATCH_FIXTURES) + "/../../";

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MethodLists, ProgramHelpNamesEveryRegisteredMethod) {
  const cli::test::CliResult r = run_cli({"--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  for (const train::MethodSpec* m : train::registered_methods())
    EXPECT_NE(first.find(m->name), std::string::npos) << "`rematch --help` begins \"" << first << "\", without "
                                                      << m->name;
}

TEST(MethodLists, TrainHelpListsEveryRegisteredMethod) {
  const cli::test::CliResult r = run_cli({"train", "--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const train::MethodSpec* m : train::registered_methods())
    EXPECT_NE(r.out.find("  " + m->name + ": "), std::string::npos) << "`rematch train --help` does not list "
                                                                    << m->name;
}

// A group of options several methods share (the SGR/SAF one) is headed by every method whose tables carry it, in
// --help and in docs/presets.md, so a method that joins the group joins its heading.
TEST(MethodLists, SharedGroupHeadingNamesEachMethodOfItsTables) {
  const cli::test::CliResult r = run_cli({"train", "--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string title = "SGR/SAF image-caption methods";
  std::string names;
  for (const train::MethodSpec* m : train::registered_methods())
    for (const train::OptionTable* t : m->tables)
      if (t->title == title) {
        names += (names.empty() ? "" : " | ") + m->name;
        break;
      }
  ASSERT_NE(names.find("ncr"), std::string::npos) << "the SGR/SAF group is no longer NCR's: " << names;
  const std::string heading = title + " (--method " + names + ")";
  EXPECT_EQ(train::group_title(title), heading);
  EXPECT_NE(r.out.find("\n" + heading + ":\n"), std::string::npos) << "`rematch train --help` has no group \""
                                                                   << heading << "\"";
  EXPECT_NE(read_all(kRoot + "docs/presets.md").find("### " + heading + "\n"), std::string::npos)
      << "docs/presets.md has no heading \"" << heading << "\" (REMATCH_WRITE_DOCS=1 train_tests "
      << "--gtest_filter=PresetsDoc.*)";
}

// The help of a flag several methods share gives each method's own default (train/cli/train_command.cpp:
// method_defaults_text, generated from the methods' Default tables): --tau's, which differs by method, in full;
// then, for every shared flag, each method's preset-free default is the one its help line attributes to it (named
// in "(default X; m n Y; ...)", else the common X, else the "=X" CLI shows), so a method joining a shared flag
// with a default of its own is named there.
std::string help_line(const std::string& help, const std::string& flag) {
  const size_t at = help.find("\n  --" + flag + " ");
  if (at == std::string::npos) return "";
  return help.substr(at + 1, help.find("\n  --", at + 1) - at - 1);
}

TEST(MethodLists, SharedFlagHelpGivesEachMethodsDefault) {
  const cli::test::CliResult r = run_cli({"train", "--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(help_line(r.out, "tau").find("(default 0.05; rcsl rcsl-nc 0.03; decl 0.1; cream 0.07; mrl 1)"), std::string::npos)
      << help_line(r.out, "tau");
  for (const train::TrainFlag& f : train::train_flags()) {
    if (f.group != train::kSharedOptions) continue;
    const std::string line = help_line(r.out, f.name);
    ASSERT_FALSE(line.empty()) << "--" << f.name << " is not in `rematch train --help`";
    // What the line says: the common default and the methods' own.
    std::string common;
    std::map<std::string, std::string> own;
    const size_t open = line.find("(default ");
    if (open != std::string::npos) {
      std::stringstream parts(line.substr(open + 9, line.find(')', open) - open - 9));
      std::string part;
      std::getline(parts, common, ';');
      while (std::getline(parts, part, ';')) {
        std::stringstream words(part);
        std::vector<std::string> w;
        for (std::string x; words >> x;) w.push_back(x);
        ASSERT_GE(w.size(), 2u) << line;
        for (size_t i = 0; i + 1 < w.size(); ++i) own[w[i]] = w.back();
      }
    } else {
      // "  --name TYPE=X   help": X of the word after the name.
      const size_t type = line.find(' ', 2) + 1;
      const std::string word = line.substr(type, line.find_first_of(" \n", type) - type);
      if (word.find('=') != std::string::npos) common = word.substr(word.find('=') + 1);
    }
    for (const std::string& m : f.methods)
      for (const train::Default& d : train::method_spec(m).defaults)
        if (d.flag == f.name && !d.rule)
          for (const auto& [preset, value] : d.values)
            if (preset == "*" || preset.empty()) {
              const std::string said = own.count(m) ? own[m] : common;
              EXPECT_EQ(said, train::format_value(value)) << "--" << f.name << " for " << m << ": " << line;
            }
  }
}

TEST(MethodLists, ReadmeOpeningNamesEveryRegisteredMethod) {
  const std::string readme = read_all(kRoot + "README.md");
  // The opening paragraph: from the first line after the title to the first empty line.
  const size_t begin = readme.find("\n\n") + 2, end = readme.find("\n\n", begin);
  ASSERT_NE(end, std::string::npos);
  const std::string opening = readme.substr(begin, end - begin);
  for (const train::MethodSpec* m : train::registered_methods())
    EXPECT_NE(opening.find("`" + m->name + "`"), std::string::npos)
        << "README.md's opening paragraph does not name `" << m->name << "`: add it to the --method list there";
}

TEST(MethodLists, DocsIndexLinksEveryMethodPage) {
  const std::string index = read_all(kRoot + "docs/README.md");
  for (const train::MethodSpec* m : train::registered_methods()) {
    ASSERT_EQ(m->doc.rfind("docs/", 0), 0u) << m->name << "'s doc " << m->doc << " is not under docs/";
    const std::string page = m->doc.substr(m->doc.find('/') + 1);  // methods/<name>.md
    EXPECT_NE(index.find("(" + page + ")"), std::string::npos)
        << "docs/README.md does not link " << page << " (" << m->name << "'s page)";
    EXPECT_TRUE(std::ifstream(kRoot + m->doc).good()) << m->doc << " (" << m->name << "'s page) is missing";
  }
}

}  // namespace
}  // namespace rematch
