// The `rematch` program run in-process for the CLI tests: cli::run with an
// argument list, its exit code and what it wrote to stdout and stderr.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "train/cli/app.h"

namespace rematch::cli::test {

struct CliResult {
  int code;
  std::string out, err;
};

// run_cli({"train", "--method", "rcl", ...}): the program name is added in
// front.
inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "rematch");
  std::vector<const char *> argv;
  for (const auto &a : args)
    argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// Argument lists joined: train("rcl", "run") +
// std::vector<std::string>{"--neg_ratio", "4"}.
inline std::vector<std::string> operator+(std::vector<std::string> a,
                                          const std::vector<std::string> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The metric lines of a run folder as text: equal text = equal numbers.
inline std::vector<std::string> metric_lines(const std::string &run_dir) {
  std::ifstream f(run_dir + "/metrics.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);)
    lines.push_back(line);
  return lines;
}

} // namespace rematch::cli::test
