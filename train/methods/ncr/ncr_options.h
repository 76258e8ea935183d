// The options of NCR (--method ncr; ncr_method.h, docs/methods/ncr.md): the SGR/SAF backbone and margin it shares
// with the pairs methods (PairsOptions, so `rematch demo` sets the model sizes the same way) and NCR's own, their
// flag table, per-preset defaults and checks. Every default is the official code's (XLearning-SCU/2021-NeurIPS-NCR,
// `NCR/run.py` and the README's commands; sources in docs/presets.md).
#pragma once

#include <cstdint>
#include <vector>

#include "train/methods/method_spec.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

// --soft_margin: how a rectified label y ∈ [0, 1] scales the margin (`NCR/model.py: ContrastiveLoss.forward`):
// linear α·y, exponential α·(10^y − 1)/9, sin α·(sin(πy − π/2)/2 + 1/2).
enum class SoftMargin { Linear, Exponential, Sin };

struct NcrOptions : PairsOptions {
  double p_threshold = 0.5;                       // clean iff the GMM's clean posterior exceeds it (`split_prob`)
  SoftMargin soft_margin = SoftMargin::Exponential;
};

// The flags of config.options<NcrOptions>(): PairsOptions' (as the ncr instances) and NCR's own.
const OptionTable& ncr_pairs_flags();
const OptionTable& ncr_flags();
// NCR's per-preset defaults (the README's commands over `run.py`'s defaults, docs/methods/ncr.md §1).
std::vector<Default> ncr_defaults();
void check_ncr(const TrainConfig& config);

}  // namespace rematch::train
