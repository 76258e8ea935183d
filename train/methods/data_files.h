// The files a `rematch train` run will read, listed and checked without reading them whole (`--dry_run`, issue
// 15 point 10): each must exist, be a regular file and be readable, and an .npy file must start with NumPy's
// magic string. Which files a run reads follows the loaders: the SCAN precomp layout (train/data/
// precomp_dataset.h: `<data_path>/<data_name>/<split>_ims.npy` and `<split>_caps.txt|.tsv` for train, dev and
// --test_split, the vocabulary data::find_vocabulary_file picks), the labelled layout of UOT-RCL (train/data/
// labeled_dataset.h: one HDF5 file, or a folder of `<split>_imgs.npy`, `_texts.npy`, `_labels.npy`), as the
// method's spec says, and every file flag given (FlagKind::File: --noise_file, --word_vectors).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "train/methods/train_config.h"

namespace rematch::train {

struct DataFile {
  std::string role;  // what it is, e.g. "train image features" or "--noise_file"
  std::string path;
};

// The files of a resolved config (resolve_defaults ran), each checked; the first that is missing or unreadable
// is an Error naming its role, the flags that locate it, and the path.
std::vector<DataFile> check_data_files(const TrainConfig& config);

// The data check `rematch train` runs at its start, new run or resume (docs/data.md §5.3): the cheap checks of
// `rematch data check` (headers, shapes, counts; no whole-file reads) on the files this run reads — train, dev,
// --test_split, the vocabulary and --noise_file — in the method's layout. Warnings go to `log`; a problem that
// would stop the run or make it train on other data (a truncated feature file, a count that differs from the
// captions, a noise file whose real ratio differs from its name) is one Error listing each file.
void check_training_data(const TrainConfig& config, std::ostream& log);

}  // namespace rematch::train
