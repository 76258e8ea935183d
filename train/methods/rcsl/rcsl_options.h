// The settings of the rcsl and rcsl-nc methods (rcsl_method.h), read and checked from a resolved TrainConfig
// (docs/methods/rcsl.md §3.5 for their meaning and defaults), plus switches that are no flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// Everything the method reads from the TrainConfig, plus switches that are no flags.
struct RcslOptions {
  bool noisy_correspondence = false;  // rcsl-nc
  // The baseline of the behaviour test: the same VSE model, data, augmentation and schedule, trained only on
  // the paired captions with only L_trl (no regularisation, no mining).
  bool paired_only_triplet = false;
  int64_t paired_length = -1;  // rcsl: images that keep their captions
  uint64_t split_seed = 123;   // rcsl: --noise_seed, else the code's 123
  int64_t warmup_epochs = 0;   // rcsl-nc
  int64_t num_epochs = 0;
  int64_t mine_epoch = 0;
  int64_t batch_size = 0;
  double learning_rate = 0;
  std::vector<int64_t> lr_milestones;
  double weight_decay = 0.01;
  double grad_clip = 2.0;
  double margin = 0.2;  // the triplet margin (hard-coded 0.2 in the code)
  double tau = 0.03;
  double unpaired_keep = 1.0;
  bool refresh_bank_every_epoch = false;
  bool augment = true;
  // Table 6's ablations (train/methods/ablations.h): which loss terms the steps use.
  bool trl = true;     // L_trl† (Eq. 5); --no_trl
  bool reg = true;     // L_reg (Eq. 6); --no_reg
  bool rcm_t = true;   // L_rcm^t = L_m(B_t), mined texts (Eq. 7–8); --no_rcm_t, --no_rcm
  bool rcm_v = true;   // L_rcm^v = L_m(B_v), mined images; --no_rcm_v, --no_rcm
  std::string word_vectors;
  std::string split_loss = "mean";  // rcsl-nc's per-sample loss
  int64_t embed_size = 1024;
  int64_t word_dim = 300;
  int64_t eval_block = 100;  // rows per encoding block (validation, bank, per-sample losses)
  int64_t bank_block = 400;  // query rows per similarity block of the bank (the code's COCO 400)
  uint64_t seed = 0;
  // No flags: the golden-step test (tests/train/rcsl_golden_step_test.cpp) runs the model in float64 with the
  // text dropout off, as its float64 PyTorch reference does.
  DType dtype = DType::Float32;
  double text_dropout = 0.1;  // EncoderText_gru's Dropout(0.1)
};

// Checks and copies the config's RCSL settings. An Error names the flag: --paired_length missing for rcsl, an
// unresolved default, --warmup_epoch past --mine_epoch, a value out of range.
RcslOptions rcsl_options(const TrainConfig& config);

}  // namespace rematch::train
