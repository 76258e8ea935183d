#include "train/methods/l2rm/l2rm_options.h"

#include <algorithm>

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

OptionTable make_l2rm_flags() {
  FlagTable<L2rmOptions> t(
      "L2RM (--method l2rm; docs/methods/l2rm.md)",
      [](TrainConfig& c) -> L2rmOptions& { return c.options<L2rmOptions>(); },
      [](const TrainConfig& c) -> const L2rmOptions& { return c.options<L2rmOptions>(); });
  t.real("reg", &L2rmOptions::reg, "L2RM Sinkhorn ε (default 0.01 f30k, 0.07 coco/cc152k)").above(0);
  t.real("rho", &L2rmOptions::rho, "L2RM partial transport mass").above(0).below(1)
      .from("`opt.py` default (supp. Table 5: batch 128)");
  t.real("cost_lr", &L2rmOptions::cost_lr, "L2RM cost-net learning rate").from("L2RM scripts `--lr_cost 2e-6`");
  t.integer("ot_max_iter", &L2rmOptions::ot_max_iter, "Sinkhorn iterations at most")
      .from("`models.py: sinkhorn_log_domain` `numItermax=1000` (methods/l2rm.md §1.5)");
  t.real("ot_tol", &L2rmOptions::ot_tol, "Sinkhorn stop: L2 change of the potential (L2RM's rule)")
      .from("`models.py: sinkhorn_log_domain` `stopThr=1e-3` (methods/l2rm.md §1.5)");
  t.choice<losses::SplitLoss>("split_loss", &L2rmOptions::split_loss,
                              {{losses::SplitLoss::Mean, "mean"}, {losses::SplitLoss::Hardest, "hardest"}},
                              "Per-sample loss of the clean/mismatched split (l2rm, rcsl-nc): mean (L2RM's code) | "
                              "hardest (paper Eq. 4)")
      .from("the code, `hard_negative=\"eval_loss\"` (methods/l2rm.md §1.3)");
  t.choice<losses::RceLabel>("rce_label", &L2rmOptions::rce_label,
                             {{losses::RceLabel::Code, "code"}, {losses::RceLabel::Paper, "paper"}},
                             "L2RM RCE label: code (I + 1e-7) | paper (clipped)")
      .from("the code, `models.py: RCE` (methods/l2rm.md §1.2)");
  t.choice<MaskPositives>("mask_positives", &L2rmOptions::mask_positives,
                          {{MaskPositives::Auto, "auto"}, {MaskPositives::On, "on"}, {MaskPositives::Off, "off"}},
                          "L2RM OT mask of the given pairs: auto (on iff noise is injected: --noise_ratio > 0 or "
                          "--noise_file; so off on CC152K, as the code) | on | off (Table 3's w/o positives masked)")
      .resolved_from("auto")
      .is_ablation();
  t.choice<losses::RematchLoss>("rematch_loss", &L2rmOptions::rematch_loss,
                                {{losses::RematchLoss::SymKl, "sym_kl"},
                                 {losses::RematchLoss::Kl, "kl"},
                                 {losses::RematchLoss::SoftInfoNce, "soft_infonce"},
                                 {losses::RematchLoss::Js, "js"}},
                                "L2RM rematch loss: sym_kl | kl | soft_infonce | js (Table 3's KL and InfoNCE rows)")
      .is_ablation()
      .from("the code, `models.py: sym_KL_Divergence` (methods/l2rm.md §1.6)");
  t.choice<ot::DummyCost>("dummy_costs", &L2rmOptions::dummy_costs,
                          {{ot::DummyCost::L2RMShifted, "shifted"}, {ot::DummyCost::L2RM, "l2rm"}},
                          "L2RM dummy costs: shifted (same plan, float32-safe) | l2rm (ξ = 100 max C)")
      .from("ours: the code's plan without subtracting numbers of size ξ/ε (docs/ot.md §1.3)");
  t.integer("max_reserved", &L2rmOptions::max_reserved,
            "L2RM reconstructed positives per cost update: U{1..max} (default batch/10)");
  t.choice<std::optional<RematchOt>>(
       "rematch_ot", &L2rmOptions::rematch_ot,
       {{std::nullopt, ""}, {RematchOt::Partial, "partial"}, {RematchOt::Full, "full"}},
       "L2RM rematch plan: partial (masked partial OT, mass rho; default) | full (balanced OT, mass 1: Table 3's "
       "w/o partial OT)")
      .is_ablation();
  t.choice<std::optional<CostFunction>>(
       "cost_function", &L2rmOptions::cost_function,
       {{std::nullopt, ""}, {CostFunction::Learned, "learned"}, {CostFunction::Cosine, "cosine"}},
       "L2RM OT cost: learned (f_c, trained on reconstructed pairs; default) | cosine (1 - S, f_c never updated: "
       "Table 3's w/o learnable cost)")
      .is_ablation();
  return finish_table(t.table());
}

}  // namespace

