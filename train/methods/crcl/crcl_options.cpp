#include "train/methods/crcl/crcl_options.h"

#include <numeric>
#include <string>

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

OptionTable make_crcl_flags() {
  FlagTable<CrclOptions> t(
      "CRCL (--method crcl; docs/methods/crcl.md)",
      [](TrainConfig& c) -> CrclOptions& { return c.options<CrclOptions>(); },
      [](const TrainConfig& c) -> const CrclOptions& { return c.options<CrclOptions>(); });
  t.real("alpha", &CrclOptions::alpha, "CRCL: moving-average weight of the correspondence labels")
      .at_least(0)
      .at_most(1)
      .from("CRCL `opts.py --alpha 0.8`, `train.sh alpha=0.8`");
  t.integers("schedules", &CrclOptions::schedules,
             "CRCL: main epochs of each round, e.g. --schedules 5 5 5 30 (a round: --warmup_epoch + these epochs "
             "on a fresh model, the labels kept; sum = --num_epochs)");
  t.on_off("no_confident", &CrclOptions::no_confident,
           "CRCL: keep labels below 0.1 (the official --confident, store_false, zeroes them)")
      .from("CRCL `opts.py --confident` (store_false: on)");
  t.on_off("no_mc", &CrclOptions::no_mc,
           "CRCL: no moving-average labels, y = the batch's p (the official --mc, store_false)")
      .from("CRCL `opts.py --mc` (store_false: on)");
  t.on_off("no_augment", &CrclOptions::no_augment, "CRCL: no region/token augmentation of the training pairs")
      .from("CRCL `data.py` (`a = True`: every training pair augmented)");
  t.real("weight_decay", &CrclOptions::weight_decay, "CRCL AdamW weight decay")
      .at_least(0)
      .from("CRCL `model/CRCL.py` AdamW with PyTorch's default weight decay");
  return finish_table(t.table());
}

}  // namespace

const OptionTable& crcl_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<CrclOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<CrclOptions>(); });
  return table;
}

const OptionTable& crcl_flags() {
  static const OptionTable table = make_crcl_flags();
  return table;
}

std::vector<Default> crcl_defaults() {
  const std::string script = "CRCL `train.sh` (F30K SGR, noise 0.8)";
  const std::string opts = "CRCL `opts.py` default (no script for this data set in the repository)";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 128, "CRCL `opts.py --batch_size 128`"));
  d.push_back(Default::always("tau", 0.05, "CRCL `opts.py --tau 0.05`, `train.sh tau=0.05`"));
  d.push_back(Default::always("warmup_epoch", 2, "CRCL `opts.py --warm_epoch 2`, `train.sh warm_epoch=2`"));
  d.push_back(Default::per_preset("schedules",
                                  {{"f30k", Json::array({5, 5, 5, 30})},
                                   {"coco", Json::array({6, 6, 6, 25})},
                                   {"cc152k", Json::array({6, 6, 6, 25})},
                                   {"", Json::array({6, 6, 6, 25})}},
                                  "f30k: " + script + " `schedules='5,5,5,30'`; coco, cc152k and no preset: " + opts +
                                      " `'6,6,6,25'`"));
  Default epochs = Default::computed(
      "num_epochs",
      [](const TrainConfig& c) {
        const std::vector<int64_t>& s = c.options<CrclOptions>().schedules;
        return Json(std::accumulate(s.begin(), s.end(), int64_t{0}));
      },
      "", "`train.py`: round r runs `schedules[r] + warm_epoch` epochs; the sum of --schedules");
  epochs.values = {{"f30k", "45 (the sum of --schedules)"},
                   {"coco", "43 (the sum of --schedules)"},
                   {"cc152k", "43 (the sum of --schedules)"},
                   {"", "43 (the sum of --schedules)"}};
  d.push_back(epochs);
  d.push_back(Default::always("lr_update", 15, "CRCL `opts.py --lr_update 15`, `train.sh lr_update=15`"));
  d.push_back(Default::always("learning_rate", 5e-4, "CRCL `opts.py --learning_rate .0005` (`train.sh` passes none)"));
  d.push_back(Default::always("noise_mode", "caption",
                              "CRCL `data.py` `noise_type = 'NCR'`: caption-level mismatches (`noise_index/<name>_<r>.npy`, "
                              "one entry per caption)"));
  return d;
}

void check_crcl(const TrainConfig& c) {
  const CrclOptions& o = c.options<CrclOptions>();
  REMATCH_CHECK(!o.schedules.empty(), "--schedules must list at least one round (got none)");
  int64_t total = 0;
  for (int64_t s : o.schedules) {
    REMATCH_CHECK(s >= 1, "--schedules must be epochs >= 1 (got ", s, ")");
    total += s;
  }
  REMATCH_CHECK(total == c.num_epochs, "--num_epochs (", c.num_epochs, ") must equal the sum of --schedules (", total,
                "): give both, or only --schedules");
  REMATCH_CHECK(o.tau > 0, "--tau must be > 0 (got ", o.tau, ")");
}

}  // namespace rematch::train
