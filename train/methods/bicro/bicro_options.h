// The options of BiCro (--method bicro; bicro_method.h, docs/methods/bicro.md): the SGR/SAF backbone and margin it
// shares with the pairs methods (PairsOptions, so `rematch demo` sets the model sizes the same way), the two NCR
// options it keeps (--p_threshold, --soft_margin: the same flags, defaults and choices as ncr's) and its own. Every
// default is the official code's (xu5zhao/BiCro, `run.py` and `train_f30k.sh`, `train_coco.sh`, `train_cc152k.sh`;
// sources in docs/presets.md).
#pragma once

#include <limits>
#include <optional>
#include <vector>

#include "train/methods/method_spec.h"
#include "train/methods/ncr/ncr_options.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

// --fit_type: the mixture of the per-epoch split (`co_train.py: eval_train`): BiCro's own two-component Beta
// mixture (`co_train.py: BetaMixture1D`, what every script runs) or NCR's Gaussian mixture (`run.py`'s default).
enum class BicroFit { Bmm, Gmm };

// The three options the scripts set away from `run.py`'s defaults are unset here (NaN, nullopt) and resolved per
// preset: the scripts' values with --preset, `run.py`'s without (bicro_defaults()).
struct BicroOptions : PairsOptions {
  double p_threshold = 0.5;                          // clean iff the mixture's clean posterior exceeds it
  SoftMargin soft_margin = SoftMargin::Exponential;  // `run.py --soft_margin exponential` (no script sets it)
  // The share of each warm-up batch (its smallest losses) that trains (`warmup_sele`): 0.3 scripts, 0.5 run.py.
  double warmup_rate = std::numeric_limits<double>::quiet_NaN();
  // Soft labels at most this are set to 0 (`--noise_train noise_soft`): 0.5 scripts, 0.9 run.py.
  double noise_tem = std::numeric_limits<double>::quiet_NaN();
  std::optional<BicroFit> fit_type;  // bmm scripts, gmm run.py
};

// The flags of config.options<BicroOptions>(): PairsOptions' (as the bicro instances) and BiCro's own.
const OptionTable& bicro_pairs_flags();
const OptionTable& bicro_flags();
// BiCro's defaults (its three scripts over `run.py`'s defaults, docs/methods/bicro.md §1).
std::vector<Default> bicro_defaults();
void check_bicro(const TrainConfig& config);

}  // namespace rematch::train