const OptionTable& l2rm_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<L2rmOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<L2rmOptions>(); });
  return table;
}

const OptionTable& l2rm_flags() {
  static const OptionTable table = make_l2rm_flags();
  return table;
}

std::vector<Default> l2rm_defaults() {
  const std::string scripts = "L2RM scripts (`train_f30k.sh`, `tarin_coco.sh` (sic), `train_cc152.sh`)";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 128, "L2RM scripts `--batch_size 128`"));
  d.push_back(Default::always("tau", 0.05, "L2RM `opt.py` default"));
  d.push_back(Default::always("noise_mode", "image",
                              "the L2RM noise files (`noise_index/<name>_<r>.npy`, methods/shared.md §0.2)"));
  d.push_back(Default::per_preset("warmup_epoch", {{"f30k", 5}, {"coco", 10}, {"cc152k", 10}, {"", 5}},
                                  scripts + " `--warmup_epoch` (supp. Table 1)"));
  d.push_back(Default::per_preset("num_epochs", {{"f30k", 35}, {"coco", 20}, {"cc152k", 40}, {"", 35}},
                                  scripts + " `--num_epochs` (after the warm-up)"));
  d.push_back(Default::per_preset("lr_update", {{"f30k", 15}, {"coco", 10}, {"cc152k", 20}, {"", 15}},
                                  scripts + "; `main_L2RM.py: train` `lr·0.1^(epoch // lr_update)`, counted from the "
                                            "first main epoch"));
  d.push_back(Default::per_preset("reg", {{"f30k", 0.01}, {"coco", 0.07}, {"cc152k", 0.07}, {"", 0.01}},
                                  scripts + " `--reg` (supp. D.1)"));
  d.push_back(Default::always("learning_rate", 2e-4, "L2RM scripts `--lr 2e-4`"));
  d.push_back(Default::computed(
      "max_reserved",
      [](const TrainConfig& c) { return Json(std::max<int64_t>(1, c.batch_size / 10)); }, "⌊0.1·batch⌋ (12)",
      "`main_L2RM.py: train` `random.randint(1, int(batch_size*0.1))`"));
  // One rule for the positives mask: on iff this run injects mismatches, i.e. --noise_ratio > 0 or a --noise_file
  // (which overrides generation, data/noise.h). The code's test is `noise_ratio != 0` (docs/methods/l2rm.md §1.5
  // step 4), and there noise_ratio != 0 is exactly when a noise index is loaded or drawn (data.py: `if
  // noise_ratio:`); rematch takes a file whatever the ratio, so the code's meaning is "noise injected", not the
  // number. CC152K carries real noise and injects none (the code even forces noise_ratio = 0 there), so its preset
  // runs with the mask off. config.json records on or off.
  Default mask = Default::computed(
      "mask_positives",
      [](const TrainConfig& c) { return Json(c.noise_ratio > 0 || !c.noise_file.empty() ? "on" : "off"); }, "",
      "`models.py: partial_ot` masks iff `noise_ratio`; `main_L2RM.py` forces `noise_ratio = 0` for cc152k");
  mask.values = {{"f30k", "on iff noise is injected (--noise_ratio > 0 or --noise_file)"},
                 {"coco", "on iff noise is injected"},
                 {"cc152k", "off (no noise injected)"},
                 {"", "on iff noise is injected"}};
  d.push_back(mask);
  d.push_back(Default::always("val_subset", "ncr",
                              "L2RM `data.py` dev length `1000 × im_div` (its log: \"dev data has a size of 1000\"; "
                              "backbones.md §6.3)"));
  d.push_back(Default::always("rematch_ot", "partial", "the method (methods/l2rm.md §1.5); full is Table 3's ablation"));
  d.push_back(Default::always("cost_function", "learned",
                              "the method (methods/l2rm.md §1.4); cosine is Table 3's ablation"));
  return d;
}

void check_l2rm(const TrainConfig& c) {
  const L2rmOptions& o = c.options<L2rmOptions>();
  REMATCH_CHECK(o.max_reserved >= 1 && o.max_reserved <= c.batch_size,
                "--max_reserved must be in [1, batch_size] (got ", o.max_reserved, ")");
}

}  // namespace rematch::train
