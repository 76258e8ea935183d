// Shared by the RCSL method, ablation and GPU tests: a small synthetic world on disk and a small rcsl/rcsl-nc
// configuration on it.
#pragma once

#include <string>

#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/train_config.h"
#include "train/synth/pairs_world.h"

namespace rematch::train::rcsl_test {

// A world of `train_images` training images (8 regions of 32 features) written under `dir`.
inline void write_world(const std::string& dir, int64_t train_images, int64_t dev_images, int64_t test_images) {
  synth::PairsWorldConfig w;
  w.train_images = train_images;
  w.dev_images = dev_images;
  w.test_images = test_images;
  w.regions = 8;
  w.feature_dim = 32;
  w.seed = 5;
  synth::write_pairs_world(synth::make_pairs_world(w), dir);
}

inline TrainConfig small_config(const std::string& dir, const std::string& method) {
  TrainConfig c;
  c.method = method;
  c.data_path = dir;
  c.data_name = "synth_precomp";
  c.vocab_path = dir + "/vocab";
  c.seed = 3;
  RcslOptions& o = c.options<RcslOptions>();
  if (method == "rcsl") o.paired_length = 6;
  if (method == "rcsl-nc") c.noise_ratio = 0.4;
  resolve_defaults(c);
  c.batch_size = 16;
  c.num_epochs = 4;
  o.mine_epoch = 2;
  o.lr_milestones = {1, 3};
  o.embed_size = 16;
  o.word_dim = 8;
  c.eval_batch = 32;
  return c;
}

// The method of a config, on its data, as make_method builds it (with the config's RCSL section, which a test
// may have changed after resolve_defaults): rcsl-nc's spec builds it noisy.
inline RcslMethod make(const TrainConfig& c, std::ostream& log) {
  const RcslOptions& o = c.options<RcslOptions>();
  return RcslMethod(c, o, c.method == "rcsl-nc", load_pairs_data(c, o.word_vectors.empty(), log), log);
}

}  // namespace rematch::train::rcsl_test
