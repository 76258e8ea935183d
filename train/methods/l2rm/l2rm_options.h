// The options of L2RM (l2rm_method.h, docs/methods/l2rm.md): the SGR/SAF backbone and losses it shares with the
// pairs methods (PairsOptions) and its own, their flag table, defaults and checks. The switches of the ⚠ notes
// (--split_loss, --rce_label, --mask_positives, --rematch_loss, --dummy_costs) default to the code's behaviour;
// Table 3's ablations are --rematch_ot full (w/o partial OT: balanced OT, mass 1), --mask_positives off (w/o
// masking the given pairs), --cost_function cosine (w/o the learnable cost: C = 1 − S, f_c never updated) and
// --rematch_loss kl | soft_infonce (the KL and InfoNCE rows).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "ot/partial.h"
#include "train/losses/retrieval_losses.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

// --mask_positives: auto resolves to on iff noise is injected (--noise_ratio > 0 or a --noise_file).
enum class MaskPositives { Auto, On, Off };
// --rematch_ot: masked partial OT with mass ρ, or balanced OT with mass 1 (Table 3's w/o partial OT).
enum class RematchOt { Partial, Full };
// --cost_function: the learned f_c, or the cosine distance 1 − S (Table 3's w/o learnable cost).
enum class CostFunction { Learned, Cosine };

struct L2rmOptions : PairsOptions {
  double reg = std::numeric_limits<double>::quiet_NaN();  // Sinkhorn ε (λ): 0.01 f30k, 0.07 coco/cc152k
  double rho = 0.1;        // partial transport mass
  double cost_lr = 2e-6;   // cost-net Adam lr
  int64_t ot_max_iter = 1000;
  double ot_tol = 1e-3;    // ‖Δu‖₂ stop, as sinkhorn_log_domain
  losses::SplitLoss split_loss = losses::SplitLoss::Mean;    // mean (code) | hardest (paper Eq. 4)
  losses::RceLabel rce_label = losses::RceLabel::Code;       // code (I + 1e-7) | paper (clip to [ε, 1−ε])
  MaskPositives mask_positives = MaskPositives::Auto;        // resolved to on | off
  losses::RematchLoss rematch_loss = losses::RematchLoss::SymKl;
  ot::DummyCost dummy_costs = ot::DummyCost::L2RMShifted;    // shifted (ξ → 0, same plan) | l2rm (ξ = 100·max C)
  int64_t max_reserved = -1;  // reconstructed positives per cost update: U{1..max}, -1: ⌊0.1·batch⌋
  // Table 3's ablations; unset = the method's own (partial, learned).
  std::optional<RematchOt> rematch_ot;
  std::optional<CostFunction> cost_function;
};

// The flags of config.options<L2rmOptions>(): PairsOptions' (as the l2rm instances) and L2RM's own.
const OptionTable& l2rm_pairs_flags();
const OptionTable& l2rm_flags();
// L2RM's per-preset defaults (its scripts, docs/methods/l2rm.md §1.1) and its checks across flags.
std::vector<Default> l2rm_defaults();
void check_l2rm(const TrainConfig& config);

}  // namespace rematch::train
