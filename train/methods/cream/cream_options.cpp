#include "train/methods/cream/cream_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_cream_flags() {
  FlagTable<CreamOptions> t(
      "CREAM (--method cream; docs/methods/cream.md)",
      [](TrainConfig& c) -> CreamOptions& { return c.options<CreamOptions>(); },
      [](const TrainConfig& c) -> const CreamOptions& { return c.options<CreamOptions>(); });
  t.real("p_threshold", &CreamOptions::p_threshold,
         "CREAM split: a net calls a pair clean iff its GMM clean posterior exceeds it (clean by both: clean, by "
         "one: hard, by none: noisy)")
      .above(0)
      .below(1)
      .from("CREAM `run.py --p_threshold 0.5`");
  t.integer("hard_start_epoch", &CreamOptions::hard_start_epoch,
            "CREAM: co-training epoch from which the hard pairs train (before it the clean loss keeps only the "
            "positives)")
      .at_least(0)
      .from("CREAM `run.py --hard_start_epoch 10`");
  t.integer("noisy_start_epoch", &CreamOptions::noisy_start_epoch,
            "CREAM: co-training epoch from which the noisy pairs train")
      .at_least(0)
      .from("CREAM `run.py --noisy_start_epoch 15`");
  return finish_table(t.table());
}

}  // namespace

const OptionTable& cream_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<CreamOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<CreamOptions>(); });
  return table;
}

const OptionTable& cream_flags() {
  static const OptionTable table = make_cream_flags();
  return table;
}

std::vector<Default> cream_defaults() {
  const std::string readme = "CREAM README: `--num_epochs=40` (Flickr30K, CC152K), `--num_epochs=20` (MS-COCO), "
                             "over `run.py`'s defaults";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 128, "CREAM `run.py --batch_size 128`"));
  d.push_back(Default::always("tau", 0.07,
                              "CREAM `model.py: SGRAF.__init__` builds `InfoNCELoss(temperature=0.07)` (the "
                              "`run.py --temperature 0.07` flag never reaches it)"));
  d.push_back(Default::always("noise_mode", "caption",
                              "CREAM's own mismatches: `data.py: PrecompDataset.__init__` shuffles the images of "
                              "⌊r·N_captions⌋ captions, as NCR's (docs/backbones.md §6.4 (a))"));
  d.push_back(Default::always("warmup_epoch", 5, "CREAM `run.py --warmup_epoch 5` (no README command changes it)"));
  d.push_back(Default::per_preset("num_epochs", {{"f30k", 40}, {"coco", 20}, {"cc152k", 40}, {"", 40}},
                                  readme + " (`run.py --num_epochs 40`; co-training epochs, after the warm-up)"));
  d.push_back(Default::always("lr_update", 10,
                              "CREAM `run.py --lr_update 10`; `train.py: main` calls `adjust_learning_rate(opt, "
                              "optimizer, epoch)` with the co-training epoch"));
  d.push_back(Default::always("learning_rate", 2e-4, "CREAM `run.py --learning_rate 0.0002`"));
  d.push_back(Default::always("grad_clip", 2.0, "CREAM `run.py --grad_clip 2.0`"));
  d.push_back(Default::always("val_subset", "ncr",
                              "CREAM `data.py: PrecompDataset` dev length `1000 × im_div`, as NCR's "
                              "(docs/backbones.md §6.3)"));
  return d;
}

void check_cream(const TrainConfig& c) {
  REMATCH_CHECK(c.batch_size >= 2, "--batch_size must be at least 2 for cream (a batch of one pair has no negative; "
                                   "CREAM's loop stops at one), got ",
                c.batch_size);
  const CreamOptions& o = c.options<CreamOptions>();
  REMATCH_CHECK(o.noisy_start_epoch >= o.hard_start_epoch, "cream: --noisy_start_epoch (", o.noisy_start_epoch,
                ") must be at least --hard_start_epoch (", o.hard_start_epoch,
                "): `train.py: train_one_epoch` trains the noisy pairs only in its last stage, after the hard ones");
}

}  // namespace rematch::train
