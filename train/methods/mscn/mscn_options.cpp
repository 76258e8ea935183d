#include "train/methods/mscn/mscn_options.h"

#include <filesystem>

#include "tensor/error.h"
#include "train/data/precomp_dataset.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_mscn_flags() {
  FlagTable<MscnOptions> t(
      "MSCN (--method mscn; docs/methods/mscn.md)",
      [](TrainConfig& c) -> MscnOptions& { return c.options<MscnOptions>(); },
      [](const TrainConfig& c) -> const MscnOptions& { return c.options<MscnOptions>(); });
  t.integer("meta_interval", &MscnOptions::meta_interval,
            "MSCN: a virtual step and meta-net update on every meta_interval-th training iteration")
      .at_least(1)
      .from("`MSCN/opt.py --meta_interval 1`");
  t.real("meta_lr", &MscnOptions::meta_lr, "MSCN: the meta nets' Adam learning rate after the warm-up (decays with lr)")
      .above(0)
      .from("`MSCN/opt.py --meta_lr 17e-6`");
  t.choice<MetaSource>("meta_source", &MscnOptions::meta_source,
                       {{MetaSource::Split, "split"}, {MetaSource::Dev, "dev"}, {MetaSource::Train, "train"}},
                       "MSCN meta set: split (<data>/meta_ims.npy + meta_caps.txt) | dev (--meta_size dev captions) | "
                       "train (--meta_size training images, removed from training)")
      .from("`MSCN/main_MSCN.py: main` reads the meta split (`get_dataset(..., \"meta\")`)");
  t.integer("meta_size", &MscnOptions::meta_size,
            "MSCN: captions (--meta_source dev) or images (--meta_source train) drawn for the meta set")
      .at_least(1)
      .from("MSCN README: `meta_len = 2900 # 2% of 145,000` (Flickr30K, drawn from the dev split)");
  return finish_table(t.table());
}

}  // namespace

const OptionTable& mscn_pairs_flags() {
  static const OptionTable table = pairs_flag_table(
      pairs_flags().title,
      [](TrainConfig& c) -> PairsOptions& { return c.options<MscnOptions>(); },
      [](const TrainConfig& c) -> const PairsOptions& { return c.options<MscnOptions>(); });
  return table;
}

const OptionTable& mscn_flags() {
  static const OptionTable table = make_mscn_flags();
  return table;
}

std::vector<Default> mscn_defaults() {
  const std::string opt = "`MSCN/opt.py`";
  std::vector<Default> d;
  d.push_back(Default::always("batch_size", 64, opt + " `--batch_size 64` (the warm-up's loader takes 2 × 64)"));
  d.push_back(Default::always("tau", 0.05, "unused by mscn (no softmax); recorded as the pairs methods'"));
  d.push_back(Default::always("noise_mode", "caption",
                              "MSCN's own mismatches: `MSCN/data.py: PrecompDataset.__init__` shuffles the images of "
                              "⌊r·N_captions⌋ captions, as NCR's (docs/backbones.md §6.4 (a))"));
  d.push_back(Default::always("warmup_epoch", 5, opt + " `--warmup_epoch 5`"));
  d.push_back(Default::always("num_epochs", 50, opt + " `--num_epochs 50` (co-training epochs, after the warm-up)"));
  d.push_back(Default::always("lr_update", 30, opt + " `--lr_update 30`; `main_MSCN.py: train` decays with the "
                                                     "co-training epoch"));
  d.push_back(Default::always("learning_rate", 2e-4, opt + " `--lr 2e-4`"));
  d.push_back(Default::always("grad_clip", 2.0, opt + " `--grad_clip 2.0`"));
  d.push_back(Default::always("val_subset", "ncr",
                              "`MSCN/data.py: PrecompDataset` dev length `1000 × im_div`, as NCR's (docs/backbones.md "
                              "§6.3)"));
  return d;
}

void check_mscn(const TrainConfig& c) {
  REMATCH_CHECK(c.batch_size >= 2, "--batch_size must be at least 2 for mscn (a batch of one pair has no negative; "
                                   "MSCN's loops stop at one), got ",
                c.batch_size);
}

void check_meta_split(const std::string& data_path, const std::string& data_name) {
  const std::string folder = data_path + "/" + data_name;
  const bool images = std::filesystem::exists(folder + "/meta_ims.npy");
  const bool captions =
      std::filesystem::exists(folder + "/meta_caps.txt") || std::filesystem::exists(folder + "/meta_caps.tsv");
  REMATCH_CHECK(images && captions, "--meta_source split: no meta split in ", folder, " (", images ? "" : "meta_ims.npy",
                images || captions ? "" : " and ", captions ? "" : "meta_caps.txt",
                " missing; MSCN's clean meta pairs): write one (`rematch synth --meta_images N`, or the MSCN README's "
                "recipes), or use --meta_source dev or train");
}

std::vector<DataFile> mscn_data_files(const TrainConfig& c) {
  if (c.options<MscnOptions>().meta_source != MetaSource::Split) return {};
  check_meta_split(c.data_path, c.data_name);
  return {{"meta image features", c.data_path + "/" + c.data_name + "/meta_ims.npy"},
          {"meta captions", data::captions_file(c.data_path, c.data_name, "meta")}};
}

}  // namespace rematch::train
