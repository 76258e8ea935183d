// The options of MSCN (--method mscn; mscn_method.h, docs/methods/mscn.md): the SGR/SAF backbone and margin it
// shares with the pairs methods (PairsOptions) and MSCN's own, their flag table, per-preset defaults and checks.
// Every default is the official code's (hhc1997/MSCN, `opt.py` and the README's commands; sources in
// docs/presets.md).
#pragma once

#include <cstdint>
#include <vector>

#include "train/methods/method_spec.h"
#include "train/methods/options.h"
#include "train/methods/pairs/pairs_options.h"

namespace rematch::train {

// --meta_source: where the clean meta pairs come from (docs/methods/mscn.md §4).
//   split  the data folder's meta split, meta_ims.npy and meta_caps.txt (`main_MSCN.py: get_dataset(..., "meta")`);
//   dev    --meta_size captions drawn from the dev split with their images (the README's Flickr30K recipe);
//   train  --meta_size images drawn from the training split with all their captions, taken out of training
//          (`data.py: get_meta_dataset`).
enum class MetaSource { Split, Dev, Train };

struct MscnOptions : PairsOptions {
  int64_t meta_interval = 1;  // a virtual step and meta update every meta_interval-th iteration
  double meta_lr = 17e-6;     // the meta nets' Adam learning rate after the warm-up
  MetaSource meta_source = MetaSource::Split;
  int64_t meta_size = 2900;   // dev: captions drawn; train: images drawn
  int64_t meta_hidden = 64;   // Meta_Sim's hidden width (no flag: `models.py: Meta_Sim(hidden_size=64)`)
};

const OptionTable& mscn_pairs_flags();
const OptionTable& mscn_flags();
std::vector<Default> mscn_defaults();
void check_mscn(const TrainConfig& config);
// --meta_source split: the data folder must hold the meta split (meta_ims.npy and meta_caps.txt or .tsv); an Error
// names the folder, the files and what to do otherwise. The run checks it when it starts, --dry_run too.
void check_meta_split(const std::string& data_path, const std::string& data_name);
// The meta split's files under --meta_source split (checked: check_meta_split), none otherwise (MethodSpec::data_files).
std::vector<DataFile> mscn_data_files(const TrainConfig& config);

}  // namespace rematch::train
