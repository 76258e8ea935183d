#include "train/methods/mrl/mrl_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_mrl_flags() {
  FlagTable<MrlOptions> t(
      "MRL (--method mrl; docs/methods/mrl.md)",
      [](TrainConfig& c) -> MrlOptions& { return c.options<MrlOptions>(); },
      [](const TrainConfig& c) -> const MrlOptions& { return c.options<MrlOptions>(); });
  // hidden_dim and output_dim are UOT-RCL's flags too (the same networks); mrl's defaults are in mrl_defaults.
  t.integer("hidden_dim", &MrlOptions::hidden_dim, "MRL MLP width (mid_num)")
      .at_least(1)
      .from("MRL `nets/ImageNet.py`, `nets/TextNet.py` mid_num = 4096");
  t.integer("output_dim", &MrlOptions::output_dim, "MRL common space size")
      .at_least(1)
      .from("MRL `utils/config.py` `--output_dim 512`");
  t.choice<MrlLabelLoss>("label_loss", &MrlOptions::label_loss, {{MrlLabelLoss::Mce, "mce"}, {MrlLabelLoss::Ce, "ce"}},
                         "MRL --loss: mce (robust clustering, the method) | ce (cross-entropy baseline)")
      .from("MRL README command `--loss MCE`");
  t.real("beta", &MrlOptions::beta, "MRL weight of the clustering loss: beta·L_r + (1 − beta)·L_c")
      .at_least(0)
      .at_most(1);
  t.real("tau", &MrlOptions::tau, "MRL temperature of the clustering softmax and the contrastive loss").above(0);
  t.choice<MrlSchedule>("ls", &MrlOptions::ls, {{MrlSchedule::Cos, "cos"}, {MrlSchedule::MultiStep, "multistep"}},
                        "MRL learning-rate schedule: cos (cosine over --num_epochs) | multistep (×0.1 at 200, 400)")
      .from("MRL `utils/config.py` `--ls cos`");
  return finish_table(t.table());
}

}  // namespace

const OptionTable& mrl_flags() {
  static const OptionTable table = make_mrl_flags();
  return table;
}

std::vector<Default> mrl_defaults() {
  const std::string readme = "MRL README (`main_noisy.py --max_epochs 30 --loss MCE --lr 0.0001 --train_batch_size "
                             "100 --beta 0.7`, Wikipedia)";
  const std::string config = "MRL `utils/config.py` default";
  std::vector<Default> d;
  d.push_back(Default::per_preset("num_epochs", {{"wiki", 30}, {"nus", 100}, {"xmedianet", 100}, {"", 100}},
                                  "wiki: " + readme + "; otherwise " + config + " `--max_epochs 100`"));
  d.push_back(Default::always("batch_size", 100, readme + "; " + config));
  d.push_back(Default::always("learning_rate", 1e-4, readme + "; " + config));
  d.push_back(Default::per_preset("beta", {{"wiki", 0.7}, {"nus", 0.5}, {"xmedianet", 0.5}, {"", 0.5}},
                                  "wiki: " + readme + "; otherwise " + config + " `--beta 0.5`"));
  d.push_back(Default::always("tau", 1.0, config + " `--tau 1`"));
  d.push_back(Default::always("warmup_epoch", 0, "MRL has no warm-up (`train(-1)` makes no update)"));
  d.push_back(Default::always("lr_update", 0, "MRL's schedule is --ls (the cosine of `utils/config.py`)"));
  d.push_back(Default::always("grad_clip", 0.0, "MRL does not clip"));
  d.push_back(Default::per_preset("valid_len", {{"wiki", 231}, {"nus", 5000}, {"xmedianet", 4000}, {"", 0}},
                                  "MRL `src/noisydataset.py` valid_len"));
  d.push_back(Default::always("noise_mode", "symmetric",
                              "UOT-RCL's symmetric noise (one label per pair), as its table compares; `mrl` is "
                              "MRL's own per-modality draw (docs/methods/mrl.md §1)"));
  return d;
}

void check_mrl(const TrainConfig& c) {
  REMATCH_CHECK(c.lr_update == 0, "--lr_update must be 0 for mrl (got ", c.lr_update,
                "): MRL's learning rate follows --ls cos | multistep");
  REMATCH_CHECK(c.warmup_epoch == 0, "--warmup_epoch must be 0 for mrl (got ", c.warmup_epoch,
                "): MRL trains with its full loss from the first epoch");
}

}  // namespace rematch::train
