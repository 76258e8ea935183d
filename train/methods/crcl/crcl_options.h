// The options of CRCL (crcl_method.h, docs/methods/crcl.md): the SGR/SAF backbone it shares with the pairs methods
// (PairsOptions: --module_name, the sizes, --tau) and its own, their flag table, per-preset defaults and checks.
// Official code: QinYang79/CRCL, `CRCL_NeurIPS23/opts.py` (flags), `train.sh` (the F30K run), `train.py` (rounds).
#pragma once

#include <cstdint>
#include <vector>

#include "train/methods/method_spec.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

struct CrclOptions : PairsOptions {
  // Moving-average weight of the self-refined correspondence labels, y ← α·y + (1 − α)·p (`opts.py --alpha 0.8`).
  double alpha = 0.8;
  // `opts.py --schedules`: the rounds of `train.py`'s main loop; round r trains warm-up + schedules[r] epochs on a
  // freshly initialised model and optimizer, the labels carried over. Σ schedules = --num_epochs.
  std::vector<int64_t> schedules;
  // `opts.py --confident` (store_false, on): labels below 0.1 set to 0 before the loss.
  bool no_confident = false;
  // `opts.py --mc` (store_false, on): the moving-average labels; off: y = p, the batch's own estimate.
  bool no_mc = false;
  // `data.py` augments every training pair (`a = True`): caption tokens masked/replaced/deleted, regions set to 1e-10.
  bool no_augment = false;
  // `CRCL.py`: torch.optim.AdamW with PyTorch's default weight decay.
  double weight_decay = 0.01;
};

// The flags of config.options<CrclOptions>(): PairsOptions' (the crcl instances) and CRCL's own.
const OptionTable& crcl_pairs_flags();
const OptionTable& crcl_flags();
// CRCL's per-preset defaults (its `train.sh` and `opts.py`, docs/methods/crcl.md §9.4) and its checks across flags.
std::vector<Default> crcl_defaults();
void check_crcl(const TrainConfig& config);

}  // namespace rematch::train
