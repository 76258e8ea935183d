// The options of the UOT-RCL method (uotrcl_method.h, docs/methods/uotrcl.md): the flags' typed fields, their
// table, the per-preset defaults (UOT-RCL §V-B; values the paper does not publish default to the study's choice,
// docs/uotrcl-choices.md) and the checks across flags, plus the solver settings that are no flags. Ablations:
// --no_plc (w/o L_PLC), --no_bhg (w/o L_BHG), --confident_set random (𝒢 drawn uniformly from the training pairs,
// as many as the JSD selection holds).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"

namespace rematch::train {

// When the training targets y of Eq. (9) move: once per epoch from the whole-set pass (our reading), or for
// each batch's pairs from the batch embeddings before the update (the other reading of the paper's text).
enum class TargetUpdate { Epoch, Batch };
TargetUpdate parse_target_update(const std::string& name);  // "epoch" | "batch"
const char* target_update_name(TargetUpdate update);

// --lc_eps_scale: the label-correction ε in cost units, or times the mean cost.
enum class EpsilonScale { Fixed, Mean };
// --rel_cost_norm: the relation OT on C^R / mean(C^R), or on C^R.
enum class CostNorm { Mean, None };
// --confident_set: 𝒢 by the JSD selection (Eq. 5), or as many pairs drawn uniformly (the ablation).
enum class ConfidentSet { Jsd, Random };

struct UotrclOptions {
  // model (docs/methods/uotrcl.md §4.2)
  int64_t hidden_dim = 4096;
  int64_t output_dim = 512;
  // method (docs/methods/uotrcl.md §4.3)
  int64_t confident_per_class = 5;
  int64_t knn = -1;  // 𝒦: 10 wiki, 200 nus, 150 xmedianet; -1: 5 % of the training set
  double gamma = 0.99;
  double lambda_bhg = 0.4;
  double tau1 = 1, tau2 = 1, tau3 = 1;
  double s_start = 0.2, s_end = 0.8;  // transported mass schedule
  double lc_eps = std::numeric_limits<double>::quiet_NaN();   // label-correction OT ε (docs/uotrcl-choices.md)
  int64_t lc_iters = 1000;
  EpsilonScale lc_eps_scale = EpsilonScale::Fixed;
  double lc_corner = 0;  // price of the dummy corner (> 0 removes Eq. 13's slack)
  double rel_eps = std::numeric_limits<double>::quiet_NaN();  // relation OT ε
  int64_t rel_iters = 100;
  CostNorm rel_cost_norm = CostNorm::Mean;
  TargetUpdate target_update = TargetUpdate::Epoch;
  // Ablations: the main-phase terms of Eq. (19) and how 𝒢 is chosen (unset: jsd).
  bool no_plc = false;
  bool no_bhg = false;
  std::optional<ConfidentSet> confident_set;

  // No flags: the solvers' stopping tolerances (L1 row-marginal error), and the dtype of the networks,
  // prototypes, training features, one-hot labels, targets y and corrected labels Ŷ (float64 is for the golden
  // training step, tests/train/uotrcl_golden_step_test.cpp; the feature files are read as float32 and cast).
  double lc_tol = 1e-6;
  double rel_tol = 1e-6;
  DType dtype = DType::Float32;
};

// The table of config.options<UotrclOptions>().
const OptionTable& uotrcl_flags();
std::vector<Default> uotrcl_defaults();
// The checks across flags: the warm-up inside --num_epochs, --lr_update >= 0, a loss left after the ablations.
void check_uotrcl(const TrainConfig& config);

}  // namespace rematch::train
