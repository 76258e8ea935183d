// Shared by the UOT-RCL method tests and the study: the synthetic labelled benchmark as a loaded data set, and
// small UotrclOptions for it.
#pragma once

#include "train/data/labeled_dataset.h"
#include "train/methods/train_config.h"
#include "train/methods/uotrcl/uotrcl_method.h"
#include "train/synth/labeled_world.h"

namespace rematch::train::uotrcl_test {

inline data::LabeledSplit to_split(const synth::LabeledSplit& s) {
  data::LabeledSplit out;
  out.images = s.images;
  out.texts = s.texts;
  out.image_labels = s.labels.to_vector<int64_t>();
  out.text_labels = out.image_labels;
  return out;
}

// The world in memory, as data::load_labeled would return it from write_labeled_world's files.
inline data::LabeledDataset synthetic_dataset(const synth::LabeledWorldConfig& config) {
  const synth::LabeledWorld w = synth::make_labeled_world(config);
  data::LabeledDataset d;
  d.train = to_split(w.split("train"));
  d.valid = to_split(w.split("valid"));
  d.test = to_split(w.split("test"));
  d.num_classes = config.classes;
  d.source = "synthetic labelled world (seed " + std::to_string(config.seed) + ")";
  return d;
}

// A tiny world and model: 4 classes, 240 pairs, batches of 50 (the last one partial).
inline synth::LabeledWorldConfig tiny_world() {
  synth::LabeledWorldConfig c;
  c.classes = 4;
  c.train_samples = 240;
  c.valid_samples = 40;
  c.test_samples = 40;
  c.img_dim = 12;
  c.txt_dim = 8;
  c.latent_dim = 4;
  c.hidden_dim = 16;
  c.seed = 3;
  return c;
}

// The common options and UOT-RCL section of a small run on tiny_world() (the data given to the method directly).
inline TrainConfig tiny_options(int64_t num_epochs = 4) {
  TrainConfig c;
  c.method = "uotrcl";
  c.noise_ratio = 0.4;
  c.noise_seed = 11;
  c.seed = 5;
  c.batch_size = 50;
  c.num_epochs = num_epochs;
  c.warmup_epoch = 1;
  c.learning_rate = 1e-3;
  c.lr_update = 0;
  c.grad_clip = 0;
  c.eval_batch = 64;
  UotrclOptions& o = c.options<UotrclOptions>();
  o.hidden_dim = 32;
  o.output_dim = 16;
  o.knn = 12;
  o.confident_per_class = 3;
  o.lc_eps = 0.5;
  o.rel_eps = 0.02;
  return c;
}

// The method of a config on `data`, as make_method builds it.
inline UotrclMethod make(const TrainConfig& c, data::LabeledDataset data, std::ostream& log) {
  return UotrclMethod(c, c.options<UotrclOptions>(), std::move(data), log);
}

// The TrainConfig of a tiny uotrcl run (3 epochs, 1 of warm-up, 20 % symmetric noise) on the files in
// `data_path` (write_labeled_world of tiny_world()), resolved.
inline TrainConfig tiny_config(const std::string& data_path) {
  TrainConfig c;
  c.method = "uotrcl";
  c.data_path = data_path;
  c.valid_len = 0;
  c.noise_ratio = 0.2;
  c.noise_mode = NoiseMode::Symmetric;
  c.noise_seed = 7;
  c.seed = 1;
  c.batch_size = 50;
  c.num_epochs = 3;
  c.warmup_epoch = 1;
  c.learning_rate = 1e-3;
  c.lr_update = 0;
  UotrclOptions& o = c.options<UotrclOptions>();
  o.hidden_dim = 32;
  o.output_dim = 16;
  o.knn = 12;
  o.lc_eps = 0.1;
  o.rel_eps = 0.1;
  resolve_defaults(c);
  return c;
}

// The study's benchmark: 10 classes, 2000 training pairs, image 128-d / text 64-d features.
inline synth::LabeledWorldConfig study_world(uint64_t seed = 0) {
  synth::LabeledWorldConfig c;
  c.classes = 10;
  c.train_samples = 2000;
  c.valid_samples = 200;
  c.test_samples = 500;
  c.seed = seed;
  return c;
}

// UOT-RCL at the scale of that benchmark (hidden 256, output 64) with the recommended unpublished settings.
inline TrainConfig study_options(double noise_ratio, uint64_t seed = 0) {
  TrainConfig c;
  c.method = "uotrcl";
  c.noise_ratio = noise_ratio;
  c.noise_seed = static_cast<int64_t>(seed + 100);
  c.seed = seed;
  c.batch_size = 100;
  c.num_epochs = 20;
  c.warmup_epoch = 2;
  c.learning_rate = 1e-3;
  c.lr_update = 0;
  c.grad_clip = 0;
  c.eval_batch = 1000;
  UotrclOptions& o = c.options<UotrclOptions>();
  o.hidden_dim = 256;
  o.output_dim = 64;
  o.knn = 100;  // 5 % of 2000
  o.lc_eps = 0.5;
  o.rel_eps = 0.02;
  return c;
}

}  // namespace rematch::train::uotrcl_test
