// A synthetic labelled cross-modal benchmark (the setting of UOT-RCL / MRL, docs/methods/uotrcl.md): K classes, an
// image feature and a text feature per sample, of different dimensions, with the class the only thing they
// share. Each sample draws a latent z = μ_y + s·ε in R^h around its class mean; the image feature is
// W₂ tanh(W₁ z + b₁) + σ ε and the text feature V₂ relu(V₁ z + c₁) + σ ε — two different random non-linear
// maps, so no fixed linear map takes one modality to the other and a model has to learn both encoders.
// Labels are clean and balanced (sample i has class i mod K before shuffling); label noise is injected by
// the data loader from its own seed, not here.
//
// Files written by write_labeled_world(world, DIR), in the .npy layout of train/data/labeled_dataset.h
// (`load_labeled_npy(DIR/<name>, valid_len)` reads them; the valid split is present, so valid_len is unused):
//   DIR/<name>/<split>_imgs.npy     float32 [N, img_dim]
//   DIR/<name>/<split>_texts.npy    float32 [N, txt_dim]
//   DIR/<name>/<split>_labels.npy   int64 [N], one clean label per pair
// for split = train, valid, test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace rematch::synth {

struct LabeledWorldConfig {
  std::string name = "synth_labeled";
  int64_t classes = 10;
  int64_t train_samples = 2000;
  int64_t valid_samples = 200;
  int64_t test_samples = 500;
  int64_t img_dim = 128;
  int64_t txt_dim = 64;
  int64_t latent_dim = 16;      // h
  int64_t hidden_dim = 64;      // width of both random maps
  double class_spread = 0.9;    // s: within-class std of z; the class means are N(0, I)
  double feature_noise = 0.3;   // σ: per-dimension noise on the mapped features
  uint64_t seed = 0;
};

// Throws rematch::Error naming the first bad field.
void validate(const LabeledWorldConfig& config);

struct LabeledSplit {
  std::string name;  // "train", "valid", "test"
  Tensor images;     // float32 [N, img_dim]
  Tensor texts;      // float32 [N, txt_dim]
  Tensor labels;     // int64 [N], in [0, classes)
};

struct LabeledWorld {
  LabeledWorldConfig config;
  std::vector<LabeledSplit> splits;  // train, valid, test
  const LabeledSplit& split(const std::string& name) const;
};

// Deterministic in the config; each split draws from its own Philox counter range.
LabeledWorld make_labeled_world(const LabeledWorldConfig& config);

// The file of one array: labeled_file(dir, "train", "imgs") = dir/train_imgs.npy.
std::string labeled_file(const std::string& dir, const std::string& split, const std::string& key);

// Writes the files listed above (through temporary files and renames); returns DIR/<name>.
std::string write_labeled_world(const LabeledWorld& world, const std::string& out_dir);

}  // namespace rematch::synth
