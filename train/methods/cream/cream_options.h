// The options of CREAM (--method cream; cream_method.h, docs/methods/cream.md): the SGR/SAF backbone and the softmax
// temperature it shares with the pairs methods (PairsOptions; --tau is the InfoNCE temperature) and CREAM's own,
// their flag table, per-preset defaults and checks. Every default is the official code's
// (XLearning-SCU/2024-TIP-CREAM, `run.py` and the README's commands; sources in docs/presets.md).
#pragma once

#include <cstdint>
#include <vector>

#include "train/methods/method_spec.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

struct CreamOptions : PairsOptions {
  double p_threshold = 0.5;       // a net calls a pair clean iff its GMM clean posterior exceeds it (`split_prob`)
  int64_t hard_start_epoch = 10;  // co-training epoch from which the hard batch trains (`train_one_epoch`)
  int64_t noisy_start_epoch = 15; // co-training epoch from which the noisy batch trains
};

// The flags of config.options<CreamOptions>(): PairsOptions' (as the cream instances) and CREAM's own.
const OptionTable& cream_pairs_flags();
const OptionTable& cream_flags();
// CREAM's per-preset defaults (the README's commands over `run.py`'s defaults, docs/methods/cream.md §1).
std::vector<Default> cream_defaults();
void check_cream(const TrainConfig& config);

}  // namespace rematch::train
