// The options of DECL (decl_method.h, docs/methods/decl.md): the SGR/SAF backbone it shares with the pairs
// methods (PairsOptions: --module_name, the widths, --margin of the RDH hinge, --tau the evidence scale) and its
// own (--lambda1, --lambda2, --eta, --mu), their flag table, defaults and checks. The names, defaults and
// meanings are those of the official `opts.py` (QinYang79/DECL, `2022-ACMMM-DECL/opts.py`, "our DECL settings").
#pragma once

#include <cstdint>
#include <vector>

#include "train/methods/method_spec.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

struct DeclOptions : PairsOptions {
  double lambda1 = 0.8;  // weight of the robust dynamic hinge (RDH) loss
  double lambda2 = 0.1;  // weight of the KL term of the evidential loss
  double eta = 0.025;    // annealing of the RDH hardness: negatives per query max(⌊B − η·step⌋, μ)
  int64_t mu = 5;        // the fewest negatives the RDH loss keeps (and the smallest main-stage batch, μ + 1)
};

// The flags of config.options<DeclOptions>(): PairsOptions' (as the decl instances) and DECL's own.
const OptionTable& decl_pairs_flags();
const OptionTable& decl_flags();
// DECL's per-preset defaults (its scripts train_f30k.sh, train_coco.sh, train_cc152k.sh and opts.py) and its
// checks across flags.
std::vector<Default> decl_defaults();
void check_decl(const TrainConfig& config);

}  // namespace rematch::train
