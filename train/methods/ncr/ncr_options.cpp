#include "train/methods/ncr/ncr_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_ncr_flags() {
  FlagTable<NcrOptions> t(
      "NCR (--method ncr; docs/methods/ncr.md)",
      [](TrainConfig& c) -> NcrOptions& { return c.options<NcrOptions>(); },
      [](const TrainConfig& c) -> const NcrOptions& { return c.options<NcrOptions>(); });
  t.real("p_threshold", &NcrOptions::p_threshold,
         "NCR co-divide: a pair is clean iff the peer GMM's clean posterior exceeds it")
      .above(0)
      .below(1)
      .from("`NCR/run.py --p_threshold 0.5`");
  t.choice<SoftMargin>("soft_margin", &NcrOptions::soft_margin,
                       {{SoftMargin::Linear, "linear"},
                        {SoftMargin::Exponential, "exponential"},
                        {SoftMargin::Sin, "sin"}},
                       "NCR soft margin of a rectified label y: linear (a*y) | exponential (a*(10^y-1)/9) | sin")
      .from("`NCR/run.py --soft_margin exponential`");
  return finish_table(t.table());
}

}  // namespace

const OptionTable& ncr_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<NcrOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<NcrOptions>(); });
  return table;
}

const OptionTable& ncr_flags() {
  static const OptionTable table = make_ncr_flags();
  return table;
}

std::vector<Default> ncr_defaults() {
  const std::string readme = "NCR README: `--warmup_epoch 10` (CC152K), `--warmup_epoch 10 --num_epochs 20 --lr_update "
                             "10` (MS-COCO), `--warmup_epoch 5` (Flickr30K), over `NCR/run.py`'s defaults";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 128, "`NCR/run.py --batch_size 128`"));
  d.push_back(Default::always("tau", 0.05, "unused by ncr (NCR has no softmax); recorded as the pairs methods'"));
  d.push_back(Default::always("noise_mode", "caption",
                              "NCR's own mismatches: `NCR/data.py: PrecompDataset.__init__` shuffles the images of "
                              "⌊r·N_captions⌋ captions (docs/backbones.md §6.4 (a))"));
  d.push_back(Default::per_preset("warmup_epoch", {{"f30k", 5}, {"coco", 10}, {"cc152k", 10}, {"", 1}}, readme +
                                  "; without --preset `run.py`'s `--warmup_epoch 1`"));
  d.push_back(Default::per_preset("num_epochs", {{"f30k", 40}, {"coco", 20}, {"cc152k", 40}, {"", 40}},
                                  readme + " (`run.py --num_epochs 40`; co-training epochs, after the warm-up)"));
  d.push_back(Default::per_preset("lr_update", {{"f30k", 30}, {"coco", 10}, {"cc152k", 30}, {"", 30}},
                                  readme + " (`run.py --lr_update 30`); `co_train.py: main` calls "
                                           "`adjust_learning_rate(opt, optimizer, epoch)` with the co-training epoch"));
  d.push_back(Default::always("learning_rate", 2e-4, "`NCR/run.py --learning_rate 0.0002`"));
  d.push_back(Default::always("val_subset", "ncr",
                              "`NCR/data.py: PrecompDataset` dev length `1000 × im_div` (docs/backbones.md §6.3)"));
  return d;
}

void check_ncr(const TrainConfig& c) {
  REMATCH_CHECK(c.batch_size >= 2, "--batch_size must be at least 2 for ncr (a batch of one pair has no negative; "
                                   "NCR's loop stops at one), got ",
                c.batch_size);
}

}  // namespace rematch::train
