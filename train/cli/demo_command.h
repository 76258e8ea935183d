// `rematch demo`: the whole suite on built-in synthetic data, no download. It writes a synthetic
// image–caption benchmark with planted word–region structure (train/synth/pairs_world.h), injects 60 %
// image-level mismatches (RCL/DECL protocol), trains `triplet` (VSE++), `rcl` and `l2rm` on the same data
// with the same seed, evaluates each on the test split, and prints one comparison table (R@1/5/10 both ways,
// rSum, and the clean-set precision of L2RM's split). Each run keeps its own run folder with plots under
// --out; the demo adds a plot of the three validation curves. The CPU size finishes within ten minutes on
// two cores; `--device cuda` runs larger dimensions.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

void add_demo_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
