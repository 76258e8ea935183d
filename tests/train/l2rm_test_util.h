// Shared by the L2RM method and ablation tests: a tiny L2RM run on a synthetic benchmark.
#pragma once

#include <functional>
#include <string>

#include "train/methods/l2rm/l2rm_method.h"
#include "train/methods/train_config.h"
#include "train/synth/pairs_world.h"

namespace rematch::train::l2rm_test {

// Writes a synthetic world of 24 images (3 regions of 8 features, 5 captions each) into `dir` and returns an L2RM
// config on it: half the pairs mismatched, batches of 8, an SGR of width 8, one main epoch without warm-up.
// `adjust` edits the config before resolve_defaults. The same sizes in the section of triplet, infonce and rcl.
inline TrainConfig tiny_config(const std::string& dir, const std::function<void(TrainConfig&)>& adjust = {}) {
  synth::PairsWorldConfig w;
  w.train_images = 24;
  w.dev_images = 4;
  w.test_images = 4;
  w.regions = 3;
  w.feature_dim = 8;
  synth::write_pairs_world(synth::make_pairs_world(w), dir);
  TrainConfig c;
  c.method = "l2rm";
  c.data_path = dir;
  c.data_name = "synth_precomp";
  c.noise_ratio = 0.5;
  c.batch_size = 8;
  // L2RM's section, and the pairs methods' (methods_cuda_test runs triplet, infonce and rcl on this config).
  for (PairsOptions* o : {static_cast<PairsOptions*>(&c.options<L2rmOptions>()), &c.options<PairsOptions>()}) {
    o->embed_size = 8;
    o->word_dim = 4;
    o->sim_dim = 4;
  }
  c.warmup_epoch = 0;
  c.num_epochs = 1;
  c.progress = run::ProgressStyle::None;
  if (adjust) adjust(c);
  resolve_defaults(c);
  return c;
}

// The method of a config, on its data, as make_method builds it.
inline L2rmMethod make(const TrainConfig& c, std::ostream& log) {
  return L2rmMethod(c, c.options<L2rmOptions>(), load_pairs_data(c, false, log), log);
}

}  // namespace rematch::train::l2rm_test
