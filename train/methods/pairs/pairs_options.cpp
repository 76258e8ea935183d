#include "train/methods/pairs/pairs_options.h"

#include "models/sgraf_config.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

}  // namespace

OptionTable pairs_flag_table(const std::string& title, std::function<PairsOptions&(TrainConfig&)> reach,
                             std::function<const PairsOptions&(const TrainConfig&)> const_reach) {
  FlagTable<PairsOptions> t(title, std::move(reach), std::move(const_reach));
  const std::string opts = "`opts.py` of SGRAF and RCL, L2RM `opt.py`";
  t.choice<models::SimilarityModule>("module_name", &PairsOptions::module_name,
                                     {{models::SimilarityModule::SGR, "SGR"}, {models::SimilarityModule::SAF, "SAF"}},
                                     "SGR | SAF (docs/backbones.md §4.5-4.6)")
      .from("`opts.py --module_name SGR`; the SAF runs pass SAF");
  t.integer("embed_size", &PairsOptions::embed_size, "Joint embedding size").at_least(1).from(opts);
  t.integer("word_dim", &PairsOptions::word_dim, "Word embedding size").at_least(1).from(opts);
  t.integer("sim_dim", &PairsOptions::sim_dim, "Similarity vector size (SGR/SAF)").at_least(1).from(opts);
  t.integer("sgr_step", &PairsOptions::sgr_step, "Graph reasoning steps (SGR)")
      .at_least(1)
      .at_most(static_cast<double>(models::kMaxSgrStep))
      .from(opts);
  t.real("dropout", &PairsOptions::dropout, "Dropout of the text embedding and the self-attention")
      .at_least(0)
      .below(1)
      .from("SGRAF `model.py` (docs/backbones.md §1)");
  t.real("margin", &PairsOptions::margin, "Triplet margin (also the GCE q of --loss gce, as the RCL code)")
      .from("every `opts.py` (`--margin 0.2`)");
  t.choice<TripletNegatives>("triplet_negatives", &PairsOptions::triplet_negatives,
                             {{TripletNegatives::Hardest, "hardest"}, {TripletNegatives::Mean, "mean"}},
                             "hardest (VSE++ max violation) | mean (sum over all negatives)")
      .from("SGRAF `opts.py --max_violation` (store_false: on)");
  t.real("tau", &PairsOptions::tau, "Softmax temperature").above(0);
  t.choice<losses::ComplementaryPhi>("loss", &PairsOptions::loss,
                                     {{losses::ComplementaryPhi::Log, "log"},
                                      {losses::ComplementaryPhi::Tan, "tan"},
                                      {losses::ComplementaryPhi::Abs, "abs"},
                                      {losses::ComplementaryPhi::Exp, "exp"},
                                      {losses::ComplementaryPhi::Gce, "gce"}},
                                     "RCL complementary loss φ: log | tan | abs | exp | gce")
      .from("RCL scripts `loss='log'`");
  t.real("neg_ratio", &PairsOptions::neg_ratio, "RCL: share of negatives per row in (0, 1); otherwise all B-1")
      .from("RCL scripts `ratio=-1` (all negatives)");
  return finish_table(t.table());
}

const OptionTable& pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      "SGR/SAF image-caption methods",  // followed by its methods (method_spec.h: group_title)
      [](TrainConfig& c) -> PairsOptions& { return c.options<PairsOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<PairsOptions>(); });
  return table;
}

namespace {

// What triplet, infonce and rcl share: the batch, the temperature (unused by triplet, recorded all the same) and
// the image-level noise of the published index files.
std::vector<Default> shared_defaults() {
  return {Default::always("batch_size", 128, "every script (`--batch_size 128`)"),
          Default::always("tau", 0.05,
                          "RCL `train_f30k.sh`, `train_coco.sh` `tau=0.05` (unused by triplet). `train_cc152k.sh` says "
                          "`tau=0` and `--alpha 0.`, which the published `opts.py` cannot run (no `--alpha`; τ = 0 "
                          "divides by zero), so CC152K keeps `opts.py`'s 0.05 (**ours**)"),
          Default::always("noise_mode", "image",
                          "RCL/DECL image-level noise, as the L2RM and RCL noise files "
                          "(`noise_index/<name>_<r>.npy`, methods/shared.md §0.2)"),
          Default::always("warmup_epoch", 0, "RCL and SGRAF have no warm-up (`opts.py --warm_step 0`)")};
}

bool f30k_saf(const TrainConfig& c) {
  return c.preset != "coco" && c.preset != "cc152k" && c.options<PairsOptions>().module_name == models::SimilarityModule::SAF;
}

}  // namespace

std::vector<Default> triplet_defaults() {
  std::vector<Default> d = shared_defaults();
  const std::string sgraf = "SGRAF README: F30K SGR `--num_epochs 40 --lr_update 30`, SAF `--num_epochs 30 "
                            "--lr_update 20`; COCO `--num_epochs 20 --lr_update 10`. CC152K: no SGRAF command, "
                            "`opts.py` defaults";
  Default epochs = Default::computed(
      "num_epochs", [](const TrainConfig& c) { return Json(c.preset == "coco" ? 20 : f30k_saf(c) ? 30 : 40); }, "",
      sgraf);
  epochs.values = {{"f30k", "40 (SGR), 30 (SAF)"}, {"coco", 20}, {"cc152k", 40}, {"", "40 (SGR), 30 (SAF)"}};
  d.push_back(epochs);
  Default lr_update = Default::computed(
      "lr_update", [](const TrainConfig& c) { return Json(c.preset == "coco" ? 10 : f30k_saf(c) ? 20 : 30); }, "",
      sgraf);
  lr_update.values = {{"f30k", "30 (SGR), 20 (SAF)"}, {"coco", 10}, {"cc152k", 30}, {"", "30 (SGR), 20 (SAF)"}};
  d.push_back(lr_update);
  d.push_back(Default::always("learning_rate", 2e-4, "SGRAF `opts.py` `.0002`"));
  return d;
}

std::vector<Default> rcl_defaults() {
  std::vector<Default> d = shared_defaults();
  d.push_back(Default::per_preset("num_epochs", {{"f30k", 30}, {"coco", 20}, {"cc152k", 40}, {"", 30}},
                                  "RCL `train_f30k.sh` (`num_epochs=30`), `train_coco.sh` (`--num_epochs 20`), "
                                  "`train_cc152k.sh` (`num_epochs=40`)"));
  d.push_back(Default::per_preset("lr_update", {{"f30k", 15}, {"coco", 10}, {"cc152k", 20}, {"", 15}},
                                  "the same scripts (`lr_update=15`, `--lr_update 10`, `lr_update=20`)"));
  d.push_back(Default::per_preset("learning_rate", {{"f30k", 2e-4}, {"coco", 5e-4}, {"cc152k", 2e-4}, {"", 2e-4}},
                                  "`train_f30k.sh` `lr=0.0002`; `train_coco.sh` passes none, so `opts.py`'s `.0005` "
                                  "applies (methods/rcl.md §2.2 ⚠); `train_cc152k.sh` `lr=0.0002`"));
  return d;
}

}  // namespace rematch::train
