// The ablation switches of the papers' tables, one flag per removed piece (issue 15 point 7), each belonging to
// one method:
//   L2RM Table 3    --rematch_ot full (w/o partial OT: balanced OT, mass 1), --mask_positives off (w/o masking
//                   the given pairs), --cost_function cosine (w/o the learnable cost: C = 1 − S, f_c never
//                   updated), --rematch_loss kl | soft_infonce (the KL and InfoNCE rows).
//   RCSL Table 6    --no_reg (#2), --no_trl (#3, "w/o L_sdl†", read as L_trl†: the table's dagger is the one of
//                   Eq. (5), and #8 "w/o L_sdl† & L_rcm" must leave a loss, which only L_reg can be), --no_rcm_t
//                   (#4), --no_rcm_v (#5), --no_rcm (#6; Table 4's "RCSL w/o RCM"); #7 = --no_reg --no_rcm,
//                   #8 = --no_trl --no_rcm. "t" and "v" follow Eq. (7)–(8): L_rcm^t = L_m(B_t) on the pairs
//                   (I_i, T'_i) with mined texts, L_rcm^v = L_m(B_v) on (I'_i, T_i) with mined images. (The
//                   ablation paragraph says the opposite — "#4 means only learning with the mined texts" — which
//                   contradicts the equations; the symbols win.)
//   UOT-RCL         --no_plc (w/o L_PLC), --no_bhg (w/o L_BHG), --confident_set random (𝒢 drawn uniformly from
//                   the training pairs, as many as the JSD selection holds).
// Every other piece of the method stays as it is; the method tests show each flag changes only its piece.
#pragma once

#include "train/methods/train_config.h"

namespace rematch::train {

// Fills the ablation fields' defaults for the config's method (l2rm: partial, learned; uotrcl: jsd) and refuses,
// with an Error naming the flag: a switch given to a method it does not belong to, and combinations that
// contradict each other or leave no loss term. Called by resolve_defaults, which then checks the values against
// their choices as it does every other flag's.
void resolve_ablations(TrainConfig& config);

}  // namespace rematch::train
