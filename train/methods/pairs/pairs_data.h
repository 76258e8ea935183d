// The image–caption data of a pairs run (triplet, infonce, rcl, l2rm; docs/methods/shared.md §0.1–§0.2): the
// vocabulary, the train/dev/test precomp splits and the training correspondence (which image row each training
// caption is paired with — mismatched for the noisy-correspondence benchmarks). Everything is read and checked
// before any training starts, so a missing file or a bad flag fails at once.
#pragma once

#include <memory>
#include <string>

#include "train/data/noise.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/methods/train_config.h"

namespace rematch::train {

struct PairsData {
  data::Vocabulary vocab;
  std::unique_ptr<data::PrecompDataset> train, dev, test;
  data::Correspondence correspondence;
};

// Vocabulary: data::find_vocabulary_file (--vocab_path, else <data_path>/vocab, else ./vocab); with
// `add_mask_word` the word <mask> is appended as RCL does. The noise comes from --noise_file, or from
// --noise_mode/--noise_ratio/--noise_seed (image level by default).
PairsData load_pairs_data(const CommonOptions& config, bool add_mask_word, std::ostream& log);

// `<data_path>/<data_name>`, checked to be a folder (an Error naming both flags and the expected layout).
std::string precomp_folder(const CommonOptions& config);

}  // namespace rematch::train
