// `rematch ot` (train/cli/ot_command.cpp) run through the CLI's entry point on fuzzed files. The input is split
// (fuzz::split_files) into the cost .npy, then, when present, the row and column weight .npy files (--a, --b) and
// a last part whose first bytes pick the flags: partial transport, its dummy costs and mass, the masked
// diagonal, the domain, the stop rule and epsilon. Every failure must come back as an exit code with a message
// (the CLI reports another exception type as "unexpected error", which this target treats as a finding).
#include <sstream>

#include "fuzz/fuzz_util.h"
#include "train/cli/app.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string_view> parts = fuzz::split_files(fuzz::bytes(data, size));
  std::vector<std::string> args = {"rematch", "ot", "--cost", fuzz::write_file("cost.npy", parts[0]), "--out",
                                   fuzz::temp_dir() + "/plan.npy", "--max_iter", "50"};
  if (parts.size() > 1) args.insert(args.end(), {"--a", fuzz::write_file("a.npy", parts[1])});
  if (parts.size() > 2) args.insert(args.end(), {"--b", fuzz::write_file("b.npy", parts[2])});
  const std::string_view flags = parts.size() > 3 ? parts[3] : std::string_view();
  const auto byte = [&](size_t i) { return i < flags.size() ? static_cast<uint8_t>(flags[i]) : uint8_t{0}; };
  static const char* const kEps[] = {"0.05", "1e-3", "0.5", "10"};
  static const char* const kMass[] = {"0.5", "0.1", "1", "2"};
  static const char* const kDummy[] = {"l2rm", "l2rm_shifted", "zero", "l2rm"};
  args.insert(args.end(), {"--eps", kEps[byte(1) % 4]});
  if (byte(0) & 1) args.insert(args.end(), {"--partial", kMass[byte(2) % 4], "--dummy", kDummy[(byte(0) >> 1) % 4]});
  if (byte(0) & 8) args.push_back("--mask_diagonal");
  if (byte(0) & 16) args.insert(args.end(), {"--domain", "scaling"});
  if (byte(0) & 32) args.insert(args.end(), {"--stop", "potential"});
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  if (err.str().rfind("rematch: unexpected error", 0) == 0) fuzz::fail("rematch ot: " + err.str());
  return 0;
}
