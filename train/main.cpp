// The `rematch` binary: everything lives in train/cli (see app.h), so the tests can drive the same code.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tensor/memory.h"
#include "train/cli/app.h"

namespace {

// Whether this command line does work whose OpenMP threads could spin: anything but asking for help (no
// arguments, -h, --help, a subcommand's --help) and a dry run (--dry_run), which resolve flags and print.
// OMP_DISPLAY_ENV makes libgomp print the settings it uses: then the settings a real command would use.
bool runs_parallel_work(int argc, char** argv) {
  if (std::getenv("OMP_DISPLAY_ENV") != nullptr) return true;
  if (argc <= 1) return false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--") == 0) break;
    if (std::strcmp(a, "-h") == 0 || std::strcmp(a, "--help") == 0 || std::strncmp(a, "--dry_run", 9) == 0)
      return false;
  }
  return true;
}

// The most threads OMP_NUM_THREADS may ask for: libgomp crashed (SIGSEGV, no message) starting 100,000 of them.
constexpr long kMaxThreads = 4096;

// OMP_NUM_THREADS's first entry (a list gives one per nesting level) when it asks for more than kMaxThreads:
// the program stops before OpenMP starts a team, naming the variable, instead of crashing in libgomp.
bool too_many_threads(const char* setting) {
  if (setting == nullptr) return false;
  char* end = nullptr;
  const long n = std::strtol(setting, &end, 10);
  return end != setting && n > kMaxThreads;
}

}  // namespace

// OpenMP's idle threads sleep instead of spin unless OMP_WAIT_POLICY says otherwise. The CPU kernels fork and
// join thousands of short parallel regions a second; with libgomp's default (spin 300,000 times before
// sleeping) the waiting threads keep their cores busy, and beside another busy process they take the core from
// the thread doing the work: a demo-sized training run took 27–32 s instead of 8–10 s next to two busy
// processes (bench/RESULTS.md, "Under load"). libgomp reads the variable once, when it is loaded (before main,
// and before any constructor of this program could set it: a .preinit_array setenv is undone by libc's own
// start, which resets environ), so the program sets it and runs itself again, once (the second run finds it
// set), and only for a command that computes: help and --dry_run print and exit with the default. Should the
// exec fail it goes on with the default. Set OMP_WAIT_POLICY yourself to skip this (e.g. under valgrind, which
// does not follow the second exec by default). The second start is cheap: the CUDA libraries are not loaded
// at start (cuBLAS opens on first use, tensor/cuda/cublas_api.h).
int main(int argc, char** argv) {
  if (too_many_threads(std::getenv("OMP_NUM_THREADS"))) {
    std::cerr << "rematch: error: OMP_NUM_THREADS=" << std::getenv("OMP_NUM_THREADS") << " asks for more than "
              << kMaxThreads << " threads (this machine has " << ::sysconf(_SC_NPROCESSORS_ONLN)
              << " processors): set it to at most their number, or unset it\n";
    return 2;
  }
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && runs_parallel_work(argc, argv) &&
      ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0)
    ::execv("/proc/self/exe", argv);
  rematch::tune_host_malloc();  // tensor/memory.h
  return rematch::cli::run(argc, argv, std::cout, std::cerr);
}
