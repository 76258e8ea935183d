// The options of the rcsl and rcsl-nc methods (rcsl_method.h; docs/methods/rcsl.md §3.5 for their meaning and
// defaults): the flags' typed fields, their table, the per-preset defaults and the checks across flags, plus
// switches that are no flags. Table 6's ablations drop one term of L = L_trl† + L_reg + L_rcm^t + L_rcm^v:
// --no_reg (#2), --no_trl (#3, "w/o L_sdl†", read as L_trl†: the table's dagger is the one of Eq. (5), and #8
// "w/o L_sdl† & L_rcm" must leave a loss, which only L_reg can be), --no_rcm_t (#4), --no_rcm_v (#5), --no_rcm
// (#6; Table 4's "RCSL w/o RCM"); #7 = --no_reg --no_rcm, #8 = --no_trl --no_rcm. "t" and "v" follow
// Eq. (7)–(8): L_rcm^t = L_m(B_t) on the pairs (I_i, T'_i) with mined texts, L_rcm^v = L_m(B_v) on (I'_i, T_i)
// with mined images. (The ablation paragraph says the opposite — "#4 means only learning with the mined
// texts" — which contradicts the equations; the symbols win.)
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "train/losses/retrieval_losses.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"

namespace rematch::train {

// --bank_refresh: the memory bank built once, at the first mining epoch (the code), or at every mining epoch.
enum class BankRefresh { Once, Epoch };

struct RcslOptions {
  int64_t embed_size = 1024;
  int64_t word_dim = 300;
  double margin = 0.2;  // the triplet margin (hard-coded 0.2 in the code)
  double tau = std::numeric_limits<double>::quiet_NaN();  // 0.03
  losses::SplitLoss split_loss = losses::SplitLoss::Mean;  // rcsl-nc's per-sample loss
  int64_t paired_length = -1;          // rcsl: images that keep their captions (required)
  int64_t mine_epoch = -1;             // first mining epoch (25)
  std::vector<int64_t> lr_milestones;  // ×0.1 at these epochs (15, 30, 45)
  double weight_decay = 0.01;          // AdamW
  BankRefresh bank_refresh = BankRefresh::Once;
  double unpaired_keep = std::numeric_limits<double>::quiet_NaN();  // learning stage: 0.2 coco, 1 f30k
  std::string word_vectors;            // GloVe text file for the embedding init ("" = uniform, said in the log)
  bool no_augment = false;
  // Table 6's ablations.
  bool no_reg = false;    // #2 w/o L_reg
  bool no_trl = false;    // #3 "w/o L_sdl†": w/o L_trl† (Eq. 5)
  bool no_rcm_t = false;  // #4 w/o L_rcm^t = L_m(B_t), the pairs (I_i, T'_i) with mined texts (Eq. 7–8)
  bool no_rcm_v = false;  // #5 w/o L_rcm^v = L_m(B_v), the pairs (I'_i, T_i) with mined images
  bool no_rcm = false;    // #6 w/o L_rcm, Table 4's "RCSL w/o RCM": no mining loss, no memory bank

  // No flags. The baseline of the behaviour test: the same VSE model, data, augmentation and schedule, trained
  // only on the paired captions with only L_trl (no regularisation, no mining).
  bool paired_only_triplet = false;
  // The golden-step test (tests/train/rcsl_golden_step_test.cpp) runs the model in float64 with the text dropout
  // off, as its float64 PyTorch reference does.
  DType dtype = DType::Float32;
  double text_dropout = 0.1;  // EncoderText_gru's Dropout(0.1)
  int64_t bank_block = 400;   // query rows per similarity block of the bank (the code's COCO 400)
};

// The table of config.options<RcslOptions>() (rcsl and rcsl-nc).
const OptionTable& rcsl_flags();
// The per-preset defaults of rcsl (`noisy` false) or rcsl-nc (RCSL's train.sh and opts.py).
std::vector<Default> rcsl_defaults(bool noisy);
// What rcsl requires (--paired_length, no injected noise, no warm-up; nothing for rcsl-nc, `noisy`), and the
// checks across flags: rcsl-nc's warm-up inside the learning stage, --mine_epoch within the run, the ablations'
// combinations that leave a loss. An Error names the flag.
void require_rcsl(const TrainConfig& config, bool noisy);
void check_rcsl(const TrainConfig& config, bool noisy);

}  // namespace rematch::train
