// The `rematch` program (docs/design.md §6, "The program"): one binary, one CLI11 subcommand per job. main.cpp only
// calls run(); the tests call it too, with their own streams, so every path of the program is testable
// without spawning a process.
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>

#include "tensor/device.h"

namespace rematch::cli {

// Process exit codes: success, a failure while running (unreadable file, ...), a bad command line.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;  // stopped by SIGINT/SIGTERM after saving what resumes it (128 + SIGINT)

// Thrown by a subcommand when its flags parse but make no sense together (a --regions with --kind labeled,
// a --captions_per_image that does not fit the matrix); run() reports it like a CLI11 parse error.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

// Thrown by a subcommand that stopped on SIGINT/SIGTERM after saving a resumable state; run() prints the
// message and returns kExitInterrupted.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(const std::string& what) : std::runtime_error(what) {}
};

// The device a command's --device flag names, for the command to call before it reads or makes any data: a
// value that is not cpu, cuda or cuda:N is a UsageError; a device this process cannot use (a build without
// CUDA, no such GPU, the CUDA runtime's error) a rematch::Error naming the flag (tensor/device.h).
Device device_flag(const std::string& spec);

// Parses argv (argv[0] is the program name) and runs the chosen subcommand, writing results and help to
// `out` and diagnostics to `err`. Never throws; returns one of the exit codes above.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
