// The folder `rematch demo --out` writes: data/ (the synthetic benchmark: synth_precomp/ and vocab/), one run
// folder per method, report/ and validation_rsum.png, each replaced by the next demo. Like --overwrite of a run
// folder (train/run/run_folder_contents.h), a demo replaces only what a demo wrote: the folder must be new,
// empty, or hold nothing else, and is never the root, home or current folder.
#pragma once

#include <string>
#include <vector>

namespace rematch::cli {

// Why the demo cannot write to `out`, naming what is in the way and what to do, or "" when it can.
// `methods` are the method names whose run folders it may hold.
std::string demo_folder_problem(const std::string& out, const std::vector<std::string>& methods);

}  // namespace rematch::cli
