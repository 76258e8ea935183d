// The `rematch` binary: everything lives in train/cli (see app.h), so the tests can drive the same code.
#include <iostream>

#include "train/cli/app.h"

int main(int argc, char** argv) { return rematch::cli::run(argc, argv, std::cout, std::cerr); }
