// `rematch demo --labeled`: the class-labelled half of the suite on built-in synthetic data. It writes the labelled
// benchmark of `rematch synth --kind labeled` (10 classes, 2,000 training pairs, 128-d image and 64-d text
// features), relabels 50 % of the training pairs uniformly at random (symmetric noise, one label per pair), trains a
// cross-entropy baseline (`mrl --label_loss ce --beta 1`, MRL's own "CE" setting), `mrl`, `dscmr` and `uotrcl` on
// the same noisy labels with the same seed and model size, and prints their test mAP (image→text, text→image,
// average, at the best validated epoch) with UOT-RCL's corrected-label accuracy; the report is UOT-RCL's run page
// with its corrected labels. About half a minute on two idle cores.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "train/methods/train_config.h"
#include "train/synth/labeled_world.h"

namespace rematch::cli {

struct LabeledDemoOptions {
  std::string out = "demo";
  std::string device = "cpu";
  uint64_t seed = 0;
  double noise_ratio = 0.5;
  int64_t epochs = 20;  // per method, UOT-RCL's 2 warm-up epochs included
  std::string progress = "auto";
};

// The labelled demo's world (the defaults of `rematch synth --kind labeled`) with the demo's seed.
synth::LabeledWorldConfig labeled_demo_world(uint64_t seed);

// One row of the demo: its name in the table ("ce" is mrl's cross-entropy setting) and its resolved config.
struct LabeledDemoRun {
  std::string row;
  train::TrainConfig config;
};
// The four runs on the data at `data_path` (write_labeled_world's folder), run folders under o.out.
std::vector<LabeledDemoRun> labeled_demo_runs(const LabeledDemoOptions& o, const std::string& data_path);

void run_labeled_demo(const LabeledDemoOptions& o, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
