// The `rematch` binary: everything lives in train/cli (see app.h), so the tests can drive the same code.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "train/cli/app.h"

// OpenMP's idle threads sleep instead of spin unless OMP_WAIT_POLICY says otherwise. The CPU kernels fork and
// join thousands of short parallel regions a second; with libgomp's default (spin 300,000 times before
// sleeping) the waiting threads keep their cores busy, and beside another busy process they take the core from
// the thread doing the work: a demo-sized training run took 27–32 s instead of 8–10 s next to two busy
// processes (bench/RESULTS.md, "Under load"). libgomp reads the variable once, when it is loaded, so the program
// sets it and runs itself again; should that fail it goes on with the default. Set OMP_WAIT_POLICY yourself to
// skip this (e.g. under valgrind, which does not follow the second exec by default).
int main(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0)
    ::execv("/proc/self/exe", argv);
  return rematch::cli::run(argc, argv, std::cout, std::cerr);
}
