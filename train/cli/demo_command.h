// `rematch demo`: the whole suite on built-in synthetic data, no download. It writes a synthetic
// image–caption benchmark with planted word–region structure (train/synth/pairs_world.h; on the CPU a small
// world — 8 object and 4 attribute concepts, no twins — that a small SAF model learns in minutes), injects 60 %
// image-level mismatches (RCL/DECL protocol), trains `triplet` (VSE++), `rcl` and `l2rm` on the same data
// with the same seed, evaluates each on the test split, and prints one comparison table (R@1/5/10 both ways,
// rSum, and the clean-set precision of L2RM's split). Each run keeps its own run folder with plots under
// --out; the demo adds a plot of the three validation curves. The CPU size takes about 4.5 minutes on two
// idle cores; `--device cuda` runs larger dimensions (SGR, the full-size world).
#pragma once

#include <ostream>

#include "train/synth/pairs_world.h"

namespace CLI {
class App;
}

namespace rematch::cli {

void add_demo_command(CLI::App& app, std::ostream& out, std::ostream& err);

// The demo's synthetic world at its CPU or GPU size (seed 0; the demo sets --seed). The behaviour tests train on
// the CPU one (tests/train/*_behaviour_test.cpp).
synth::PairsWorldConfig demo_world(bool gpu);

}  // namespace rematch::cli
