#include "train/methods/decl/decl_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

OptionTable make_decl_flags() {
  FlagTable<DeclOptions> t(
      "DECL (--method decl; docs/methods/decl.md)",
      [](TrainConfig& c) -> DeclOptions& { return c.options<DeclOptions>(); },
      [](const TrainConfig& c) -> const DeclOptions& { return c.options<DeclOptions>(); });
  t.real("lambda1", &DeclOptions::lambda1, "DECL weight of the robust dynamic hinge (RDH) loss")
      .at_least(0)
      .from("DECL `opts.py` `--lambda1 0.8` (methods/decl.md §4)");
  t.real("lambda2", &DeclOptions::lambda2, "DECL weight of the evidential loss's KL term")
      .at_least(0)
      .from("DECL `opts.py` `--lambda2 0.1` (methods/decl.md §3)");
  t.real("eta", &DeclOptions::eta, "DECL annealing of the RDH hardness: max(int(batch_size - eta*step), mu) negatives")
      .at_least(0)
      .from("DECL `opts.py` `--eta 0.025` (methods/decl.md §4)");
  t.integer("mu", &DeclOptions::mu, "DECL fewest RDH negatives (main-stage batches below mu+1 pairs end the epoch)")
      .at_least(1)
      .from("DECL `opts.py` `--mu 5` (methods/decl.md §4)");
  return finish_table(t.table());
}

bool high_noise(const TrainConfig& c) { return c.noise_ratio >= 0.6; }

}  // namespace

const OptionTable& decl_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<DeclOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<DeclOptions>(); });
  return table;
}

const OptionTable& decl_flags() {
  static const OptionTable table = make_decl_flags();
  return table;
}

std::vector<Default> decl_defaults() {
  const std::string scripts = "DECL `train_f30k.sh`, `train_coco.sh`, `train_cc152k.sh`";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 128, "DECL `opts.py` `--batch_size 128` (no script passes one)"));
  d.push_back(Default::always("tau", 0.1,
                              "DECL `opts.py` `--tau 0.1`, the evidence scale e = exp(tanh(s)/τ) (methods/decl.md §2)"));
  d.push_back(Default::always("noise_mode", "image",
                              "DECL `data.py: PrecompDataset` permutes ⌊r·N_img⌋ images among themselves, all captions "
                              "of an image moving together (docs/backbones.md §6.4 (b)); or reads `--noise_file`"));
  // The scripts' comment "noise_ratio:[0.2,0.4,0.6,0.8]---warmup_epoch:[5,5,2,2]" (F30K) and "[2,2,1,1]" (COCO):
  // one rule, the high-noise value from 0.6 on; between the listed ratios (0.5) the low-noise value (ours).
  Default warmup = Default::computed(
      "warmup_epoch",
      [](const TrainConfig& c) {
        if (c.preset == "coco") return Json(high_noise(c) ? 1 : 2);
        if (c.preset == "cc152k") return Json(5);
        return Json(high_noise(c) ? 2 : 5);
      },
      "", scripts + " `warmup_epoch` and their comments `noise_ratio:[0.2,0.4,0.6,0.8]---warmup_epoch:[5,5,2,2]` "
                    "(F30K), `[2,2,1,1]` (COCO); `opts.py` `--warmup_epochs 5` otherwise; a ratio between the "
                    "listed ones (0.5) takes the low-noise value (**ours**)");
  warmup.values = {{"f30k", "5 (noise < 0.6), 2 (noise >= 0.6)"},
                   {"coco", "2 (noise < 0.6), 1 (noise >= 0.6)"},
                   {"cc152k", 5},
                   {"", "5 (noise < 0.6), 2 (noise >= 0.6)"}};
  d.push_back(warmup);
  d.push_back(Default::per_preset("num_epochs", {{"f30k", 40}, {"coco", 20}, {"cc152k", 40}, {"", 40}},
                                  scripts + " `--num_epochs` (40, 20, 40; after the warm-up), `opts.py` 40"));
  d.push_back(Default::per_preset("lr_update", {{"f30k", 20}, {"coco", 10}, {"cc152k", 20}, {"", 20}},
                                  scripts + " `--lr_update`; `train.py: adjust_learning_rate` "
                                            "`lr·0.1^(epoch // lr_update)`, counted from the first main epoch"));
  d.push_back(Default::per_preset("learning_rate", {{"f30k", 2e-4}, {"coco", 5e-4}, {"cc152k", 2e-4}, {"", 2e-4}},
                                  scripts + " `--learning_rate` (0.0002, 0.0005, 0.0002)"));
  d.push_back(Default::always("val_subset", "sgraf",
                              "DECL `data.py` dev length 5,000 (CC152K 1,000) (backbones.md §6.3)"));
  return d;
}

void check_decl(const TrainConfig& c) {
  const DeclOptions& o = c.options<DeclOptions>();
  REMATCH_CHECK(o.mu < c.batch_size, "--mu must be below --batch_size (got --mu ", o.mu, ", --batch_size ",
                c.batch_size, "): the RDH loss takes at most batch_size - 1 negatives");
}

}  // namespace rematch::train
