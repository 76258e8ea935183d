#include "train/methods/ablations.h"

#include <string>

#include "tensor/error.h"

namespace rematch::train {
namespace {

bool is_rcsl(const std::string& method) { return method == "rcsl" || method == "rcsl-nc"; }

// A switch given to another method is an error that names the flag, the method and the flag's own method.
void belongs_to(bool given, const char* flag, const TrainConfig& c, bool applies, const char* owner) {
  REMATCH_CHECK(!given || applies, "--", flag, " is an ablation of ", owner, "; --method ", c.method,
                " has no such piece (drop the flag, or use --method ", owner, ")");
}

}  // namespace

void resolve_ablations(TrainConfig& c) {
  const bool l2rm = c.method == "l2rm", rcsl = is_rcsl(c.method), uotrcl = c.method == "uotrcl";
  // L2RM Table 3. mask_positives and rematch_loss existed before with non-empty defaults: given with another
  // value than their default to another method, they are refused the same way.
  belongs_to(!c.rematch_ot.empty(), "rematch_ot", c, l2rm, "l2rm");
  belongs_to(!c.cost_function.empty(), "cost_function", c, l2rm, "l2rm");
  belongs_to(c.mask_positives != "auto", "mask_positives", c, l2rm, "l2rm");
  belongs_to(c.rematch_loss != "sym_kl", "rematch_loss", c, l2rm, "l2rm");
  // RCSL Table 6.
  belongs_to(c.no_reg, "no_reg", c, rcsl, "rcsl (or rcsl-nc)");
  belongs_to(c.no_trl, "no_trl", c, rcsl, "rcsl (or rcsl-nc)");
  belongs_to(c.no_rcm_t, "no_rcm_t", c, rcsl, "rcsl (or rcsl-nc)");
  belongs_to(c.no_rcm_v, "no_rcm_v", c, rcsl, "rcsl (or rcsl-nc)");
  belongs_to(c.no_rcm, "no_rcm", c, rcsl, "rcsl (or rcsl-nc)");
  // UOT-RCL.
  belongs_to(c.no_plc, "no_plc", c, uotrcl, "uotrcl");
  belongs_to(c.no_bhg, "no_bhg", c, uotrcl, "uotrcl");
  belongs_to(!c.confident_set.empty(), "confident_set", c, uotrcl, "uotrcl");

  if (l2rm) {
    if (c.rematch_ot.empty()) c.rematch_ot = "partial";
    if (c.cost_function.empty()) c.cost_function = "learned";
  }
  if (rcsl) {
    REMATCH_CHECK(!(c.no_rcm && (c.no_rcm_t || c.no_rcm_v)),
                  "--no_rcm already drops both mining terms; give it alone, without --no_rcm_t/--no_rcm_v");
    REMATCH_CHECK(!(c.no_rcm_t && c.no_rcm_v),
                  "--no_rcm_t with --no_rcm_v drops the whole mining loss: give --no_rcm instead (it also skips "
                  "the memory bank)");
    const bool no_rcm = c.no_rcm;
    REMATCH_CHECK(!(c.no_trl && c.no_reg && no_rcm),
                  "--no_trl, --no_reg and --no_rcm together leave no loss term to train with; drop one of them");
    // Without L_trl† and L_reg the learning stage has no loss: its epochs would change nothing, and the bank
    // would be mined by the untrained model.
    REMATCH_CHECK(!(c.no_trl && c.no_reg) || c.mine_epoch == 0,
                  "--no_trl with --no_reg leaves the learning stage (the epochs before --mine_epoch ", c.mine_epoch,
                  ") without any loss; drop one of them, or give --mine_epoch 0");
  }
  if (uotrcl) {
    if (c.confident_set.empty()) c.confident_set = "jsd";
    REMATCH_CHECK(!(c.no_plc && c.no_bhg),
                  "--no_plc with --no_bhg leaves no loss after the warm-up (Eq. 19 is L_PLC + λ L_BHG); drop one");
  }
}

}  // namespace rematch::train
