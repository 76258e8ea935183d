#include "train/methods/bicro/bicro_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_bicro_flags() {
  FlagTable<BicroOptions> t(
      "BiCro (--method bicro; docs/methods/bicro.md)",
      [](TrainConfig& c) -> BicroOptions& { return c.options<BicroOptions>(); },
      [](const TrainConfig& c) -> const BicroOptions& { return c.options<BicroOptions>(); });
  t.real("p_threshold", &BicroOptions::p_threshold,
         "NCR co-divide: a pair is clean iff the peer GMM's clean posterior exceeds it")
      .above(0)
      .below(1)
      .from("`BiCro/train_*.sh --p_threshold 0.5`");
  t.choice<SoftMargin>("soft_margin", &BicroOptions::soft_margin,
                       {{SoftMargin::Linear, "linear"},
                        {SoftMargin::Exponential, "exponential"},
                        {SoftMargin::Sin, "sin"}},
                       "NCR soft margin of a rectified label y: linear (a*y) | exponential (a*(10^y-1)/9) | sin")
      .from("`BiCro/run.py --soft_margin exponential` (no script sets it)");
  t.real("warmup_rate", &BicroOptions::warmup_rate,
         "BiCro warm-up: the share of each batch (its smallest per-pair losses) whose losses train (warmup_sele)")
      .above(0)
      .at_most(1)
      .from("`BiCro/train_*.sh --warmup_rate 0.3` with --preset, `run.py --warmup_rate 0.5` without");
  t.real("noise_tem", &BicroOptions::noise_tem,
         "BiCro soft labels: a consistency label at most this is set to 0 (noise_soft)")
      .at_least(0)
      .below(1)
      .from("`BiCro/train_*.sh --noise_tem 0.5 --noise_train noise_soft` with --preset, `run.py --noise_tem 0.9` without");
  t.choice<std::optional<BicroFit>>(
       "fit_type", &BicroOptions::fit_type, {{std::nullopt, ""}, {BicroFit::Bmm, "bmm"}, {BicroFit::Gmm, "gmm"}},
       "BiCro split of the normalised per-pair losses: bmm (its Beta mixture) | gmm (NCR's Gaussian one)")
      .from("`BiCro/train_*.sh --fit_type bmm` with --preset, `run.py --fit_type gmm` without");
  return finish_table(t.table());
}

}  // namespace

const OptionTable& bicro_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<BicroOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<BicroOptions>(); });
  return table;
}

const OptionTable& bicro_flags() {
  static const OptionTable table = make_bicro_flags();
  return table;
}

std::vector<Default> bicro_defaults() {
  const std::string scripts = "`BiCro/train_f30k.sh`, `train_coco.sh`, `train_cc152k.sh` (identical but for the data)";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 128, "`BiCro/run.py --batch_size 128`"));
  d.push_back(Default::always("tau", 0.05, "unused by bicro (no softmax); recorded as the pairs methods'"));
  d.push_back(Default::always("noise_mode", "caption",
                              "BiCro's data.py is NCR's: `PrecompDataset.__init__` shuffles the images of "
                              "⌊r·N_captions⌋ captions (docs/backbones.md §6.4 (a))"));
  d.push_back(Default::always("warmup_epoch", 10, scripts + ": `--warmup_epoch 10` (also `run.py`'s default)"));
  // Without --preset, `run.py`'s own defaults, as for ncr (docs/methods/bicro.md §1).
  d.push_back(Default::per_preset("warmup_rate", {{"f30k", 0.3}, {"coco", 0.3}, {"cc152k", 0.3}, {"", 0.5}},
                                  scripts + ": `--warmup_rate 0.3`; without --preset `run.py --warmup_rate 0.5`"));
  d.push_back(Default::per_preset("noise_tem", {{"f30k", 0.5}, {"coco", 0.5}, {"cc152k", 0.5}, {"", 0.9}},
                                  scripts + ": `--noise_tem 0.5`; without --preset `run.py --noise_tem 0.9`"));
  d.push_back(Default::per_preset("fit_type", {{"f30k", "bmm"}, {"coco", "bmm"}, {"cc152k", "bmm"}, {"", "gmm"}},
                                  scripts + ": `--fit_type bmm`; without --preset `run.py --fit_type gmm`"));
  d.push_back(Default::always("num_epochs", 40,
                              "`BiCro/run.py --num_epochs 40` (no script sets it; co-training epochs, after the "
                              "warm-up)"));
  d.push_back(Default::always("lr_update", 30,
                              "`BiCro/run.py --lr_update 30`; `co_train.py: main` calls `adjust_learning_rate(opt, "
                              "optimizer, epoch)` with the co-training epoch"));
  d.push_back(Default::always("learning_rate", 2e-4, "`BiCro/run.py --learning_rate 0.0002`"));
  d.push_back(Default::always("grad_clip", 2.0, "`BiCro/run.py --grad_clip 2.0`"));
  d.push_back(Default::always("val_subset", "ncr",
                              "BiCro's data.py is NCR's: `PrecompDataset` dev length `1000 × im_div` "
                              "(docs/backbones.md §6.3)"));
  return d;
}

void check_bicro(const TrainConfig& c) {
  REMATCH_CHECK(c.batch_size >= 2, "--batch_size must be at least 2 for bicro (a batch of one pair has no negative; "
                                   "BiCro's loop stops at one), got ",
                c.batch_size);
}

}  // namespace rematch::train
