#include "train/methods/rcsl/rcsl_options.h"

#include <string>

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

OptionTable make_rcsl_flags() {
  FlagTable<RcslOptions> t(
      "RCSL (--method rcsl | rcsl-nc; docs/methods/rcsl.md)",
      [](TrainConfig& c) -> RcslOptions& { return c.options<RcslOptions>(); },
      [](const TrainConfig& c) -> const RcslOptions& { return c.options<RcslOptions>(); });
  t.integer("embed_size", &RcslOptions::embed_size, "Joint embedding size").at_least(1).from("RCSL `opts.py`");
  t.integer("word_dim", &RcslOptions::word_dim, "Word embedding size").at_least(1).from("RCSL `opts.py`");
  t.real("margin", &RcslOptions::margin, "Triplet margin").at_least(0).from("RCSL `opts.py` (0.2)");
  t.real("tau", &RcslOptions::tau, "Softmax temperature").above(0);
  t.choice<losses::SplitLoss>("split_loss", &RcslOptions::split_loss,
                              {{losses::SplitLoss::Mean, "mean"}, {losses::SplitLoss::Hardest, "hardest"}},
                              "rcsl-nc: L2RM's per-sample loss of the split: mean (code) | hardest (paper Eq. 4)")
      .from("ours (rcsl-nc): L2RM's code (methods/rcsl.md §3.6)");
  t.integer("paired_length", &RcslOptions::paired_length,
            "RCSL: images that keep their captions (required for rcsl)")
      .from("required: `train.sh` loops 500 1000 2000 5000 (images; ×5 = 2.5K … 25K pairs)");
  t.integer("mine_epoch", &RcslOptions::mine_epoch, "RCSL: first epoch of the mining stage (default 25)");
  t.integers("lr_milestones", &RcslOptions::lr_milestones,
             "RCSL: epochs where the learning rate is multiplied by 0.1 (default 15 30 45)");
  t.real("weight_decay", &RcslOptions::weight_decay, "RCSL AdamW weight decay")
      .at_least(0)
      .from("`model.py` AdamW with PyTorch's default weight decay");
  t.choice<BankRefresh>("bank_refresh", &RcslOptions::bank_refresh,
                        {{BankRefresh::Once, "once"}, {BankRefresh::Epoch, "epoch"}},
                        "RCSL memory bank: once (as the code) | epoch")
      .from("`train.py`: the bank is built once, at the first mining epoch");
  t.real("unpaired_keep", &RcslOptions::unpaired_keep,
         "RCSL learning stage: share of unpaired captions kept per epoch (coco 0.2)")
      .at_least(0)
      .at_most(1);
  t.file("word_vectors", &RcslOptions::word_vectors,
         "RCSL: GloVe text file for the word embedding; words it lacks get N(0, 1), as the official code (default: "
         "no file, every word U(-0.1, 0.1), the code's init without GloVe)")
      .from("`train.sh` `init_txt=glove` (GloVe 840B-300d cannot be downloaded here: a file flag)");
  t.on_off("no_augment", &RcslOptions::no_augment, "RCSL: no region/token augmentation")
      .from("the code augments both views (`data.py`)");
  const std::string full = "off: the full method (RCSL Table 6 #1)";
  t.on_off("no_reg", &RcslOptions::no_reg, "RCSL ablation (Table 6 #2): drop L_reg (alignment + uniformity)")
      .is_ablation()
      .from(full);
  t.on_off("no_trl", &RcslOptions::no_trl,
           "RCSL ablation (Table 6 #3, 'w/o L_sdl†'): drop the paired triplet L_trl† of Eq. 5, keep L_reg (the "
           "dagger is L_trl†'s; #8 'w/o L_sdl† & L_rcm' must leave L_reg)")
      .is_ablation()
      .from(full);
  t.on_off("no_rcm_t", &RcslOptions::no_rcm_t,
           "RCSL ablation (Table 6 #4): drop L_rcm^t = L_m(B_t), the pairs (I_i, T'_i) with mined texts (Eq. 7-8)")
      .is_ablation()
      .from(full);
  t.on_off("no_rcm_v", &RcslOptions::no_rcm_v,
           "RCSL ablation (Table 6 #5): drop L_rcm^v = L_m(B_v), the pairs (I'_i, T_i) with mined images")
      .is_ablation()
      .from(full);
  t.on_off("no_rcm", &RcslOptions::no_rcm,
           "RCSL ablation (Table 6 #6, Table 4's 'RCSL w/o RCM'): no mining loss and no memory bank; the stages, "
           "optimizer reset and batches stay (#7: with --no_reg, #8: with --no_trl)")
      .is_ablation()
      .from(full);
  return finish_table(t.table());
}

}  // namespace

const OptionTable& rcsl_flags() {
  static const OptionTable table = make_rcsl_flags();
  return table;
}

