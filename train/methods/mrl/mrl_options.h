// The options of the MRL method (mrl_method.h, docs/methods/mrl.md): the flags' typed fields, their table, the
// per-preset defaults (MRL's README command for Wikipedia, `utils/config.py`'s defaults otherwise) and the checks
// across flags.
#pragma once

#include <cstdint>
#include <limits>

#include "tensor/dtype.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"

namespace rematch::train {

// MRL `--loss`: MCE (the robust clustering loss, the method) or CE (plain cross-entropy on the prototype logits:
// with --beta 1, the "CE" baseline of MRL's `utils/config.py` comments).
enum class MrlLabelLoss { Mce, Ce };
// MRL `--ls`: cos (CosineAnnealingLR over --num_epochs, eta_min 0) or multistep (MultiStepLR [200, 400], ×0.1).
enum class MrlSchedule { Cos, MultiStep };

struct MrlOptions {
  // model (docs/methods/mrl.md §2): MRL's mid_num and --output_dim
  int64_t hidden_dim = 4096;
  int64_t output_dim = 512;
  MrlLabelLoss label_loss = MrlLabelLoss::Mce;
  double beta = std::numeric_limits<double>::quiet_NaN();  // L = β Σ_v L_r(v) + (1 − β) L_c (MRL: 0.5)
  double tau = std::numeric_limits<double>::quiet_NaN();  // MCE softmax and contrastive temperature (MRL: 1)
  MrlSchedule ls = MrlSchedule::Cos;
  // No flag: the dtype of the networks and prototypes (float64 for the golden step).
  DType dtype = DType::Float32;
};

const OptionTable& mrl_flags();
std::vector<Default> mrl_defaults();
// --lr_update must stay 0 (MRL's schedule is --ls), no warm-up epochs.
void check_mrl(const TrainConfig& config);

}  // namespace rematch::train