std::vector<Default> rcsl_defaults(bool noisy) {
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 256, "`train.sh` `bs=256` (`opts.py` default 128 is overridden)"));
  d.push_back(Default::always("num_epochs", 40, "`opts.py --MaxEpoch 40`"));
  d.push_back(Default::always("mine_epoch", 25, "`opts.py --MineEpoch 25` (optimizer re-created there: `train.py`)"));
  d.push_back(Default::always("learning_rate", 5e-4, "`opts.py --learning_rate .0005`"));
  d.push_back(Default::always("tau", 0.03, "`train.sh` `tau=0.03`, `opts.py`"));
  // The code tests `'coco' in data_path`; a COCO preset or data set name does here.
  Default keep = Default::computed(
      "unpaired_keep",
      [](const TrainConfig& c) {
        const bool coco = c.preset == "coco" || c.data_name.find("coco") != std::string::npos;
        return Json(coco ? 0.2 : 1.0);
      },
      "",
      "`data.py: re_sort` (COCO keeps each unpaired caption with probability 0.2 in the learning stage; the code "
      "tests `'coco' in data_path`, here the preset or --data_name)");
  keep.values = {{"f30k", 1}, {"coco", 0.2}, {"cc152k", 1}, {"", "0.2 if --data_name holds coco, else 1"}};
  d.push_back(keep);
  d.push_back(noisy ? Default::always("warmup_epoch", 5,
                                      "ours: RCSL-NC is not in the public code (methods/rcsl.md §3.6); the warm-up "
                                      "length follows L2RM's F30K warm-up")
                    : Default::always("warmup_epoch", 0, "RCSL has no warm-up"));
  d.push_back(Default::always("lr_update", 0, "RCSL steps its learning rate at --lr_milestones instead"));
  d.push_back(Default::always("lr_milestones", Json::array({15, 30, 45}),
                              "`train.py` `lr_schedules = [lr_update, 2·lr_update, 3·lr_update]`, `opts.py "
                              "--lr_update 15`"));
  // RCSL-NC's noise follows NCR (paper, "Datasets": "following (Huang et al. 2021), we inject unmatched
  // correspondences ... by proportionally shuffling the captions"): caption level (data/noise.h).
  d.push_back(noisy ? Default::always("noise_mode", "caption",
                                      "the RCSL paper, \"Datasets\": noise injected following NCR, by shuffling "
                                      "captions")
                    : Default::always("noise_mode", "image", "unused: rcsl injects no noise"));
  // RCSL draws its semi-paired split with NumPy seed 123 whatever the run's seed (§3.1).
  if (!noisy)
    d.push_back(Default::always("noise_seed", 123, "`data.py` `np.random.seed(123)` before the semi-paired split"));
  return d;
}

void require_rcsl(const TrainConfig& c, bool noisy) {
  const RcslOptions& o = c.options<RcslOptions>();
  if (!noisy) {
    REMATCH_CHECK(o.paired_length >= 0,
                  "--method rcsl needs --paired_length (the number of training images that keep their captions, "
                  "e.g. 500, 1000, 2000 or 5000 as RCSL's train.sh)");
    REMATCH_CHECK(c.noise_ratio == 0 && c.noise_file.empty(),
                  "--method rcsl takes its unpaired data from --paired_length; --noise_ratio/--noise_file are for "
                  "rcsl-nc");
    REMATCH_CHECK(c.warmup_epoch <= 0, "--warmup_epoch is for rcsl-nc (rcsl has no warm-up), got ", c.warmup_epoch);
  }
}

void check_rcsl(const TrainConfig& c, bool noisy) {
  const RcslOptions& o = c.options<RcslOptions>();
  REMATCH_CHECK(o.mine_epoch >= 0 && o.mine_epoch <= c.num_epochs, "--mine_epoch must be in [0, num_epochs = ",
                c.num_epochs, "] (got ", o.mine_epoch, ")");
  if (noisy)
    REMATCH_CHECK(c.warmup_epoch <= o.mine_epoch, "--warmup_epoch (", c.warmup_epoch,
                  ") must not exceed --mine_epoch (", o.mine_epoch, "): rcsl-nc warms up inside the learning stage");
  for (int64_t m : o.lr_milestones) REMATCH_CHECK(m >= 0, "--lr_milestones must be epochs >= 0 (got ", m, ")");
  // Table 6's combinations.
  REMATCH_CHECK(!(o.no_rcm && (o.no_rcm_t || o.no_rcm_v)),
                "--no_rcm already drops both mining terms; give it alone, without --no_rcm_t/--no_rcm_v");
  REMATCH_CHECK(!(o.no_rcm_t && o.no_rcm_v),
                "--no_rcm_t with --no_rcm_v drops the whole mining loss: give --no_rcm instead (it also skips the "
                "memory bank)");
  REMATCH_CHECK(!(o.no_trl && o.no_reg && o.no_rcm),
                "--no_trl, --no_reg and --no_rcm together leave no loss term to train with; drop one of them");
  // Without L_trl† and L_reg the learning stage has no loss: its epochs would change nothing, and the bank would
  // be mined by the untrained model.
  REMATCH_CHECK(!(o.no_trl && o.no_reg) || o.mine_epoch == 0,
                "--no_trl with --no_reg leaves the learning stage (the epochs before --mine_epoch ", o.mine_epoch,
                ") without any loss; drop one of them, or give --mine_epoch 0");
}

}  // namespace rematch::train
